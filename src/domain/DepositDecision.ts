import { LedgerAccount, move, type Leg } from "./Ledger.js"
import { matchNames } from "./NameMatch.js"
import { decideCredit, decideReversal, paymentStateOf, type AccountFigures, type PaymentState, type ReconciliationStatus } from "./Reconciliation.js"
import { scoreRisk, type RiskAssessment } from "./Risk.js"

export type TransactionStatus = "Completed" | "PendingReview" | "Rejected" | "Reversed"

export interface AccountContext {
  readonly id: string
  readonly figures: AccountFigures
  readonly customerName: string
}

export interface DepositOutcome {
  readonly status: TransactionStatus
  readonly reconciliationStatus: ReconciliationStatus
  readonly risk: RiskAssessment
  /** What this deposit moved on the account's running balance (credited, or reversed). */
  readonly appliedKobo: number
  readonly surplusKobo: number
  readonly amountPaidAfterKobo: number | null
  readonly paymentStateAfter: PaymentState | null
  readonly legs: ReadonlyArray<Leg>
}

const NO_RISK: RiskAssessment = { score: 0, reasons: [] }

export interface InflowInput {
  readonly account: AccountContext | null
  readonly amountKobo: number
  readonly senderName: string | null
  readonly duplicate: boolean
  readonly inflowsToAccountInWindow: number
  readonly accountsPaidByPayerInWindow: number
  readonly riskThreshold: number
}

/**
 * Classifies an inflow and scores its risk. At or over the threshold the deposit is held for review: classified as
 * if credited, posted to the account's review hold, and not counted in amountPaidKobo until approved.
 */
export const decideInflow = (i: InflowInput): DepositOutcome => {
  if (i.account === null) {
    return {
      status: "PendingReview", reconciliationStatus: "Unmatched", risk: NO_RISK, appliedKobo: 0, surplusKobo: 0,
      amountPaidAfterKobo: null, paymentStateAfter: null,
      legs: move(LedgerAccount.providerClearing, LedgerAccount.unmatched, i.amountKobo)
    }
  }
  const a = i.account
  const risk = scoreRisk({
    nameMatch: i.senderName && a.customerName ? matchNames(i.senderName, a.customerName) : null,
    inflowsToAccountInWindow: i.inflowsToAccountInWindow,
    accountsPaidByPayerInWindow: i.accountsPaidByPayerInWindow
  })
  const credit = decideCredit(a.figures, i.amountKobo, i.duplicate)
  if (risk.score >= i.riskThreshold) {
    return {
      status: "PendingReview", reconciliationStatus: credit.reconciliationStatus, risk, appliedKobo: 0, surplusKobo: credit.surplusKobo,
      amountPaidAfterKobo: a.figures.amountPaidKobo, paymentStateAfter: paymentStateOf(a.figures),
      legs: move(LedgerAccount.providerClearing, LedgerAccount.reviewHold(a.id), i.amountKobo)
    }
  }
  return {
    status: "Completed", reconciliationStatus: credit.reconciliationStatus, risk, appliedKobo: i.amountKobo, surplusKobo: credit.surplusKobo,
    amountPaidAfterKobo: credit.amountPaidAfterKobo, paymentStateAfter: credit.paymentStateAfter,
    legs: move(LedgerAccount.providerClearing, LedgerAccount.customerFunds(a.id), i.amountKobo)
  }
}

/** A reversal lowers the running balance by what is there to reverse; an unknown NUBAN goes to review with no posting. */
export const decideReversalOutcome = (account: AccountContext | null, amountKobo: number): DepositOutcome => {
  if (account === null) {
    return {
      status: "PendingReview", reconciliationStatus: "Unmatched", risk: NO_RISK, appliedKobo: 0, surplusKobo: 0,
      amountPaidAfterKobo: null, paymentStateAfter: null, legs: []
    }
  }
  const r = decideReversal(account.figures, amountKobo)
  return {
    status: "Completed", reconciliationStatus: "Reversal", risk: NO_RISK, appliedKobo: r.reversedKobo, surplusKobo: 0,
    amountPaidAfterKobo: r.amountPaidAfterKobo, paymentStateAfter: r.paymentStateAfter,
    legs: move(LedgerAccount.customerFunds(account.id), LedgerAccount.providerClearing, r.reversedKobo)
  }
}
