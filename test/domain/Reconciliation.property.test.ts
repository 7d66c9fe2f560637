import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AccountFigures,
  decideCredit,
  decideReversal,
  type PaymentState,
  type ReconciliationStatus
} from "../../src/domain/Reconciliation.js"

type Step =
  | { readonly kind: "credit"; readonly amountKobo: number; readonly duplicate: boolean }
  | { readonly kind: "reversal"; readonly amountKobo: number }

// Small amounts make exact hits, full payment and clamped reversals common.
const amountArb = fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 5_000_000 }))

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("credit" as const), amountKobo: amountArb, duplicate: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reversal" as const), amountKobo: amountArb }) }
)

const expectedArb = fc.option(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 20_000_000 })), {
  nil: null
})

// The model, written independently of the module: a running total and a table of cases.
const modelState = (expected: number | null, paid: number): PaymentState =>
  expected === null ? "Open" : paid === 0 ? "AwaitingPayment" : paid < expected ? "PartiallyPaid" : paid === expected ? "FullyPaid" : "Overpaid"

const modelCreditStatus = (expected: number | null, paid: number, step: Step & { kind: "credit" }): ReconciliationStatus => {
  if (step.duplicate) return "Duplicate"
  if (expected === null) return "Credited"
  const stillOwed = paid >= expected ? 0 : expected - paid
  return Math.sign(step.amountKobo - stillOwed) === 0 ? "Exact" : step.amountKobo > stillOwed ? "Overpaid" : "Underpaid"
}

const checkIdentities = (expected: number | null, paid: number, deficit: number, overpayment: number): void => {
  expect(paid).toBeGreaterThanOrEqual(0)
  expect(Number.isSafeInteger(paid)).toBe(true)
  expect(deficit).toBeGreaterThanOrEqual(0)
  expect(overpayment).toBeGreaterThanOrEqual(0)
  expect(deficit === 0 || overpayment === 0).toBe(true)
  if (expected === null) {
    expect([deficit, overpayment]).toEqual([0, 0])
  } else {
    expect(paid - expected).toBe(overpayment - deficit)
  }
}

describe("decideCredit / decideReversal against a running-total model", () => {
  it("agree with the model at every step of random credit and reversal sequences", () => {
    fc.assert(
      fc.property(expectedArb, fc.array(stepArb, { maxLength: 60 }), (expected, steps) => {
        let figures: AccountFigures = { expectedAmountKobo: expected, amountPaidKobo: 0 }
        let modelPaid = 0
        for (const step of steps) {
          const before = modelPaid
          if (step.kind === "credit") {
            const d = decideCredit(figures, step.amountKobo, step.duplicate)
            modelPaid = before + step.amountKobo
            expect(d.reconciliationStatus).toBe(modelCreditStatus(expected, before, step))
            expect(d.amountPaidBeforeKobo).toBe(before)
            expect(d.amountPaidAfterKobo).toBe(modelPaid)
            expect(d.paymentStateBefore).toBe(modelState(expected, before))
            expect(d.paymentStateAfter).toBe(modelState(expected, modelPaid))
            const due = expected === null ? 0 : Math.max(expected - before, 0)
            expect(d.dueBeforeKobo).toBe(due)
            expect(d.surplusKobo).toBe(expected === null ? 0 : Math.max(step.amountKobo - due, 0))
            expect(d.surplusKobo).toBeLessThanOrEqual(step.amountKobo)
            figures = { expectedAmountKobo: expected, amountPaidKobo: d.amountPaidAfterKobo }
            checkIdentities(expected, d.amountPaidAfterKobo, d.deficitKobo, d.overpaymentKobo)
          } else {
            const d = decideReversal(figures, step.amountKobo)
            const reversed = step.amountKobo > before ? before : step.amountKobo
            modelPaid = before - reversed
            expect(d.reconciliationStatus).toBe("Reversal")
            expect(d.reversedKobo).toBe(reversed)
            expect(d.amountPaidAfterKobo).toBe(modelPaid)
            expect(d.paymentStateBefore).toBe(modelState(expected, before))
            expect(d.paymentStateAfter).toBe(modelState(expected, modelPaid))
            figures = { expectedAmountKobo: expected, amountPaidKobo: d.amountPaidAfterKobo }
            checkIdentities(expected, d.amountPaidAfterKobo, d.deficitKobo, d.overpaymentKobo)
          }
          expect(figures.amountPaidKobo).toBeGreaterThanOrEqual(0)
        }
      }),
      { numRuns: 500 }
    )
  })
})
