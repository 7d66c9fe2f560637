import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import type { RealProvider } from "../../src/domain/ProviderRefs.js"

/** A provider_connections row as stored: the credentials sealed, the settings as JSON. */
export interface ConnectionRow {
  readonly tenantId: string
  readonly mode: Mode
  readonly provider: RealProvider
  readonly credentialsSealed: string
  readonly keyHint: string
  readonly settings: unknown
  readonly connectedAt: Date
}

/** The SQL of tenants' provider connections: one function per statement. */
export const makeConnectionStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const select = sql`SELECT tenant_id, mode, provider, credentials_sealed, key_hint, settings, connected_at FROM provider_connections`

  const find = (scope: Scope) => sql<ConnectionRow>`${select} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`

  const allOf = (provider: RealProvider, mode: Mode) => sql<ConnectionRow>`${select} WHERE provider = ${provider} AND mode = ${mode}`

  /** Saves (or replaces) the scope's connection. */
  const upsert = (row: {
    readonly tenantId: string
    readonly mode: Mode
    readonly provider: RealProvider
    readonly credentialsSealed: string
    readonly keyHint: string
    readonly settings: string
    readonly connectedBy: string
  }) =>
    sql`INSERT INTO provider_connections ${sql.insert(row)} ON CONFLICT (tenant_id, mode) DO UPDATE SET provider = EXCLUDED.provider, credentials_sealed = EXCLUDED.credentials_sealed,
        key_hint = EXCLUDED.key_hint, settings = EXCLUDED.settings, connected_at = now(), connected_by = EXCLUDED.connected_by`

  const remove = (scope: Scope) => sql`DELETE FROM provider_connections WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`

  const scopes = () =>
    sql<{ tenantId: string; mode: Mode; provider: RealProvider }>`SELECT tenant_id, mode, provider FROM provider_connections ORDER BY tenant_id, mode`

  /** The scope's virtual accounts on other providers than `provider`, and its transfers still open there. */
  const inUse = (scope: Scope, provider: string) =>
    sql<{ accounts: number; transfers: number }>`SELECT
          (SELECT count(*)::int FROM virtual_accounts WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND provider <> ${provider}) AS accounts,
          (SELECT count(*)::int FROM transfers WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND provider <> ${provider}
             AND status IN ('Pending', 'Processing')) AS transfers`

  return { find, allOf, upsert, remove, scopes, inUse } as const
})
