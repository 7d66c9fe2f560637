import { CHART, LedgerAccount, type Leg } from "./Ledger.js"

/**
 * Reading the ledger back: why a journal was posted and what it is about, from its id (and, where the id alone is
 * ambiguous, its legs), and account names as an integrator knows them. Journal ids are the posting steps' own
 * (`JournalId` in Ledger.ts, `MoneyJournal` in MoneyOut.ts, `allocationJournal` in Settlement.ts).
 */

/** Every reason a journal can have, in the order docs/ledger.md explains them. */
export const JOURNAL_REASONS = [
  "deposit", "reversal", "review_approved", "review_rejected", "hold", "release",
  "payout", "payout_paid", "payout_returned", "payout_reversed",
  "refund", "refund_paid", "refund_returned", "refund_reversed",
  "settlement", "settlement_leg", "settlement_leg_paid", "settlement_leg_returned", "settlement_leg_reversed",
  "other"
] as const
export type JournalReason = (typeof JOURNAL_REASONS)[number]

export interface JournalDescription {
  readonly reason: JournalReason
  /**
   * What the journal is about, as the API names it elsewhere: the deposit's reference (deposit, reversal, review, hold,
   * release), the transfer's merchantTxRef (payout, refund, settlement leg and their outcomes), the settlement's id.
   */
  readonly reference: string
}

const OUTCOME = /^(.+):(paid|returned|reversed)$/
const SEQ = /^(.+):\d+$/
type TransferKind = "payout" | "refund" | "settlement_leg"
const TRANSIT: Record<TransferKind, string> = {
  payout: LedgerAccount.payoutsInTransit,
  refund: LedgerAccount.refundsInTransit,
  settlement_leg: LedgerAccount.settlementsInTransit
}

const credits = (legs: ReadonlyArray<Leg>, account: string) => legs.some((l) => l.account === account && l.amountKobo < 0)

/**
 * A transfer's journal: its claim (`<prefix>:<merchantTxRef>`, which credits the transfer's in-transit account) or an
 * outcome (`<prefix>:<merchantTxRef>:paid|returned|reversed`, which never does). A merchantTxRef may itself end in
 * `:paid`, so the legs decide when they are given; without legs the id's suffix does.
 */
const transfer = (kind: TransferKind, rest: string, legs: ReadonlyArray<Leg>): JournalDescription => {
  const m = OUTCOME.exec(rest)
  if (m === null || credits(legs, TRANSIT[kind])) return { reason: kind, reference: rest }
  return { reason: `${kind}_${m[2] as "paid" | "returned" | "reversed"}`, reference: m[1]! }
}

/** Why a journal was posted and what it is about; `legs` are the journal's own (all of them, any account). */
export const describeJournal = (journalId: string, legs: ReadonlyArray<Leg> = []): JournalDescription => {
  const colon = journalId.indexOf(":")
  if (colon < 0) return { reason: "other", reference: journalId }
  const prefix = journalId.slice(0, colon)
  const rest = journalId.slice(colon + 1)
  switch (prefix) {
    case "txn":
      // A reversal gives the bank its money back: provider_clearing is credited. A credit debits it.
      return { reason: credits(legs, LedgerAccount.providerClearing) ? "reversal" : "deposit", reference: rest }
    case "review":
      return { reason: credits(legs, LedgerAccount.rejected) ? "review_rejected" : "review_approved", reference: rest }
    case "hold":
    case "release":
      return { reason: prefix, reference: SEQ.exec(rest)?.[1] ?? rest }
    case "pay":
      return transfer("payout", rest, legs)
    case "rfd":
      return transfer("refund", rest, legs)
    case "stl":
      // `stl:<settlement id>` is the allocation; a leg's transfer references start `stl_` (reserved for them).
      if (rest.startsWith("stl_") || credits(legs, LedgerAccount.settlementsInTransit)) return transfer("settlement_leg", rest, legs)
      return { reason: "settlement", reference: rest }
    default:
      return { reason: "other", reference: rest }
  }
}

/** The families keyed by virtual account (customer_funds, escrow, review_pending). */
const PER_ACCOUNT = CHART.filter((f) => f.keyedBy === "virtual account").map((f) => f.name)

/** The virtual account's internal id an account name is keyed by, or undefined for any other account. */
export const virtualAccountIdOf = (account: string): string | undefined => {
  const colon = account.indexOf(":")
  return colon > 0 && PER_ACCOUNT.includes(account.slice(0, colon)) ? account.slice(colon + 1) : undefined
}

/** The ledger accounts of one virtual account (its internal id). */
export const accountsOf = (virtualAccountId: string): ReadonlyArray<string> => PER_ACCOUNT.map((family) => `${family}:${virtualAccountId}`)

/**
 * An account name as an integrator knows it: `customer_funds:order-1001` (the accountRef) for `customer_funds:va_…`
 * (the internal id); every other name as it is. An id with no accountRef known stays as it is.
 */
export const publicAccountName = (account: string, accountRefOf: (virtualAccountId: string) => string | undefined): string => {
  const id = virtualAccountIdOf(account)
  if (id === undefined) return account
  const ref = accountRefOf(id)
  return ref === undefined ? account : `${account.slice(0, account.length - id.length)}${ref}`
}
