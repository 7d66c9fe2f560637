import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { JournalId, LedgerAccount, type Leg, move } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { decideCredit } from "../../src/domain/Reconciliation.js"
import { Ledger } from "../ledger/Ledger.js"
import { Outbox } from "../outbox/Outbox.js"
import { Tenants } from "../access/Tenants.js"
import { toTransaction, type TransactionRow, Transactions } from "./Transactions.js"
import { HoldStore } from "../transfers/HoldStore.js"
import { TransferStore } from "../transfers/TransferStore.js"
import { MoneyJournal, refundedKobo } from "../../src/domain/MoneyOut.js"
import { toVirtualAccount, type VirtualAccountRow } from "../accounts/VirtualAccounts.js"
import { ACCOUNT_COLUMNS } from "./DepositRows.js"

export interface ReviewDecision {
  readonly decision: "approve" | "reject"
  readonly note: string | null
  /** Approving an unmatched deposit: the account to credit it to. */
  readonly accountRef: string | null
}

/**
 * Review decisions on PendingReview deposits, each in one transaction with its journal, audit entry and event:
 * - a deposit held for risk: approve credits it to its account (review_pending -> customer_funds), reject moves it to
 *   suspense:rejected (owed back to the payer);
 * - an unmatched deposit: approve takes an `accountRef` and credits that account as a normal reconciliation would
 *   (classified against its figures; suspense:unmatched -> customer_funds), reject moves it to suspense:rejected;
 * - a reversal with nothing to reverse posted nothing: the decision is recorded, no money moves.
 * Lock order: the virtual-account row, then the transaction row, then (through the ledger) the guarded balances.
 */
export class Reviews extends Effect.Service<Reviews>()("services/deposits/Reviews", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const transactions = yield* Transactions
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const tenants = yield* Tenants
    const holds = yield* HoldStore
    const { refundsOf } = yield* TransferStore

    const lockAccount = (scope: Scope, where: { readonly id: string } | { readonly accountRef: string }) =>
      sql<VirtualAccountRow>`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
        WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode} AND va.status = 'Active'
          AND ${"id" in where ? sql`va.id = ${where.id}` : sql`va.account_ref = ${where.accountRef}`}
        FOR UPDATE OF va`.pipe(Effect.map((rows) => rows[0]))

    /** The decision's audit entry and `transaction.reviewed` event (the account as the decision left it); the transaction. */
    const recorded = (scope: Scope, reference: string, review: ReviewDecision, actor: string, details: object, account: VirtualAccountRow | null) =>
      Effect.gen(function* () {
        yield* tenants.audit({
          tenantId: scope.tenantId, mode: scope.mode, actor, action: `transaction.review.${review.decision}`, subject: reference,
          details: { note: review.note, ...details }
        })
        const updated = (yield* transactions.findRow(scope.tenantId, scope.mode, reference))!
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: "transaction.reviewed", subjectKey: updated.accountRef ?? updated.nuban,
          data: { transaction: toTransaction(updated), account: account ? toVirtualAccount(account) : null }
        }])
        return toTransaction(updated)
      })

    /**
     * A credited deposit a money rule or flow flagged (its money is in the account): approve clears the flag; reject
     * takes its credit back to suspense:rejected (owed back to the payer), first releasing its hold if one is active,
     * and lowers the account's amount paid. A deposit part of which was already reversed or refunded cannot be
     * rejected whole (409), and one whose money already left the account (settled, paid out) is 400 nothing_available.
     */
    const decideFlagged = (scope: Scope, row: TransactionRow, account: VirtualAccountRow, review: ReviewDecision, actor: string) =>
      Effect.gen(function* () {
        const reference = row.reference
        let after: VirtualAccountRow | undefined
        if (review.decision === "reject") {
          const refunded = refundedKobo(yield* refundsOf(scope, reference))
          if (row.reversedKobo > 0 || refunded > 0) {
            return yield* new Conflict({ code: "flag_not_rejectable", message: `Deposit ${reference} was partly ${row.reversedKobo > 0 ? "reversed" : "refunded"} already; reject it no more, refund what is left instead.` })
          }
          const hold = yield* holds.find(scope, reference, true)
          if (hold?.status === "Held") {
            yield* ledger.post(scope, MoneyJournal.release(reference, hold.seq), move(LedgerAccount.escrow(account.id), LedgerAccount.customerFunds(account.id), hold.heldKobo))
              .pipe(Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`a release cannot overdraw escrow: ${e.message}`)))
            yield* holds.close(scope, reference, "Released")
          }
          const free = yield* ledger.balance(scope, LedgerAccount.customerFunds(account.id))
          const notFree = () => new BadRequest({ code: "nothing_available", message: `Deposit ${reference}'s money has already left the account (settled or paid out); it cannot be rejected.` })
          if (free < row.appliedKobo) return yield* notFree()
          yield* ledger.post(scope, JournalId.review(reference), move(LedgerAccount.customerFunds(account.id), LedgerAccount.rejected, row.appliedKobo))
            .pipe(Effect.catchTag("Overdrawn", () => Effect.fail(notFree())))
          const paid = account.amountPaidKobo - row.appliedKobo
          yield* sql`UPDATE virtual_accounts SET amount_paid_kobo = ${paid} WHERE id = ${account.id}`
          after = { ...account, amountPaidKobo: paid }
        }
        yield* sql`UPDATE transactions SET ${sql.update({
          status: review.decision === "approve" ? "Completed" : "Rejected",
          flagged: false, reviewDecision: review.decision, reviewNote: review.note, reviewedBy: actor
        })}, reviewed_at = now() WHERE id = ${row.id}`
        return yield* recorded(scope, reference, review, actor, { flagged: true, flagReasons: row.flagReasons }, after ?? account)
      })

    const decide = Effect.fn("Reviews.decide")(function* (scope: Scope, reference: string, review: ReviewDecision, actor: string) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const seen = yield* transactions.findRow(scope.tenantId, scope.mode, reference)
        if (!seen) return yield* notFound("transaction", reference)
        const unmatched = seen.virtualAccountId === null
        if (review.accountRef !== null && !(unmatched && seen.kind === "inflow") && review.accountRef !== seen.accountRef) {
          return yield* new BadRequest({ code: "account_ref_not_applicable", message: `Transaction ${reference} is already matched to ${JSON.stringify(seen.accountRef)}; accountRef is only for approving an unmatched deposit.` })
        }
        const approveUnmatched = review.decision === "approve" && unmatched && seen.kind === "inflow"
        if (approveUnmatched && review.accountRef === null) {
          return yield* new BadRequest({ code: "account_ref_required", message: `Transaction ${reference} was paid into an unknown NUBAN: approving it needs the accountRef of the account to credit.` })
        }
        const account = approveUnmatched
          ? yield* lockAccount(scope, { accountRef: review.accountRef! })
          : unmatched ? undefined : yield* lockAccount(scope, { id: seen.virtualAccountId! })
        if (approveUnmatched && !account) return yield* notFound("virtual account", review.accountRef!)
        const row = (yield* transactions.findRow(scope.tenantId, scope.mode, reference, true))!
        if (row.status === "Completed" && row.flagged && account) return yield* decideFlagged(scope, row, account, review, actor)
        if (row.status !== "PendingReview") {
          return yield* new Conflict({ code: "not_pending_review", message: `Transaction ${reference} is ${row.status}, not PendingReview${row.reviewDecision ? " (already reviewed)" : ""} nor flagged for review.` })
        }

        let legs: ReadonlyArray<Leg> = []
        let credited: { readonly account: VirtualAccountRow; readonly set: Record<string, unknown> } | undefined
        if (row.kind === "inflow") {
          const from = unmatched ? LedgerAccount.unmatched : LedgerAccount.reviewPending(row.virtualAccountId!)
          if (review.decision === "reject") legs = move(from, LedgerAccount.rejected, row.amountKobo)
          else {
            const a = account!
            const credit = decideCredit({ expectedAmountKobo: a.expectedAmountKobo, amountPaidKobo: a.amountPaidKobo }, row.amountKobo, false)
            // An approved deposit is a free collection: it first pays off what late reversals left owing (in the same
            // journal, as the reconciler does), and only the rest counts as available.
            const owed = yield* ledger.receivable(scope, "update")
            const recovered = Math.min(row.amountKobo, owed)
            legs = [
              ...move(from, LedgerAccount.customerFunds(a.id), row.amountKobo),
              ...move(LedgerAccount.customerFunds(a.id), LedgerAccount.tenantReceivable, recovered)
            ]
            if (owed > 0 && recovered === owed) yield* ledger.flagReceivable(scope, false)
            credited = {
              account: { ...a, amountPaidKobo: credit.amountPaidAfterKobo },
              set: {
                virtualAccountId: a.id, accountRef: a.accountRef, appliedKobo: row.amountKobo,
                amountPaidAfterKobo: credit.amountPaidAfterKobo, paymentStateAfter: credit.paymentStateAfter,
                ...(unmatched ? { reconciliationStatus: credit.reconciliationStatus, surplusKobo: credit.surplusKobo } : {})
              }
            }
            yield* sql`UPDATE virtual_accounts SET amount_paid_kobo = ${credit.amountPaidAfterKobo}, first_activity_at = COALESCE(first_activity_at, now())
              WHERE id = ${a.id}`
          }
        }
        yield* sql`UPDATE transactions SET ${sql.update({
          ...credited?.set,
          status: review.decision === "approve" ? "Completed" : "Rejected",
          reviewDecision: review.decision, reviewNote: review.note, reviewedBy: actor
        })}, reviewed_at = now() WHERE id = ${row.id}`
        yield* ledger.post(scope, JournalId.review(reference), legs).pipe(Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(e.message)))
        return yield* recorded(scope, reference, review, actor, approveUnmatched ? { accountRef: review.accountRef } : {}, credited?.account ?? null)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { decide } as const
  })
}) {}
