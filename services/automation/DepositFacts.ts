import type { Transaction } from "../../src/contract/Deposits.js"
import type { VirtualAccount } from "../../src/contract/Accounts.js"
import type { DepositFacts } from "../../src/domain/Automation.js"

/** What a `deposit.reconciled` event carries that rules and flows read. */
export interface ReconciledData {
  readonly transaction: Transaction
  readonly account: VirtualAccount | null
}

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
