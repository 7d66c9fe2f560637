import { LedgerAccount, type Leg, move } from "./Ledger.js"

/**
 * The pure decisions of money out: what a hold may take, what a refund may send and from where, the daily cap's day,
 * and how a transfer's state and the ledger follow the provider's outcome. The services do the IO around them.
 */

export type TransferStatus = "Pending" | "Processing" | "Successful" | "Failed" | "Reversed"
export type TransferSource = "api" | "dashboard" | "refund" | "settlement"
/** What the provider reports about a transfer it accepted. */
export type TransferOutcome = "success" | "failed" | "reversed"

export const FINAL_STATUSES: ReadonlyArray<TransferStatus> = ["Successful", "Failed", "Reversed"]

/** A transfer that took its money for good or is on its way (a failed or reversed one gave it back). */
export const tookMoney = (status: TransferStatus) => status === "Pending" || status === "Processing" || status === "Successful"

/** What refunds (sent or on their way) took of a deposit. */
export const refundedKobo = (refunds: ReadonlyArray<{ readonly status: TransferStatus; readonly amountKobo: number }>) =>
  refunds.filter((r) => tookMoney(r.status)).reduce((sum, r) => sum + r.amountKobo, 0)

/** Nigeria keeps West Africa Time (UTC+1) all year: no daylight saving. */
const LAGOS_OFFSET_MS = 60 * 60 * 1000

/** The calendar day in Africa/Lagos (YYYY-MM-DD) of an instant: the daily payout cap's day. */
export const lagosDay = (epochMs: number): string => new Date(epochMs + LAGOS_OFFSET_MS).toISOString().slice(0, 10)

/** The default daily payout cap per tenant and mode (DESIGN.md): 500,000,000 kobo (5,000,000.00 NGN). */
export const DEFAULT_DAILY_PAYOUT_CAP_KOBO = 500_000_000

/**
 * References the service makes for its own transfers. A tenant's `merchantTxRef` may not start with these prefixes,
 * so its payouts can never collide with a refund or a settlement leg.
 */
export const RESERVED_PREFIXES = ["rfd_", "stl_"] as const
export const isReservedReference = (ref: string) => RESERVED_PREFIXES.some((p) => ref.toLowerCase().startsWith(p))

/** The merchantTxRef of the `attempt`-th refund of a deposit (a later attempt only after the earlier one failed). */
export const refundReference = (depositReference: string, attempt: number) =>
  attempt <= 1 ? `rfd_${depositReference}` : `rfd_${depositReference}_${attempt}`

/** Journal ids of money out: each step posts its journal once. */
export const MoneyJournal = {
  hold: (reference: string, seq: number) => `hold:${reference}:${seq}`,
  release: (reference: string, seq: number) => `release:${reference}:${seq}`,
  /** Money leaving the tenant's books for the provider (payout `pay:`, refund `rfd:`, settlement leg `stl:`). */
  claim: (kind: TransferKind, merchantTxRef: string) => `${PREFIX[kind]}:${merchantTxRef}`,
  outcome: (kind: TransferKind, merchantTxRef: string, step: "paid" | "returned" | "reversed") => `${PREFIX[kind]}:${merchantTxRef}:${step}`
} as const

/** Which books a transfer moves money between. */
export type TransferKind = "payout" | "refund" | "settlement"
const PREFIX: Record<TransferKind, string> = { payout: "pay", refund: "rfd", settlement: "stl" }
export const kindOf = (source: TransferSource): TransferKind =>
  source === "refund" ? "refund" : source === "settlement" ? "settlement" : "payout"

/**
 * Where a transfer's money waits while the provider has it, and where it goes back to when the transfer fails or is
 * reversed. A payout draws on the tenant's available balance (`payouts_drawn`, a contra account to the free
 * collections); a refund takes the deposit's money out of the account (held first) and, if it comes back, holds it
 * again in escrow so it is not swept before the tenant tries again; a settlement leg draws on its source (the
 * sub-merchant's account, the platform fees or the tenant's settlement_pending) and gives back to it for a retry.
 */
export const transitOf = (
  kind: TransferKind,
  virtualAccountId: string | null,
  ledgerSource: string | null = null
): { readonly inTransit: string; readonly returnTo: string } => {
  if (kind === "refund") {
    if (virtualAccountId === null) throw new Error("a refund transfer needs its virtual account")
    return { inTransit: LedgerAccount.refundsInTransit, returnTo: LedgerAccount.escrow(virtualAccountId) }
  }
  if (kind === "settlement") {
    if (ledgerSource === null) throw new Error("a settlement leg needs its source account")
    return { inTransit: LedgerAccount.settlementsInTransit, returnTo: ledgerSource }
  }
  return { inTransit: LedgerAccount.payoutsInTransit, returnTo: LedgerAccount.payoutsDrawn }
}

/** A settlement leg's claim: from its source, in transit to the provider. */
export const settlementClaimLegs = (ledgerSource: string, amountKobo: number): ReadonlyArray<Leg> =>
  move(ledgerSource, LedgerAccount.settlementsInTransit, amountKobo)

/** A payout's claim: drawn on the available balance, in transit to the provider. */
export const payoutClaimLegs = (amountKobo: number): ReadonlyArray<Leg> =>
  move(LedgerAccount.payoutsDrawn, LedgerAccount.payoutsInTransit, amountKobo)

/** A refund's claim: out of the account's escrow (the held part) and free funds, in transit to the provider. */
export const refundClaimLegs = (virtualAccountId: string, fromEscrowKobo: number, fromFreeKobo: number): ReadonlyArray<Leg> => [
  ...(fromEscrowKobo > 0 ? [{ account: LedgerAccount.escrow(virtualAccountId), amountKobo: fromEscrowKobo }] : []),
  ...(fromFreeKobo > 0 ? [{ account: LedgerAccount.customerFunds(virtualAccountId), amountKobo: fromFreeKobo }] : []),
  { account: LedgerAccount.refundsInTransit, amountKobo: -(fromEscrowKobo + fromFreeKobo) }
]

/** One journal a transfer's outcome posts. */
export interface OutcomeJournal {
  readonly step: "paid" | "returned" | "reversed"
  readonly legs: ReadonlyArray<Leg>
}

export interface OutcomeDecision {
  /** The state after the outcome; the same state when the outcome changes nothing. */
  readonly status: TransferStatus
  readonly journals: ReadonlyArray<OutcomeJournal>
  /** `applied` moved the transfer on; `repeat` is an outcome already applied; `ignored` contradicts a final state. */
  readonly effect: "applied" | "repeat" | "ignored"
}

/**
 * How a transfer in `status` takes the provider's `outcome`:
 * - Pending or Processing: success -> Successful (in transit -> provider_clearing); failed -> Failed (the money goes
 *   back); reversed -> Reversed (paid, then back);
 * - Successful: reversed -> Reversed (the provider returned the money); success again is a repeat;
 * - Failed and Reversed are final: a repeat of their own outcome is a repeat, anything else is ignored.
 */
export const decideOutcome = (
  status: TransferStatus,
  outcome: TransferOutcome,
  amountKobo: number,
  transit: { readonly inTransit: string; readonly returnTo: string }
): OutcomeDecision => {
  const paid: OutcomeJournal = { step: "paid", legs: move(transit.inTransit, LedgerAccount.providerClearing, amountKobo) }
  const returned: OutcomeJournal = { step: "returned", legs: move(transit.inTransit, transit.returnTo, amountKobo) }
  const reversed: OutcomeJournal = { step: "reversed", legs: move(LedgerAccount.providerClearing, transit.returnTo, amountKobo) }
  const same = (effect: "repeat" | "ignored"): OutcomeDecision => ({ status, journals: [], effect })
  switch (status) {
    case "Pending":
    case "Processing":
      if (outcome === "success") return { status: "Successful", journals: [paid], effect: "applied" }
      if (outcome === "failed") return { status: "Failed", journals: [returned], effect: "applied" }
      return { status: "Reversed", journals: [paid, reversed], effect: "applied" }
    case "Successful":
      if (outcome === "reversed") return { status: "Reversed", journals: [reversed], effect: "applied" }
      return same(outcome === "success" ? "repeat" : "ignored")
    case "Failed":
      return same(outcome === "failed" ? "repeat" : "ignored")
    case "Reversed":
      return same(outcome === "reversed" || outcome === "success" ? "repeat" : "ignored")
  }
}

/** What the tenant-facing event of a transfer's new state is called. */
export const transferEventType = (status: TransferStatus): "transfer.successful" | "transfer.failed" | "transfer.reversed" | undefined =>
  status === "Successful" ? "transfer.successful" : status === "Failed" ? "transfer.failed" : status === "Reversed" ? "transfer.reversed" : undefined

export interface HoldInput {
  /** What the deposit credited to its account. */
  readonly appliedKobo: number
  /** What refunds (not failed) already took of this deposit. */
  readonly refundedKobo: number
  /** The account's free money (customer_funds). */
  readonly freeKobo: number
  /** The tenant's available balance (payouts may have drawn the account's free money). */
  readonly availableKobo: number
}

/** The most a new hold on a deposit may escrow: its unrefunded amount, as far as it is still free and available. */
export const holdableKobo = (i: HoldInput): number =>
  Math.max(0, Math.min(i.appliedKobo - i.refundedKobo, i.freeKobo, i.availableKobo))

export interface RefundInput {
  /** The deposit's surplus: what it paid beyond what was due (the whole amount for a duplicate that was all surplus). */
  readonly surplusKobo: number
  /** What refunds (not failed) already took of this deposit. */
  readonly refundedKobo: number
  /** The account's overpayment now (a later reversal may have lowered it). */
  readonly overpaymentKobo: number
  /** What this deposit's active hold keeps in escrow. */
  readonly heldKobo: number
  /** The account's free money (customer_funds). */
  readonly freeKobo: number
  /** The tenant's available balance (what late reversals left owing was recovered before it counted). */
  readonly availableKobo: number
}

export type RefundDecision =
  | { readonly kind: "no_refundable_surplus" }
  | { readonly kind: "nothing_available"; readonly refundableKobo: number }
  | { readonly kind: "refund"; readonly amountKobo: number; readonly fromEscrowKobo: number; readonly fromFreeKobo: number }

/**
 * A refund of surplus sends the deposit's unrefunded surplus, never more than the account is still overpaid by, and
 * only what the service still has: the deposit's held money first, then the account's free money as far as the
 * tenant's available balance still holds it (settlement and payouts may have taken it). Nothing refundable:
 * `no_refundable_surplus`; refundable but all gone: `nothing_available`.
 */
export const decideRefund = (i: RefundInput): RefundDecision => {
  const refundable = Math.min(i.surplusKobo - i.refundedKobo, i.overpaymentKobo)
  if (refundable <= 0) return { kind: "no_refundable_surplus" }
  const fromEscrowKobo = Math.max(0, Math.min(refundable, i.heldKobo))
  const fromFreeKobo = Math.max(0, Math.min(refundable - fromEscrowKobo, i.freeKobo, i.availableKobo))
  const amountKobo = fromEscrowKobo + fromFreeKobo
  if (amountKobo === 0) return { kind: "nothing_available", refundableKobo: refundable }
  return { kind: "refund", amountKobo, fromEscrowKobo, fromFreeKobo }
}
