import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import type { OnboardingStatus, ProviderCredentials, TenantRow } from "./Tenants.js"

/** A tenant_providers row as stored: the webhook secret still sealed. */
export type SealedProviderRow = Omit<ProviderCredentials, "webhookSecret"> & { webhookSecretSealed: string }

/** The SQL of tenants, their providers, their initial balance rows and the audit log: one function per statement. */
export const makeTenantStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertTenant = (row: { readonly id: string; readonly name: string }) => sql`INSERT INTO tenants ${sql.insert(row)}`

  const insertProvider = (row: {
    readonly tenantId: string
    readonly mode: Mode
    readonly provider: string
    readonly merchantId: string
    readonly webhookSecretSealed: string
  }) => sql`INSERT INTO tenant_providers ${sql.insert(row)}`

  const insertBalances = (rows: ReadonlyArray<{ readonly tenantId: string; readonly mode: Mode; readonly account: string; readonly balanceKobo: number }>) =>
    sql`INSERT INTO ledger_balances ${sql.insert(rows)}`

  const find = (tenantId: string) =>
    sql<TenantRow>`SELECT id, name, onboarding_status, risk_threshold, created_at FROM tenants WHERE id = ${tenantId}`

  const list = () => sql<TenantRow>`SELECT id, name, onboarding_status, risk_threshold, created_at FROM tenants ORDER BY created_at DESC`

  /** Sets the onboarding status (and its details, when given): the tenant's id, or nothing when there is no such tenant. */
  const setOnboarding = (tenantId: string, status: OnboardingStatus, detailsJson: string | null) =>
    sql<{ id: string }>`
        UPDATE tenants SET onboarding_status = ${status},
          onboarding_details = COALESCE(${detailsJson}::jsonb, onboarding_details)
        WHERE id = ${tenantId} RETURNING id`

  const providerOf = (tenantId: string, mode: Mode) =>
    sql<SealedProviderRow>`
        SELECT tenant_id, mode, provider, merchant_id, webhook_secret_sealed FROM tenant_providers
        WHERE tenant_id = ${tenantId} AND mode = ${mode}`

  const providerByMerchantId = (merchantId: string) =>
    sql<SealedProviderRow>`
        SELECT tenant_id, mode, provider, merchant_id, webhook_secret_sealed FROM tenant_providers
        WHERE merchant_id = ${merchantId}`

  const insertAudit = (row: {
    readonly tenantId: string
    readonly mode: Mode | null
    readonly actor: string
    readonly action: string
    readonly subject: string | null
    readonly details: string | null
  }) => sql`INSERT INTO audit_log ${sql.insert(row)}`

  const insertAuditMany = (rows: ReadonlyArray<Parameters<typeof insertAudit>[0]>) => sql`INSERT INTO audit_log ${sql.insert(rows)}`

  return { insertTenant, insertProvider, insertBalances, find, list, setOnboarding, providerOf, providerByMerchantId, insertAudit, insertAuditMany } as const
})
