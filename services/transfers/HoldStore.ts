import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Hold } from "../../src/contract/Transfers.js"
import type { Scope } from "../../src/domain/Mode.js"
import { direct } from "../../src/db/Direct.js"
import { keyList } from "../../src/db/KeyProbe.js"

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

/** A hold to place: the deposit, the hold's `seq` (one more than the deposit's last) and what it escrows. */
export interface NewHold {
  readonly reference: string
  readonly virtualAccountId: string
  readonly accountRef: string
  readonly seq: number
  readonly heldKobo: number
  readonly reason: string | null
  readonly actor: string
}

const HOLD_COLUMNS = "reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_at, released_at"

/**
 * The scope's holds of several deposits, by reference, locked (in reference order) when `lock`: one probe of the key per
 * reference (src/db/KeyProbe.ts), however many holds the tenant has.
 */
export const holdsOf = (sql: SqlClient.SqlClient, scope: Scope, references: ReadonlyArray<string>, lock: boolean) =>
  sql<HoldRow>`SELECT h.* FROM ${keyList(sql, references)} CROSS JOIN LATERAL (
      SELECT ${sql.literal(HOLD_COLUMNS)} FROM holds WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = k.key
      ${lock ? sql`FOR UPDATE` : sql``}) h
    ORDER BY h.reference`

/** The SQL of escrow holds (one row per deposit): one function per statement. */
export class HoldStore extends Effect.Service<HoldStore>()("services/transfers/HoldStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const selectHolds = sql`SELECT ${sql.literal(HOLD_COLUMNS)} FROM holds`

    const find = (scope: Scope, reference: string, lock = false) =>
      direct(sql<HoldRow>`${selectHolds} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference} ${lock ? sql`FOR UPDATE` : sql``}`).pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** The scope's holds of several deposits, locked when `lock` (`holdsOf`). */
    const findMany = (scope: Scope, references: ReadonlyArray<string>, lock = false) => direct(holdsOf(sql, scope, references, lock)).pipe(Effect.orDie)

    /** Places (or places again, with the next `seq`) each deposit's hold (each reference once) in one statement. */
    const placeMany = (scope: Scope, holds: ReadonlyArray<NewHold>) =>
      holds.length === 0 ? Effect.void : direct(sql`INSERT INTO holds (tenant_id, mode, reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_by)
        SELECT ${scope.tenantId}, ${scope.mode}, u.reference, u.virtual_account_id, u.account_ref, u.seq, u.held_kobo, 'Held', u.reason, u.actor
        FROM json_to_recordset(${JSON.stringify(holds.map((h) => ({
          reference: h.reference, virtual_account_id: h.virtualAccountId, account_ref: h.accountRef, seq: h.seq, held_kobo: h.heldKobo, reason: h.reason, actor: h.actor
        })))}::json) AS u(reference text, virtual_account_id text, account_ref text, seq int, held_kobo int8, reason text, actor text)
        ORDER BY u.reference
        ON CONFLICT (tenant_id, mode, reference) DO UPDATE SET seq = EXCLUDED.seq, held_kobo = EXCLUDED.held_kobo, status = 'Held',
          reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = now(), released_at = NULL`).pipe(Effect.asVoid, Effect.orDie)

    /** Places (or places again, with the next `seq`) the deposit's hold. */
    const place = (scope: Scope, h: NewHold) => placeMany(scope, [h])

    const close = (scope: Scope, reference: string, status: "Released" | "Refunded") =>
      direct(sql`UPDATE holds SET status = ${status}, released_at = now() WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference}`)
        .pipe(Effect.asVoid, Effect.orDie)

    /**
     * A refund's money came back (failed or reversed): it is held again under the deposit's hold, with the next `seq`
     * (so its release posts a journal of its own), on top of what an active hold already keeps.
     */
    const holdReturned = (scope: Scope, h: { reference: string; virtualAccountId: string; accountRef: string; amountKobo: number; reason: string }) =>
      direct(sql`INSERT INTO holds (tenant_id, mode, reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_by)
        VALUES (${scope.tenantId}, ${scope.mode}, ${h.reference}, ${h.virtualAccountId}, ${h.accountRef}, 1, ${h.amountKobo}, 'Held', ${h.reason}, 'system')
        ON CONFLICT (tenant_id, mode, reference) DO UPDATE SET seq = holds.seq + 1, status = 'Held', reason = EXCLUDED.reason, released_at = NULL,
          held_kobo = CASE WHEN holds.status = 'Held' THEN holds.held_kobo ELSE 0 END + EXCLUDED.held_kobo`).pipe(Effect.asVoid, Effect.orDie)

    /** The account's active holds that money rules and payment flows placed (a flow's `release` releases these, not a person's). */
    const activeAutomationHolds = (scope: Scope, accountRef: string) =>
      direct(sql<{ reference: string; heldKobo: number }>`SELECT reference, held_kobo FROM holds
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account_ref = ${accountRef} AND status = 'Held'
          AND (created_by LIKE 'rule:%' OR created_by LIKE 'flow:%')
        ORDER BY created_at, reference`).pipe(Effect.orDie)

    return { find, findMany, place, placeMany, close, holdReturned, activeAutomationHolds } as const
  })
}) {}
