/**
 * The chart of ledger accounts. Amounts are signed kobo: debit positive, credit negative; each journal sums to zero.
 * - provider_clearing: money held for the tenant at the bank provider (asset).
 * - customer_funds:<vaId>: collections credited to a virtual account (liability); -balance == amountPaidKobo.
 * - review_hold:<vaId>: deposits held for risk review, not yet credited to the account.
 * - suspense:unmatched / suspense:rejected: inflows with no account, and rejected deposits owed back to payers.
 * Holds, refunds, payouts and settlement post into further accounts (escrow:<vaId>, refunds_payable, payouts_in_transit,
 * settlement:<...>) with the same rule.
 */
export const LedgerAccount = {
  providerClearing: "provider_clearing",
  customerFunds: (vaId: string) => `customer_funds:${vaId}`,
  reviewHold: (vaId: string) => `review_hold:${vaId}`,
  unmatched: "suspense:unmatched",
  rejected: "suspense:rejected"
} as const

export interface Leg {
  readonly account: string
  readonly amountKobo: number
}

/** A transfer of `amountKobo` from `credit` to `debit`; no legs when nothing moves. */
export const move = (debit: string, credit: string, amountKobo: number): ReadonlyArray<Leg> =>
  amountKobo === 0 ? [] : [{ account: debit, amountKobo }, { account: credit, amountKobo: -amountKobo }]

export const isBalanced = (legs: ReadonlyArray<Leg>) => legs.reduce((s, l) => s + l.amountKobo, 0) === 0
