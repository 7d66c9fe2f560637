import type { PaymentState } from "./Reconciliation.js"

/**
 * The pure decisions of settlement: which accounts are swept, how one account's net is split into legs, what a
 * settlement's status is from its legs, and the references its transfers carry. Services/settlement does the IO.
 */

/** A leg of the tenant's split plan, as stored and answered (`SplitLegRequest` normalised). */
export interface SplitLeg {
  /** The sub-merchant paid by this leg; null: the tenant's own settlement account. */
  readonly subMerchantRef: string | null
  /** A share of the net in basis points (1% = 100 bps); exactly one of bps and flatKobo is set. */
  readonly bps: number | null
  readonly flatKobo: number | null
  /** Legs are paid in ascending priority; the first absorbs the rounding remainder. */
  readonly priority: number
}

export const MAX_SPLIT_LEGS = 20
export const BPS_WHOLE = 10_000
export const SPLIT_PRIORITY_MAX = 1_000_000

/** One amount of a split, in plan order (ascending priority); `leg` null is the rest to the tenant's settlement account. */
export interface SplitAmount {
  readonly leg: SplitLeg | null
  readonly amountKobo: number
}

export type SplitDecision =
  | { readonly kind: "split"; readonly amounts: ReadonlyArray<SplitAmount> }
  | { readonly kind: "skip"; readonly code: "flat_legs_exceed_net"; readonly reason: string }

/** The plan's legs in the order they are paid: ascending priority, ties in the order given. */
export const inPaymentOrder = (legs: ReadonlyArray<SplitLeg>): ReadonlyArray<SplitLeg> =>
  legs.map((leg, i) => ({ leg, i })).sort((a, b) => a.leg.priority - b.leg.priority || a.i - b.i).map((x) => x.leg)

/**
 * How `netKobo` of one account is split by `plan`:
 * - flat legs take their amount first; if together they exceed the net, the whole settlement is skipped (never partial);
 * - percentage legs share what the flat legs leave (R), each `floor(R * bps / 10000)`;
 * - the rounding remainder (`floor(R * sum(bps) / 10000)` less the sum of the floors, fewer kobo than there are
 *   percentage legs) goes to the first leg in payment order, so the plan's total share is exact;
 * - what the percentages do not claim (`R - floor(R * sum(bps) / 10000)`) goes to the tenant's settlement account as a
 *   last leg; an empty plan is that leg alone: a single sweep.
 * Zero amounts are left out; the amounts always sum to `netKobo` exactly.
 */
export const splitNet = (netKobo: number, plan: ReadonlyArray<SplitLeg>): SplitDecision => {
  if (!Number.isSafeInteger(netKobo) || netKobo < 0) throw new Error(`net must be a non-negative integer of kobo, got ${netKobo}`)
  const legs = inPaymentOrder(plan)
  const flatTotal = legs.reduce((s, l) => s + (l.flatKobo ?? 0), 0)
  if (flatTotal > netKobo) {
    return {
      kind: "skip", code: "flat_legs_exceed_net",
      reason: `the plan's flat legs (${flatTotal} kobo) exceed the net collected (${netKobo} kobo); nothing is settled until the plan changes or more is collected`
    }
  }
  const rest = netKobo - flatTotal
  const bpsTotal = legs.reduce((s, l) => s + (l.bps ?? 0), 0)
  // BigInt: rest * bps can pass 2^53 for large amounts.
  const share = (bps: number) => Number((BigInt(rest) * BigInt(bps)) / BigInt(BPS_WHOLE))
  const amounts = legs.map((leg) => leg.flatKobo ?? share(leg.bps!))
  const percentTotal = share(bpsTotal)
  const rounding = percentTotal - legs.reduce((s, l, i) => s + (l.bps !== null ? amounts[i]! : 0), 0)
  if (amounts.length > 0) amounts[0] = amounts[0]! + rounding
  const out: Array<SplitAmount> = legs.map((leg, i) => ({ leg, amountKobo: amounts[i]! }))
  out.push({ leg: null, amountKobo: rest - percentTotal })
  return { kind: "split", amounts: out.filter((a) => a.amountKobo > 0) }
}

/** A plan's problems, in words a 400 can carry; empty when it is valid. Sub-merchant checks are the service's. */
export const planProblems = (plan: ReadonlyArray<SplitLeg>): ReadonlyArray<{ readonly path: string; readonly message: string }> => {
  const problems: Array<{ path: string; message: string }> = []
  if (plan.length > MAX_SPLIT_LEGS) problems.push({ path: "splits", message: `a plan has at most ${MAX_SPLIT_LEGS} legs` })
  plan.forEach((leg, i) => {
    if ((leg.bps === null) === (leg.flatKobo === null)) {
      problems.push({ path: `splits.${i}`, message: "a leg has exactly one of bps (1 to 10000) and flatKobo (at least 1)" })
    }
    if (leg.bps !== null && (leg.bps < 1 || leg.bps > BPS_WHOLE)) {
      problems.push({ path: `splits.${i}.bps`, message: `bps is ${leg.bps}; a percentage leg takes 1 to ${BPS_WHOLE} bps (100 bps = 1%)` })
    }
  })
  const bpsTotal = plan.reduce((s, l) => s + (l.bps ?? 0), 0)
  if (bpsTotal > BPS_WHOLE) problems.push({ path: "splits", message: `the percentage legs sum to ${bpsTotal} bps; at most ${BPS_WHOLE} (100%)` })
  const seen = new Map<number, number>()
  plan.forEach((leg, i) => {
    const first = seen.get(leg.priority)
    if (first !== undefined) problems.push({ path: `splits.${i}.priority`, message: `priority ${leg.priority} is also leg ${first}'s; each leg needs its own place in the order` })
    else seen.set(leg.priority, i)
  })
  return problems
}

/**
 * A sub-merchant's account is settled as a plan of its own: the sub-merchant first (it absorbs the rounding), the
 * platform fee (`floor(net * feeBps / 10000)`) to the tenant's settlement account.
 */
export const subMerchantPlan = (subMerchantRef: string, platformFeeBps: number): ReadonlyArray<SplitLeg> => [
  { subMerchantRef, bps: BPS_WHOLE - platformFeeBps, flatKobo: null, priority: 0 },
  ...(platformFeeBps > 0 ? [{ subMerchantRef: null, bps: platformFeeBps, flatKobo: null, priority: 1 }] : [])
]

/** Accounts whose free money is swept: fully paid, overpaid (what is held stays) or open. */
export const isSweepable = (state: PaymentState) => state === "FullyPaid" || state === "Overpaid" || state === "Open"

/** Whether an account's free money is worth a settlement: something, and at least the tenant's minimum payout. */
export const meetsMinimum = (freeKobo: number, minPayoutKobo: number) => freeKobo > 0 && freeKobo >= minPayoutKobo

export type SettlementStatus = "Paid" | "Processing" | "Failed" | "Skipped"
export type LegTransferStatus = "Pending" | "Processing" | "Successful" | "Failed" | "Reversed"

/** A leg's transfer is tried at most this often; then the settlement is Failed (until its destination changes). */
export const MAX_LEG_ATTEMPTS = 3

/** What a leg's latest transfer says about the leg. */
export const legFailed = (status: LegTransferStatus) => status === "Failed" || status === "Reversed"

/**
 * A settlement's status from its legs: Paid when every leg's transfer succeeded; Failed when a leg failed on its last
 * attempt; otherwise Processing (sending, or a failed leg waiting for its retry).
 */
export const settlementStatusOf = (legs: ReadonlyArray<{ readonly status: LegTransferStatus; readonly attempts: number }>): SettlementStatus => {
  if (legs.length === 0) return "Skipped"
  if (legs.every((l) => l.status === "Successful")) return "Paid"
  if (legs.some((l) => legFailed(l.status) && l.attempts >= MAX_LEG_ATTEMPTS)) return "Failed"
  return "Processing"
}

/** The merchantTxRef of a leg's `attempt`-th transfer (a later attempt only after the earlier one failed). */
export const legReference = (settlementId: string, legNo: number, attempt: number) =>
  attempt <= 1 ? `stl_${settlementId}_${legNo}` : `stl_${settlementId}_${legNo}_${attempt}`

/** The journal that moves a settlement's net out of its account to the legs' sources. */
export const allocationJournal = (settlementId: string) => `stl:${settlementId}`
