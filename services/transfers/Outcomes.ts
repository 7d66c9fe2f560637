import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import { decideOutcome, FINAL_STATUSES, kindOf, MoneyJournal, transferEventType, transitOf, type TransferOutcome } from "../../src/domain/MoneyOut.js"
import { Ledger } from "../ledger/Ledger.js"
import { Outbox } from "../outbox/Outbox.js"
import { INSIGHTS_ACCOUNT, type InsightsAccountData } from "../outbox/Registry.js"
import { SettlementStore } from "../settlement/SettlementStore.js"
import { HoldStore } from "./HoldStore.js"
import { toTransfer, type TransferRow, TransferStore } from "./TransferStore.js"

export type OutcomeResult = "processed" | "duplicate" | "ignored"

/**
 * A transfer's outcome as the provider reports it (its webhook, or a status check), applied once: the state, the
 * journals (in transit -> provider_clearing; or the money back where it came from), the cap given back for a failed
 * payout, a refund's money held again, and the tenant's `transfer.*` event, all in one transaction. The same outcome
 * again changes nothing.
 */
export class TransferOutcomes extends Effect.Service<TransferOutcomes>()("services/transfers/TransferOutcomes", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* TransferStore
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const holds = yield* HoldStore
    const settlements = yield* SettlementStore

    /** Stages `refund.sent` for a refund the provider accepted, in the caller's transaction. */
    const refundSent = (scope: Scope, merchantTxRef: string) =>
      Effect.gen(function* () {
        const sent = (yield* store.find(scope, merchantTxRef))!
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: "refund.sent", subjectKey: sent.accountRef ?? "transfers",
          data: { depositReference: sent.depositReference, accountRef: sent.accountRef, transfer: toTransfer(sent) }
        }])
      })

    /** Inside the caller's transaction, with the account row (refunds) and the transfer row already locked. */
    const applyLocked = Effect.fn("TransferOutcomes.applyLocked")(function* (
      scope: Scope,
      row: TransferRow,
      outcome: TransferOutcome,
      providerReference: string | null,
      reason: string | null
    ) {
      const kind = kindOf(row.source)
      const decision = decideOutcome(row.status, outcome, row.amountKobo, transitOf(kind, row.virtualAccountId, row.ledgerSource))
      if (decision.effect !== "applied") {
        if (decision.effect === "ignored") {
          yield* Effect.logWarning(`transfer ${row.merchantTxRef} is ${row.status}; the provider's later "${outcome}" was ignored`)
        }
        return decision.effect === "repeat" ? ("duplicate" as const) : ("ignored" as const)
      }
      if (decision.status === "Failed" && kind === "payout" && row.capDay !== null && decision.journals.some((j) => j.step !== "paid")) {
        // A failed payout sent nothing: it no longer counts against its day's cap. Before the journals: a payout's claim
        // locks the day's row, then the available-balance stripes; the same order here, or the two deadlock.
        yield* sql`UPDATE payout_days SET used_kobo = used_kobo - ${row.amountKobo}
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND day = ${row.capDay}::date`
      }
      for (const j of decision.journals) {
        yield* ledger.post(scope, MoneyJournal.outcome(kind, row.merchantTxRef, j.step), j.legs).pipe(
          Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`a transfer outcome cannot overdraw: ${e.message}`))
        )
      }
      const final = FINAL_STATUSES.includes(decision.status)
      yield* store.markOutcome(row.id, decision.status, providerReference, decision.status === "Successful" ? null : reason, final)
      const returned = decision.journals.some((j) => j.step !== "paid")
      if (returned && kind === "refund") {
        // The refund's money is back in the account, held in escrow under the deposit's hold until the tenant acts.
        yield* sql`UPDATE virtual_accounts SET amount_paid_kobo = amount_paid_kobo + ${row.amountKobo} WHERE id = ${row.virtualAccountId}`
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: INSIGHTS_ACCOUNT, subjectKey: row.accountRef!,
          data: { accountId: row.virtualAccountId! } satisfies InsightsAccountData
        }])
        yield* holds.holdReturned(scope, {
          reference: row.depositReference!, virtualAccountId: row.virtualAccountId!, accountRef: row.accountRef!, amountKobo: row.amountKobo,
          reason: `refund ${row.merchantTxRef} ${decision.status === "Failed" ? "failed" : "was reversed"}: its money is held again`
        })
      }
      // The provider reports on a refund whose sending we never recorded (its answer to our call was lost): it had the
      // refund, so the refund was sent. TransferDispatch's finalising step stages this event only for a Pending row.
      if (row.status === "Pending" && kind === "refund" && providerReference !== null) yield* refundSent(scope, row.merchantTxRef)
      // A settlement leg's outcome moves its settlement on (Paid when every leg is; Failed on a last attempt).
      if (kind === "settlement") yield* settlements.legChanged(scope, row.merchantTxRef)
      const after = (yield* store.find(scope, row.merchantTxRef))!
      const type = transferEventType(decision.status)
      if (type !== undefined) {
        yield* outbox.stage([{ tenantId: scope.tenantId, mode: scope.mode, type, subjectKey: row.accountRef ?? "transfers", data: { transfer: toTransfer(after) } }])
      }
      return "processed" as const
    }, (effect) => Effect.catchTag(effect, "SqlError", Effect.die))

    /** Locks what the outcome changes, in the lock order (account row, then transfer row). */
    const lockFor = (scope: Scope, merchantTxRef: string) =>
      Effect.gen(function* () {
        const seen = yield* store.find(scope, merchantTxRef)
        if (!seen) return undefined
        if (seen.virtualAccountId !== null) yield* store.lockAccount(seen.virtualAccountId)
        return yield* store.find(scope, merchantTxRef, true)
      })

    /**
     * In a transaction of its own: the receiver's entry point (the provider's webhook) and the completer's. A report
     * whose amount or destination is not the transfer's (a misrouted report) is logged and ignored.
     */
    const apply = Effect.fn("TransferOutcomes.apply")(function* (
      scope: Scope,
      merchantTxRef: string,
      outcome: TransferOutcome,
      providerReference: string | null,
      reason: string | null,
      reported?: { readonly amountKobo: number; readonly accountNumber: string }
    ) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* lockFor(scope, merchantTxRef)
        if (!row) return "ignored" as const
        if (reported && (reported.amountKobo !== row.amountKobo || reported.accountNumber !== row.accountNumber)) {
          yield* Effect.logError(`the provider reported "${outcome}" for transfer ${merchantTxRef} with ${reported.amountKobo} kobo to ${reported.accountNumber}; the transfer is ${row.amountKobo} kobo to ${row.accountNumber}: ignored`)
          return "ignored" as const
        }
        return yield* applyLocked(scope, row, outcome, providerReference, reason)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { apply, applyLocked, lockFor, refundSent } as const
  })
}) {}
