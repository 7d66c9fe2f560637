import { Schema } from "effect"
import { Transaction } from "../../src/contract/Deposits.js"
import { VirtualAccount } from "../../src/contract/Accounts.js"
import type { DepositFacts } from "../../src/domain/Automation.js"

/**
 * What rules and flows read of a `deposit.reconciled` event's data: the fields `depositFactsOf` reads, with the
 * catalogue's schemas for them (src/contract/Events.ts `DepositData`; the other fields are not decoded). Decoding the
 * whole deposit and account cost the planner about 30 us an event on the service's main thread (issue 33, the heavy
 * bench's profile).
 */
export const ReconciledFactsData = Schema.Struct({
  transaction: Transaction.pick("reference", "accountRef", "amountKobo", "riskScore", "status", "reconciliationStatus"),
  account: Schema.NullOr(VirtualAccount.pick("expectedAmountKobo", "overpayment", "deficit"))
})
export type ReconciledData = typeof ReconciledFactsData.Type
export const decodeReconciledFacts = Schema.decodeUnknownEither(ReconciledFactsData)

/**
 * The facts of a reconciled deposit, from its `deposit.reconciled` event (the account as this deposit left it); none
 * for what rules and flows do not judge: reversals, inflows into an unknown NUBAN, and anything neither credited nor
 * awaiting review.
 */
export const depositFactsOf = (data: ReconciledData): DepositFacts | undefined => {
  const t = data.transaction
  const a = data.account
  if (!a || t.accountRef === null || t.reconciliationStatus === "Reversal") return undefined
  if (t.status !== "Completed" && t.status !== "PendingReview") return undefined
  const credited = t.status === "Completed"
  return {
    reference: t.reference,
    accountRef: t.accountRef,
    amountKobo: t.amountKobo,
    riskScore: t.riskScore,
    credited,
    expectedAmountKobo: a.expectedAmountKobo,
    // The account's overpayment after this deposit, as far as this deposit made it (an earlier overpayment does not
    // make the whole of a later deposit surplus beyond its own amount).
    surplusKobo: credited && a.expectedAmountKobo !== null ? Math.min(t.amountKobo, a.overpayment) : 0,
    deficitAfterKobo: a.expectedAmountKobo === null ? 0 : a.deficit
  }
}
