import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import type { Scope } from "../../src/domain/Mode.js"
import { Inbox } from "../deposits/Inbox.js"
import { Tenants } from "../access/Tenants.js"
import { Connections } from "./Connections.js"
import { eventOf } from "./InboundCredit.js"
import { accountNumberOf } from "./ProviderCredits.js"
import { Providers } from "./Providers.js"
import { outageLog } from "../../src/OutageLog.js"
import { keyList } from "../../src/db/KeyProbe.js"

/**
 * Which of a provider's references the scope's inbox already holds: one probe of the inbox's key per reference
 * (src/db/KeyProbe.ts), however many deposits the tenant has taken.
 */
export const inboxHas = (sql: SqlClient.SqlClient, scope: Scope, provider: string, references: ReadonlyArray<string>) =>
  sql<{ providerReference: string }>`SELECT x.provider_reference FROM ${keyList(sql, references)} CROSS JOIN LATERAL (
    SELECT provider_reference FROM inbound_events
    WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND provider = ${provider} AND provider_reference = k.key OFFSET 0) x`

export interface SyncResult {
  /** Credits the provider listed in the window. */
  readonly found: number
  /** Of those, the ones our inbox lacked and now holds (the webhook never came). */
  readonly recorded: number
  /** The ones the inbox already had (a webhook or an earlier sync brought them). */
  readonly known: number
}

/**
 * Missed-webhook recovery (DESIGN.md): lists a connection's successful dedicated-account credits over a window and
 * puts any the inbox lacks into it, exactly as the webhook would have (same provider reference, same payload), so the
 * inbox's unique key makes every repeat a no-op. The inbox sweeper publishes the new rows within seconds and the
 * reconciler takes them from there; nothing else differs from a webhook's credit.
 */
export class ProviderSync extends Effect.Service<ProviderSync>()("services/providers/ProviderSync", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const providers = yield* Providers
    const connections = yield* Connections
    const inbox = yield* Inbox
    const tenants = yield* Tenants
    const config = yield* AppConfigTag

    const sync = Effect.fn("ProviderSync.sync")(function* (scope: Scope, window?: { readonly from?: Date; readonly to?: Date }) {
      const connected = yield* providers.connected(scope)
      if (!connected) return { found: 0, recorded: 0, known: 0 } satisfies SyncResult
      const now = yield* Clock.currentTimeMillis
      const to = window?.to ?? new Date(now)
      const from = window?.from ?? new Date(now - config.providerSyncWindowHours * 3_600_000)
      const c = connected.connection
      const listed = yield* connected.adapter.listCredits(from, to)
      const references = [...new Set(listed.map((l) => l.reference))]
      // Only what the inbox lacks is fetched in detail (a call each at Monnify) and inserted.
      const have = references.length === 0 ? [] : yield* inboxHas(sql, scope, c.provider, references).pipe(Effect.orDie)
      const known = new Set(have.map((h) => h.providerReference))
      const { merchantId } = yield* tenants.providerFor(scope.tenantId, scope.mode).pipe(Effect.orDie)
      const rows = []
      for (const l of listed.filter((x, i) => !known.has(x.reference) && listed.findIndex((y) => y.reference === x.reference) === i)) {
        const credit = yield* l.detail
        if (credit === undefined) continue
        const nuban = (yield* Effect.provideService(accountNumberOf(c, credit), SqlClient.SqlClient, sql)) ?? "0000000000"
        const event = eventOf(merchantId, credit, nuban)
        rows.push({ tenantId: scope.tenantId, mode: scope.mode, provider: c.provider, providerReference: event.sessionId, kind: "inflow" as const, accountNumber: nuban, payload: event })
      }
      const inserted = rows.length === 0 ? [] : yield* inbox.insertMany(rows)
      const recorded = inserted.filter((r) => r !== undefined).length
      const result: SyncResult = { found: references.length, recorded, known: references.length - recorded }
      yield* sql`INSERT INTO provider_sync_runs ${sql.insert({
        tenantId: scope.tenantId, mode: scope.mode, provider: c.provider, windowFrom: from, windowTo: to, ...result
      })}`.pipe(Effect.orDie)
      if (recorded > 0) {
        yield* Effect.logWarning(`provider sync: ${recorded} ${c.provider} credit(s) of tenant ${scope.tenantId} (${scope.mode}) never came by webhook; recorded now`)
      }
      return result
    })

    /** One pass over every connection; a connection that fails is logged and left for the next pass. */
    const syncAll = Effect.fn("ProviderSync.syncAll")(function* () {
      for (const s of yield* connections.scopes()) {
        yield* sync({ tenantId: s.tenantId, mode: s.mode }).pipe(
          Effect.catchAll((e) => Effect.logWarning(`provider sync of tenant ${s.tenantId} (${s.mode}) failed: ${e.reason}; the next pass tries again`))
        )
      }
    })

    return { sync, syncAll } as const
  })
}) {}

/** The sync job: every PROVIDER_SYNC_INTERVAL_MS (0: off), over the last PROVIDER_SYNC_WINDOW_HOURS. */
export const ProviderSyncLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    if (config.providerSyncIntervalMs === 0) return
    const job = yield* ProviderSync
    const outages = yield* outageLog("provider sync")
    yield* job.syncAll().pipe(
      Effect.zipLeft(outages.succeeded()),
      Effect.catchAllCause((cause) => outages.failed(cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(config.providerSyncIntervalMs))),
      Effect.delay(Duration.millis(config.providerSyncIntervalMs)),
      Effect.forkScoped
    )
  })
)
