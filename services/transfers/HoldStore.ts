import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Hold } from "../../src/contract/Transfers.js"
import type { Scope } from "../../src/domain/Mode.js"

export interface HoldRow {
  readonly reference: string
  readonly virtualAccountId: string
  readonly accountRef: string
  readonly seq: number
  readonly heldKobo: number
  readonly status: Hold["status"]
  readonly reason: string | null
  readonly createdAt: Date
  readonly releasedAt: Date | null
}

export const toHold = (r: HoldRow): Hold => ({
  reference: r.reference,
  accountRef: r.accountRef,
  heldKobo: r.heldKobo,
  status: r.status,
  reason: r.reason,
  createdAt: r.createdAt.toISOString(),
  releasedAt: r.releasedAt?.toISOString() ?? null
})

/** The SQL of escrow holds (one row per deposit): one function per statement. */
export class HoldStore extends Effect.Service<HoldStore>()("services/transfers/HoldStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const find = (scope: Scope, reference: string, lock = false) =>
      sql<HoldRow>`SELECT reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_at, released_at FROM holds
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference} ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** Places (or places again, with the next `seq`) the deposit's hold. */
    const place = (scope: Scope, h: { reference: string; virtualAccountId: string; accountRef: string; seq: number; heldKobo: number; reason: string | null; actor: string }) =>
      sql`INSERT INTO holds (tenant_id, mode, reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_by)
        VALUES (${scope.tenantId}, ${scope.mode}, ${h.reference}, ${h.virtualAccountId}, ${h.accountRef}, ${h.seq}, ${h.heldKobo}, 'Held', ${h.reason}, ${h.actor})
        ON CONFLICT (tenant_id, mode, reference) DO UPDATE SET seq = EXCLUDED.seq, held_kobo = EXCLUDED.held_kobo, status = 'Held',
          reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = now(), released_at = NULL`.pipe(Effect.asVoid, Effect.orDie)

    const close = (scope: Scope, reference: string, status: "Released" | "Refunded") =>
      sql`UPDATE holds SET status = ${status}, released_at = now() WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference}`
        .pipe(Effect.asVoid, Effect.orDie)

    /**
     * A refund's money came back (failed or reversed): it is held again under the deposit's hold, with the next `seq`
     * (so its release posts a journal of its own), on top of what an active hold already keeps.
     */
    const holdReturned = (scope: Scope, h: { reference: string; virtualAccountId: string; accountRef: string; amountKobo: number; reason: string }) =>
      sql`INSERT INTO holds (tenant_id, mode, reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_by)
        VALUES (${scope.tenantId}, ${scope.mode}, ${h.reference}, ${h.virtualAccountId}, ${h.accountRef}, 1, ${h.amountKobo}, 'Held', ${h.reason}, 'system')
        ON CONFLICT (tenant_id, mode, reference) DO UPDATE SET seq = holds.seq + 1, status = 'Held', reason = EXCLUDED.reason, released_at = NULL,
          held_kobo = CASE WHEN holds.status = 'Held' THEN holds.held_kobo ELSE 0 END + EXCLUDED.held_kobo`.pipe(Effect.asVoid, Effect.orDie)

    /** The account's active holds that money rules and payment flows placed (a flow's `release` releases these, not a person's). */
    const activeAutomationHolds = (scope: Scope, accountRef: string) =>
      sql<{ reference: string; heldKobo: number }>`SELECT reference, held_kobo FROM holds
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account_ref = ${accountRef} AND status = 'Held'
          AND (created_by LIKE 'rule:%' OR created_by LIKE 'flow:%')
        ORDER BY created_at, reference`.pipe(Effect.orDie)

    return { find, place, close, holdReturned, activeAutomationHolds } as const
  })
}) {}
