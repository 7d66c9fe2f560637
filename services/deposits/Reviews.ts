import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { JournalId, LedgerAccount, type Leg, move } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { decideCredit } from "../../src/domain/Reconciliation.js"
import { Ledger } from "../Ledger.js"
import { Outbox } from "../Outbox.js"
import { Tenants } from "../Tenants.js"
import { toTransaction, Transactions } from "../Transactions.js"
import { toVirtualAccount, type VirtualAccountRow } from "../VirtualAccounts.js"
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

    const lockAccount = (scope: Scope, where: { readonly id: string } | { readonly accountRef: string }) =>
      sql<VirtualAccountRow>`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
        WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode} AND va.status = 'Active'
          AND ${"id" in where ? sql`va.id = ${where.id}` : sql`va.account_ref = ${where.accountRef}`}
        FOR UPDATE OF va`.pipe(Effect.map((rows) => rows[0]))

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
        if (row.status !== "PendingReview") {
          return yield* new Conflict({ code: "not_pending_review", message: `Transaction ${reference} is ${row.status}, not PendingReview.` })
        }

        let legs: ReadonlyArray<Leg> = []
        let credited: { readonly account: VirtualAccountRow; readonly set: Record<string, unknown> } | undefined
        if (row.kind === "inflow") {
          const from = unmatched ? LedgerAccount.unmatched : LedgerAccount.reviewPending(row.virtualAccountId!)
          if (review.decision === "reject") legs = move(from, LedgerAccount.rejected, row.amountKobo)
          else {
            const a = account!
            const credit = decideCredit({ expectedAmountKobo: a.expectedAmountKobo, amountPaidKobo: a.amountPaidKobo }, row.amountKobo, false)
            legs = move(from, LedgerAccount.customerFunds(a.id), row.amountKobo)
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
        yield* tenants.audit({
          tenantId: scope.tenantId, mode: scope.mode, actor, action: `transaction.review.${review.decision}`, subject: reference,
          details: { note: review.note, ...(approveUnmatched ? { accountRef: review.accountRef } : {}) }
        })
        const updated = (yield* transactions.findRow(scope.tenantId, scope.mode, reference))!
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: "transaction.reviewed", subjectKey: updated.accountRef ?? updated.nuban,
          data: { transaction: toTransaction(updated), account: credited ? toVirtualAccount(credited.account) : null }
        }])
        return toTransaction(updated)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { decide } as const
  })
}) {}
