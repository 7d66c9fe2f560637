import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Settlement } from "../../src/contract/Settlement.js"
import { textArray } from "../../src/db/PgArray.js"
import type { Scope } from "../../src/domain/Mode.js"
import { type LegTransferStatus, type SettlementStatus, settlementStatusOf } from "../../src/domain/Settlement.js"
import { Outbox } from "../outbox/Outbox.js"

interface SettlementRow {
  readonly id: string
  readonly mode: Scope["mode"]
  readonly accountRef: string
  readonly netKobo: number
  readonly status: SettlementStatus
  readonly reasonCode: string | null
  readonly reason: string | null
  readonly createdAt: Date
  readonly completedAt: Date | null
}

interface LegRow {
  readonly settlementId: string
  readonly legNo: number
  readonly kind: "sub_merchant" | "platform_fee" | "tenant"
  readonly subMerchantRef: string | null
  readonly bps: number | null
  readonly flatKobo: number | null
  readonly amountKobo: number
  readonly transferRef: string
  readonly attempts: number
  readonly status: LegTransferStatus
  readonly accountNumber: string
  readonly bankCode: string
  readonly accountName: string
}

const toSettlement = (s: SettlementRow, legs: ReadonlyArray<LegRow>): Settlement => ({
  id: s.id,
  accountRef: s.accountRef,
  netKobo: s.netKobo,
  status: s.status,
  reasonCode: s.reasonCode,
  reason: s.reason,
  legs: legs.map((l) => ({
    legNo: l.legNo, kind: l.kind, subMerchantRef: l.subMerchantRef, bps: l.bps, flatKobo: l.flatKobo, amountKobo: l.amountKobo,
    merchantTxRef: l.transferRef, status: l.status, attempts: l.attempts, accountNumber: l.accountNumber, bankCode: l.bankCode,
    accountName: l.accountName
  })),
  createdAt: s.createdAt.toISOString(),
  completedAt: s.completedAt?.toISOString() ?? null,
  mode: s.mode
})

/**
 * The SQL of settlements and their legs, and the one step every leg outcome takes (`legChanged`): the settlement's
 * status follows its legs, with `settlement.paid` / `settlement.failed` staged once when it gets there.
 */
export class SettlementStore extends Effect.Service<SettlementStore>()("services/settlement/SettlementStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    const selectSettlements = sql`SELECT s.id, s.mode, va.account_ref, s.net_kobo, s.status, s.reason_code, s.reason, s.created_at, s.completed_at
      FROM settlements s JOIN virtual_accounts va ON va.id = s.virtual_account_id`

    const legsOf = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<LegRow>)
        : sql<LegRow>`SELECT l.settlement_id, l.leg_no, l.kind, sm.reference AS sub_merchant_ref, l.bps, l.flat_kobo, l.amount_kobo,
              l.transfer_ref, l.attempts, t.status, t.account_number, t.bank_code, t.account_name
            FROM settlement_legs l
            JOIN transfers t ON t.tenant_id = l.tenant_id AND t.mode = l.mode AND t.merchant_tx_ref = l.transfer_ref
            LEFT JOIN sub_merchants sm ON sm.id = l.sub_merchant_id
            WHERE l.settlement_id = ANY(${textArray(ids)}::text[]) ORDER BY l.settlement_id, l.leg_no`.pipe(Effect.orDie)

    const withLegs = (rows: ReadonlyArray<SettlementRow>) =>
      Effect.map(legsOf(rows.map((r) => r.id)), (legs) => {
        const byId = new Map<string, Array<LegRow>>()
        for (const l of legs) byId.set(l.settlementId, [...(byId.get(l.settlementId) ?? []), l])
        return rows.map((r) => toSettlement(r, byId.get(r.id) ?? []))
      })

    const get = (scope: Scope, id: string) =>
      sql<SettlementRow>`${selectSettlements} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.id = ${id}`.pipe(
        Effect.orDie,
        Effect.flatMap(withLegs),
        Effect.map((s) => s[0])
      )

    /** Newest first; `ids` narrows it to those settlements (a run's answer). */
    const list = (scope: Scope, limit: number, afterId: string | undefined, ids?: ReadonlyArray<string>) =>
      sql<SettlementRow>`${selectSettlements} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode}
        ${ids === undefined ? sql`` : sql`AND s.id = ANY(${textArray(ids)}::text[])`}
        ${afterId === undefined ? sql`` : sql`AND (s.created_at, s.id) < (SELECT created_at, id FROM settlements WHERE id = ${afterId})`}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit}`.pipe(Effect.orDie, Effect.flatMap(withLegs))

    const idOf = (scope: Scope, id: string) =>
      sql<{ id: string }>`SELECT id FROM settlements WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`

    const stageEvent = (scope: Scope, type: string, settlement: Settlement) =>
      outbox.stage([{ tenantId: scope.tenantId, mode: scope.mode, type, subjectKey: settlement.accountRef, data: { settlement } }])

    /**
     * After the transfer `merchantTxRef` changed state, in the caller's transaction (account and transfer rows locked):
     * when it is a leg's latest attempt, the settlement's status follows its legs, and reaching Paid or Failed stages
     * its event. An earlier attempt's transfer (a retry replaced it) changes nothing.
     */
    const legChanged = (scope: Scope, merchantTxRef: string) =>
      Effect.gen(function* () {
        const [leg] = yield* sql<{ settlementId: string }>`SELECT settlement_id FROM settlement_legs
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND transfer_ref = ${merchantTxRef}`
        if (!leg) return
        const [current] = yield* sql<{ status: SettlementStatus }>`SELECT status FROM settlements WHERE id = ${leg.settlementId} FOR UPDATE`
        const legs = yield* legsOf([leg.settlementId])
        const status = settlementStatusOf(legs)
        if (status === current!.status) return
        const final = status === "Paid" || status === "Failed"
        yield* sql`UPDATE settlements SET status = ${status}, completed_at = ${final ? sql`now()` : sql`NULL`} WHERE id = ${leg.settlementId}`
        if (final) {
          const settlement = (yield* get(scope, leg.settlementId))!
          yield* stageEvent(scope, status === "Paid" ? "settlement.paid" : "settlement.failed", settlement)
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { get, list, idOf, legChanged, stageEvent } as const
  })
}) {}
