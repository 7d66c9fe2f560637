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
 * Classifies an inflow and scores its risk. At or over the threshold the deposit waits for review: classified as if
 * credited, posted to the account's review_pending, and not counted in amountPaidKobo until approved.
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
      legs: move(LedgerAccount.providerClearing, LedgerAccount.reviewPending(a.id), i.amountKobo)
    }
  }
  return {
    status: "Completed", reconciliationStatus: credit.reconciliationStatus, risk, appliedKobo: i.amountKobo, surplusKobo: credit.surplusKobo,
    amountPaidAfterKobo: credit.amountPaidAfterKobo, paymentStateAfter: credit.paymentStateAfter,
    legs: move(LedgerAccount.providerClearing, LedgerAccount.customerFunds(a.id), i.amountKobo)
  }
}

export interface ReversalInput {
  readonly account: AccountContext | null
  readonly amountKobo: number
  /**
   * What the holds of the credits it takes back keep in escrow, each up to what it takes of that credit (the reversed
   * deposit's hold first): `heldToTake`. 0 when none of them is held.
   */
  readonly heldKobo: number
  /** What is still free in the account's customer_funds (not held, settled or refunded). */
  readonly freeKobo: number
  /** The tenant's available balance: what its collections still hold after payouts. */
  readonly availableKobo: number
}

/**
 * A reversal lowers the running balance (amountPaidKobo) by what there is to reverse: min(amount, amount paid). That
 * part comes first out of the reversed deposits' holds in escrow (`heldKobo`), then out of the account's free money as
 * far as it and the tenant's available balance still hold it; only the rest, which had already left (settled, refunded
 * or paid out), is posted to tenant_receivable, so provider_clearing keeps matching the bank and nothing of it is left
 * unposted. A reversal with nothing to reverse (nothing paid, or an unknown NUBAN) posts nothing and waits for review:
 * it is not a Completed reversal, and it is no payment activity on the account.
 */
export const decideReversalOutcome = (i: ReversalInput): DepositOutcome => {
  if (i.account === null) {
    return {
      status: "PendingReview", reconciliationStatus: "Unmatched", risk: NO_RISK, appliedKobo: 0, surplusKobo: 0,
      amountPaidAfterKobo: null, paymentStateAfter: null, legs: []
    }
  }
  const r = decideReversal(i.account.figures, i.amountKobo)
  if (r.reversedKobo === 0) {
    return {
      status: "PendingReview", reconciliationStatus: "Reversal", risk: NO_RISK, appliedKobo: 0, surplusKobo: 0,
      amountPaidAfterKobo: r.amountPaidAfterKobo, paymentStateAfter: r.paymentStateAfter, legs: []
    }
  }
  const fromEscrow = Math.max(0, Math.min(r.reversedKobo, i.heldKobo))
  const fromFunds = Math.max(0, Math.min(r.reversedKobo - fromEscrow, i.freeKobo, i.availableKobo))
  const owed = r.reversedKobo - fromEscrow - fromFunds
  return {
    status: "Completed", reconciliationStatus: "Reversal", risk: NO_RISK, appliedKobo: r.reversedKobo, surplusKobo: 0,
    amountPaidAfterKobo: r.amountPaidAfterKobo, paymentStateAfter: r.paymentStateAfter,
    legs: [
      ...(fromEscrow > 0 ? [{ account: LedgerAccount.escrow(i.account.id), amountKobo: fromEscrow }] : []),
      ...(fromFunds > 0 ? [{ account: LedgerAccount.customerFunds(i.account.id), amountKobo: fromFunds }] : []),
      ...(owed > 0 ? [{ account: LedgerAccount.tenantReceivable, amountKobo: owed }] : []),
      { account: LedgerAccount.providerClearing, amountKobo: -r.reversedKobo }
    ]
  }
}

/**
 * What of each held credit a reversal takes from escrow: for every credit it takes back (`takes`, in the order it takes
 * them), the smaller of what it takes of that credit and what the credit's active hold still keeps (`holds`, by
 * reference).
 */
export const heldToTake = (
  takes: ReadonlyArray<{ readonly reference: string; readonly takenKobo: number }>,
  holds: ReadonlyMap<string, number>
): ReadonlyArray<{ readonly reference: string; readonly takenKobo: number }> =>
  takes.flatMap((t) => {
    const held = Math.min(t.takenKobo, holds.get(t.reference) ?? 0)
    return held > 0 ? [{ reference: t.reference, takenKobo: held }] : []
  })

/**
 * A late reversal's receivable is recovered from the tenant's next free collections, before they count as available:
 * a Completed inflow credited to an account pays off up to what is owed (`owedKobo`), moving that much of its credit
 * from the account's customer_funds to tenant_receivable in its own journal. Anything else (held for review, unmatched,
 * a reversal) recovers nothing.
 */
export const recoverFrom = (outcome: DepositOutcome, accountId: string, owedKobo: number): { readonly outcome: DepositOutcome; readonly recoveredKobo: number } => {
  const credit = LedgerAccount.customerFunds(accountId)
  const credited = outcome.status === "Completed" && outcome.reconciliationStatus !== "Reversal"
    ? -(outcome.legs.find((l) => l.account === credit)?.amountKobo ?? 0)
    : 0
  const recoveredKobo = Math.max(0, Math.min(credited, owedKobo))
  if (recoveredKobo === 0) return { outcome, recoveredKobo }
  return { outcome: { ...outcome, legs: [...outcome.legs, ...move(credit, LedgerAccount.tenantReceivable, recoveredKobo)] }, recoveredKobo }
}
