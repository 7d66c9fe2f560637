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
 * The SQL of settlements and their legs (and of a run: its lease, its candidates, its claims and retries), and the one
 * step every leg outcome takes (`legChanged`): the settlement's status follows its legs, with `settlement.paid` /
 * `settlement.failed` staged once when it gets there.
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

    const stageEvent = (scope: Scope, type: `settlement.${"paid" | "failed" | "skipped"}`, settlement: Settlement) =>
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

    // The run's statements (services/settlement/Settlements.ts, SettlementClaims.ts).

    /** Takes the tenant's run lease; false when another run holds it. */
    const takeLease = (scope: Scope, leaseMs: number) =>
      sql<{ n: number }>`
        WITH up AS (
          INSERT INTO settlement_settings (tenant_id, mode, run_lease_until) VALUES (${scope.tenantId}, ${scope.mode}, now() + make_interval(secs => ${leaseMs / 1000}))
          ON CONFLICT (tenant_id, mode) DO UPDATE SET run_lease_until = EXCLUDED.run_lease_until
            WHERE settlement_settings.run_lease_until IS NULL OR settlement_settings.run_lease_until < now()
          RETURNING 1)
        SELECT count(*)::int AS n FROM up`.pipe(Effect.map((r) => r[0]!.n > 0), Effect.orDie)

    const renewLease = (scope: Scope, leaseMs: number) =>
      sql`UPDATE settlement_settings SET run_lease_until = now() + make_interval(secs => ${leaseMs / 1000})
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(Effect.asVoid, Effect.orDie)

    const releaseLease = (scope: Scope) =>
      sql`UPDATE settlement_settings SET run_lease_until = NULL, last_run_at = now() WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** The tenants and modes with autoSettle, a settlement account and no run under way, the longest unsettled first. */
    const autoSettleDue = () => sql<{ tenantId: string; mode: Scope["mode"] }>`SELECT tenant_id, mode FROM settlement_settings
      WHERE auto_settle AND account_number IS NOT NULL AND bank_code IS NOT NULL
        AND (run_lease_until IS NULL OR run_lease_until < now())
      ORDER BY last_run_at NULLS FIRST, tenant_id, mode`.pipe(Effect.orDie)

    /** The accounts that may be swept (fully paid, overpaid or open) and have free money (`f.free_kobo`). */
    const sweepableWithFreeMoney = (scope: Scope) =>
      sql`FROM virtual_accounts va
        CROSS JOIN LATERAL (SELECT -COALESCE(sum(e.amount_kobo), 0)::bigint AS free_kobo FROM ledger_entries e
          WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode AND e.account = 'customer_funds:' || va.id) f
        WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode}
          AND (va.expected_amount_kobo IS NULL OR va.amount_paid_kobo >= va.expected_amount_kobo) AND f.free_kobo > 0`

    /** Accounts that may be swept and hold at least the minimum of free money, oldest first. */
    const candidates = (scope: Scope, minPayoutKobo: number, limit: number) =>
      sql<{ id: string; freeKobo: number }>`SELECT va.id, f.free_kobo ${sweepableWithFreeMoney(scope)} AND f.free_kobo >= ${minPayoutKobo}
        ORDER BY va.created_at, va.id LIMIT ${limit}`.pipe(Effect.orDie)

    /** How many sweepable accounts hold some free money, but less than the minimum: held back. */
    const heldBackCount = (scope: Scope, minPayoutKobo: number) =>
      minPayoutKobo <= 1
        ? Effect.succeed(0)
        : sql<{ n: number }>`SELECT count(*)::int AS n ${sweepableWithFreeMoney(scope)} AND f.free_kobo < ${minPayoutKobo}`.pipe(
          Effect.map((r) => r[0]!.n),
          Effect.orDie
        )

    /** The account a claim settles, locked (the first lock of every step that moves its money). */
    const lockAccount = (virtualAccountId: string) =>
      sql<{ accountRef: string; expectedAmountKobo: number | null; amountPaidKobo: number; subMerchantRef: string | null }>`
        SELECT account_ref, expected_amount_kobo, amount_paid_kobo, sub_merchant_ref FROM virtual_accounts WHERE id = ${virtualAccountId} FOR UPDATE`

    /** The account's latest settlement's status and reason. */
    const latestOf = (virtualAccountId: string) =>
      sql<{ status: string; reasonCode: string | null }>`SELECT status, reason_code FROM settlements
        WHERE virtual_account_id = ${virtualAccountId} ORDER BY created_at DESC, id DESC LIMIT 1`

    const insertSkipped = (scope: Scope, id: string, virtualAccountId: string, netKobo: number, code: string, reason: string) =>
      sql`INSERT INTO settlements (id, tenant_id, mode, virtual_account_id, net_kobo, status, reason_code, reason, completed_at)
        VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${virtualAccountId}, ${netKobo}, 'Skipped', ${code}, ${reason}, now())`

    const insertProcessing = (scope: Scope, id: string, virtualAccountId: string, netKobo: number) =>
      sql`INSERT INTO settlements (id, tenant_id, mode, virtual_account_id, net_kobo, status)
        VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${virtualAccountId}, ${netKobo}, 'Processing')`

    const insertLeg = (scope: Scope, leg: {
      readonly settlementId: string; readonly legNo: number; readonly kind: LegRow["kind"]; readonly subMerchantId: string | null
      readonly bps: number | null; readonly flatKobo: number | null; readonly amountKobo: number; readonly sourceAccount: string; readonly transferRef: string
    }) =>
      sql`INSERT INTO settlement_legs (settlement_id, leg_no, tenant_id, mode, kind, sub_merchant_id, bps, flat_kobo, amount_kobo, source_account, transfer_ref)
        VALUES (${leg.settlementId}, ${leg.legNo}, ${scope.tenantId}, ${scope.mode}, ${leg.kind}, ${leg.subMerchantId}, ${leg.bps},
          ${leg.flatKobo}, ${leg.amountKobo}, ${leg.sourceAccount}, ${leg.transferRef})`

    /** The legs whose latest transfer failed or was reversed, of the settlements still Processing or Failed, oldest first. */
    const failedLegs = (scope: Scope) =>
      sql<{
        settlementId: string; legNo: number; kind: string; subMerchantId: string | null; amountKobo: number; sourceAccount: string
        transferRef: string; attempts: number; virtualAccountId: string; accountRef: string; accountNumber: string; bankCode: string
      }>`SELECT l.settlement_id, l.leg_no, l.kind, l.sub_merchant_id, l.amount_kobo, l.source_account, l.transfer_ref, l.attempts,
          s.virtual_account_id, va.account_ref, t.account_number, t.bank_code
        FROM settlements s JOIN settlement_legs l ON l.settlement_id = s.id
        JOIN transfers t ON t.tenant_id = l.tenant_id AND t.mode = l.mode AND t.merchant_tx_ref = l.transfer_ref
        JOIN virtual_accounts va ON va.id = s.virtual_account_id
        WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.status IN ('Processing', 'Failed')
          AND t.status IN ('Failed', 'Reversed')
        ORDER BY s.created_at, l.leg_no`.pipe(Effect.orDie)

    const lockSettlement = (id: string) => sql`SELECT 1 FROM settlements WHERE id = ${id} FOR UPDATE`

    const lockLeg = (settlementId: string, legNo: number) =>
      sql<{ transferRef: string; attempts: number }>`SELECT transfer_ref, attempts FROM settlement_legs
        WHERE settlement_id = ${settlementId} AND leg_no = ${legNo} FOR UPDATE`

    /** A leg's retry: its new transfer, one more attempt, and its settlement Processing again. */
    const legRetried = (settlementId: string, legNo: number, transferRef: string) =>
      sql`UPDATE settlement_legs SET transfer_ref = ${transferRef}, attempts = attempts + 1 WHERE settlement_id = ${settlementId} AND leg_no = ${legNo}`

    const reopen = (id: string) => sql`UPDATE settlements SET status = 'Processing', completed_at = NULL WHERE id = ${id}`

    return {
      get, list, idOf, legChanged, stageEvent, takeLease, renewLease, releaseLease, autoSettleDue, candidates, heldBackCount, lockAccount,
      latestOf, insertSkipped, insertProcessing, insertLeg, failedLegs, lockSettlement, lockLeg, legRetried, reopen
    } as const
  })
}) {}
