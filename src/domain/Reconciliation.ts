/**
 * Pure reconciliation decisions: how one inflow or reversal changes a
 * virtual account's running figures, and how it is classified. The services
 * apply these inside the account-locking transaction.
 */

export type PaymentState = "Open" | "AwaitingPayment" | "PartiallyPaid" | "FullyPaid" | "Overpaid"

export type ReconciliationStatus =
  | "Exact"
  | "Underpaid"
  | "Overpaid"
  | "Duplicate"
  | "Reversal"
  | "Credited"
  | "Unmatched"

export interface AccountFigures {
  readonly expectedAmountKobo: number | null
  readonly amountPaidKobo: number
}

// Amounts and figures are validated at the edges; anything else reaching here is a bug.
const assertKobo = (value: number, label: string, minimum: 0 | 1): void => {
  if (!Number.isSafeInteger(value) || value < minimum) {
    const wanted = minimum === 1 ? "a positive" : "a non-negative"
    throw new Error(`${label} must be ${wanted} safe integer of kobo, got ${String(value)}`)
  }
}

const assertFigures = (f: AccountFigures): void => {
  if (f.expectedAmountKobo !== null) assertKobo(f.expectedAmountKobo, "expectedAmountKobo", 1)
  assertKobo(f.amountPaidKobo, "amountPaidKobo", 0)
}

export const paymentStateOf = (f: AccountFigures): PaymentState => {
  assertFigures(f)
  const expected = f.expectedAmountKobo
  if (expected === null) return "Open"
  if (f.amountPaidKobo === 0) return "AwaitingPayment"
  if (f.amountPaidKobo < expected) return "PartiallyPaid"
  return f.amountPaidKobo === expected ? "FullyPaid" : "Overpaid"
}

/** What is still due; 0 for an open account. */
export const deficitKobo = (f: AccountFigures): number =>
  f.expectedAmountKobo === null ? 0 : Math.max(f.expectedAmountKobo - f.amountPaidKobo, 0)

/** What was paid beyond the expected amount; 0 for an open account. */
export const overpaymentKobo = (f: AccountFigures): number =>
  f.expectedAmountKobo === null ? 0 : Math.max(f.amountPaidKobo - f.expectedAmountKobo, 0)

export interface PriorCredit {
  readonly reference: string
  readonly amountKobo: number
  readonly senderAccountNumber: string | null
  readonly senderName: string | null
  readonly paidAtMs: number
}

export interface Inflow {
  readonly reference: string
  readonly amountKobo: number
  readonly senderAccountNumber: string | null
  readonly senderName: string | null
  readonly paidAtMs: number
}

export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * Upper-case, accents and punctuation removed, whitespace collapsed:
 * "Adéyemí,  John O." → "ADEYEMI JOHN O". Banks differ in whether they keep
 * Yorùbá/Igbo diacritics, so they must not split one payer in two.
 */
export const normalisePayerName = (name: string): string =>
  name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toUpperCase()
    .replace(/[^\p{L}\p{N}\s]/gu, "")
    .replace(/\s+/g, " ")
    .trim()

const present = (s: string | null): string | undefined => {
  const trimmed = s?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

const samePayer = (a: Inflow | PriorCredit, b: Inflow | PriorCredit): boolean => {
  const accountA = present(a.senderAccountNumber)
  const accountB = present(b.senderAccountNumber)
  if (accountA !== undefined && accountB !== undefined) return accountA === accountB
  const nameA = normalisePayerName(a.senderName ?? "")
  return nameA !== "" && nameA === normalisePayerName(b.senderName ?? "")
}

/**
 * A new provider reference whose payer and amount repeat an earlier credited
 * inflow to the same account within 24 h (either side, inclusive). `prior`
 * is that account's credited inflows; a repeat of the same reference is
 * never a duplicate deposit (it is dropped earlier, as a redelivery).
 */
export const isDuplicateInflow = (inflow: Inflow, prior: ReadonlyArray<PriorCredit>): boolean =>
  prior.some(
    (p) =>
      p.reference !== inflow.reference &&
      p.amountKobo === inflow.amountKobo &&
      Math.abs(inflow.paidAtMs - p.paidAtMs) <= DUPLICATE_WINDOW_MS &&
      samePayer(inflow, p)
  )

export interface CreditDecision {
  readonly reconciliationStatus: ReconciliationStatus
  readonly amountPaidBeforeKobo: number
  readonly amountPaidAfterKobo: number
  readonly dueBeforeKobo: number
  readonly paymentStateBefore: PaymentState
  readonly paymentStateAfter: PaymentState
  /** After this credit. */
  readonly deficitKobo: number
  /** After this credit. */
  readonly overpaymentKobo: number
  /** The part of this inflow above what was still due (0 for open accounts). */
  readonly surplusKobo: number
}

const classifyCredit = (
  expected: number | null,
  dueKobo: number,
  amountKobo: number,
  duplicate: boolean
): ReconciliationStatus => {
  if (duplicate) return "Duplicate"
  if (expected === null) return "Credited"
  if (amountKobo === dueKobo) return "Exact"
  return amountKobo < dueKobo ? "Underpaid" : "Overpaid"
}

export const decideCredit = (f: AccountFigures, amountKobo: number, duplicate: boolean): CreditDecision => {
  assertKobo(amountKobo, "credit amountKobo", 1)
  const paymentStateBefore = paymentStateOf(f)
  const dueBeforeKobo = deficitKobo(f)
  const after: AccountFigures = {
    expectedAmountKobo: f.expectedAmountKobo,
    amountPaidKobo: f.amountPaidKobo + amountKobo
  }
  return {
    reconciliationStatus: classifyCredit(f.expectedAmountKobo, dueBeforeKobo, amountKobo, duplicate),
    amountPaidBeforeKobo: f.amountPaidKobo,
    amountPaidAfterKobo: after.amountPaidKobo,
    dueBeforeKobo,
    paymentStateBefore,
    paymentStateAfter: paymentStateOf(after),
    deficitKobo: deficitKobo(after),
    overpaymentKobo: overpaymentKobo(after),
    surplusKobo: f.expectedAmountKobo === null ? 0 : Math.max(amountKobo - dueBeforeKobo, 0)
  }
}

export interface ReversalDecision {
  readonly reconciliationStatus: "Reversal"
  /** min(requested, amount paid): a reversal never takes the account below zero. */
  readonly reversedKobo: number
  readonly amountPaidAfterKobo: number
  readonly paymentStateBefore: PaymentState
  readonly paymentStateAfter: PaymentState
  /** After this reversal. */
  readonly deficitKobo: number
  /** After this reversal. */
  readonly overpaymentKobo: number
}

export const decideReversal = (f: AccountFigures, amountKobo: number): ReversalDecision => {
  assertKobo(amountKobo, "reversal amountKobo", 1)
  const paymentStateBefore = paymentStateOf(f)
  const reversedKobo = Math.min(amountKobo, f.amountPaidKobo)
  const after: AccountFigures = {
    expectedAmountKobo: f.expectedAmountKobo,
    amountPaidKobo: f.amountPaidKobo - reversedKobo
  }
  return {
    reconciliationStatus: "Reversal",
    reversedKobo,
    amountPaidAfterKobo: after.amountPaidKobo,
    paymentStateBefore,
    paymentStateAfter: paymentStateOf(after),
    deficitKobo: deficitKobo(after),
    overpaymentKobo: overpaymentKobo(after)
  }
}
