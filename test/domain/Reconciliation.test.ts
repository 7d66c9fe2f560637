import { describe, expect, it } from "vitest"
import {
  type AccountFigures,
  decideCredit,
  decideReversal,
  deficitKobo,
  DUPLICATE_WINDOW_MS,
  type Inflow,
  isDuplicateInflow,
  normalisePayerName,
  overpaymentKobo,
  paymentStateOf,
  type PriorCredit
} from "../../src/domain/Reconciliation.js"

const fig = (expectedAmountKobo: number | null, amountPaidKobo: number): AccountFigures => ({
  expectedAmountKobo,
  amountPaidKobo
})

describe("paymentStateOf, deficitKobo, overpaymentKobo", () => {
  it.each([
    [null, 0, "Open", 0, 0],
    [null, 5_000, "Open", 0, 0],
    [10_000, 0, "AwaitingPayment", 10_000, 0],
    [10_000, 1, "PartiallyPaid", 9_999, 0],
    [10_000, 9_999, "PartiallyPaid", 1, 0],
    [10_000, 10_000, "FullyPaid", 0, 0],
    [10_000, 10_001, "Overpaid", 0, 1],
    [10_000, 25_000, "Overpaid", 0, 15_000]
  ] as const)("expected %s, paid %i → %s, deficit %i, overpayment %i", (expected, paid, state, deficit, over) => {
    const f = fig(expected, paid)
    expect(paymentStateOf(f)).toBe(state)
    expect(deficitKobo(f)).toBe(deficit)
    expect(overpaymentKobo(f)).toBe(over)
  })

  it("throws on figures that cannot come from the ledger", () => {
    expect(() => paymentStateOf(fig(10_000, -1))).toThrow(/amountPaidKobo/)
    expect(() => paymentStateOf(fig(10_000, 1.5))).toThrow(/amountPaidKobo/)
    expect(() => paymentStateOf(fig(0, 0))).toThrow(/expectedAmountKobo/)
    expect(() => paymentStateOf(fig(Number.MAX_SAFE_INTEGER + 1, 0))).toThrow(/expectedAmountKobo/)
  })
})

describe("decideCredit", () => {
  it("classifies an exact payment and moves AwaitingPayment → FullyPaid", () => {
    expect(decideCredit(fig(150_000, 0), 150_000, false)).toEqual({
      reconciliationStatus: "Exact",
      amountPaidBeforeKobo: 0,
      amountPaidAfterKobo: 150_000,
      dueBeforeKobo: 150_000,
      paymentStateBefore: "AwaitingPayment",
      paymentStateAfter: "FullyPaid",
      deficitKobo: 0,
      overpaymentKobo: 0,
      surplusKobo: 0
    })
  })

  it("classifies an underpayment: AwaitingPayment → PartiallyPaid", () => {
    expect(decideCredit(fig(150_000, 0), 100_000, false)).toEqual({
      reconciliationStatus: "Underpaid",
      amountPaidBeforeKobo: 0,
      amountPaidAfterKobo: 100_000,
      dueBeforeKobo: 150_000,
      paymentStateBefore: "AwaitingPayment",
      paymentStateAfter: "PartiallyPaid",
      deficitKobo: 50_000,
      overpaymentKobo: 0,
      surplusKobo: 0
    })
  })

  it("classifies a further underpayment: PartiallyPaid → PartiallyPaid", () => {
    const d = decideCredit(fig(150_000, 100_000), 20_000, false)
    expect(d.reconciliationStatus).toBe("Underpaid")
    expect(d.dueBeforeKobo).toBe(50_000)
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["PartiallyPaid", "PartiallyPaid"])
    expect(d.deficitKobo).toBe(30_000)
  })

  it("classifies the balance against what is still due as Exact: PartiallyPaid → FullyPaid", () => {
    const d = decideCredit(fig(150_000, 100_000), 50_000, false)
    expect(d.reconciliationStatus).toBe("Exact")
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["PartiallyPaid", "FullyPaid"])
    expect(d.amountPaidAfterKobo).toBe(150_000)
    expect([d.deficitKobo, d.overpaymentKobo, d.surplusKobo]).toEqual([0, 0, 0])
  })

  it("classifies an overpayment on an unpaid account: AwaitingPayment → Overpaid", () => {
    const d = decideCredit(fig(150_000, 0), 200_000, false)
    expect(d.reconciliationStatus).toBe("Overpaid")
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["AwaitingPayment", "Overpaid"])
    expect([d.deficitKobo, d.overpaymentKobo, d.surplusKobo]).toEqual([0, 50_000, 50_000])
  })

  it("classifies paying more than the rest: PartiallyPaid → Overpaid, surplus is only the excess over what was due", () => {
    const d = decideCredit(fig(150_000, 100_000), 80_000, false)
    expect(d.reconciliationStatus).toBe("Overpaid")
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["PartiallyPaid", "Overpaid"])
    expect([d.dueBeforeKobo, d.overpaymentKobo, d.surplusKobo]).toEqual([50_000, 30_000, 30_000])
  })

  it("classifies any further deposit on a fully paid account as Overpaid: FullyPaid → Overpaid", () => {
    const d = decideCredit(fig(150_000, 150_000), 1, false)
    expect(d.reconciliationStatus).toBe("Overpaid")
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["FullyPaid", "Overpaid"])
    expect([d.dueBeforeKobo, d.overpaymentKobo, d.surplusKobo]).toEqual([0, 1, 1])
  })

  it("keeps an overpaid account Overpaid, the whole deposit being surplus", () => {
    const d = decideCredit(fig(150_000, 160_000), 5_000, false)
    expect(d.reconciliationStatus).toBe("Overpaid")
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["Overpaid", "Overpaid"])
    expect([d.overpaymentKobo, d.surplusKobo]).toEqual([15_000, 5_000])
  })

  it("classifies a credit to an open account as Credited, staying Open with no surplus", () => {
    expect(decideCredit(fig(null, 70_000), 30_000, false)).toEqual({
      reconciliationStatus: "Credited",
      amountPaidBeforeKobo: 70_000,
      amountPaidAfterKobo: 100_000,
      dueBeforeKobo: 0,
      paymentStateBefore: "Open",
      paymentStateAfter: "Open",
      deficitKobo: 0,
      overpaymentKobo: 0,
      surplusKobo: 0
    })
  })

  it("classifies a duplicate as Duplicate yet still credits it", () => {
    const d = decideCredit(fig(150_000, 150_000), 150_000, true)
    expect(d.reconciliationStatus).toBe("Duplicate")
    expect(d.amountPaidAfterKobo).toBe(300_000)
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["FullyPaid", "Overpaid"])
    expect([d.overpaymentKobo, d.surplusKobo]).toEqual([150_000, 150_000])
  })

  it("lets Duplicate take precedence over every other classification", () => {
    expect(decideCredit(fig(null, 10_000), 10_000, true).reconciliationStatus).toBe("Duplicate")
    expect(decideCredit(fig(30_000, 10_000), 20_000, true).reconciliationStatus).toBe("Duplicate")
    expect(decideCredit(fig(30_000, 10_000), 10_000, true).reconciliationStatus).toBe("Duplicate")
    const open = decideCredit(fig(null, 10_000), 10_000, true)
    expect([open.paymentStateAfter, open.surplusKobo]).toEqual(["Open", 0])
  })

  it("throws on an amount that is not a positive safe integer", () => {
    for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => decideCredit(fig(10_000, 0), amount, false), String(amount)).toThrow(/positive safe integer/)
    }
  })
})

describe("decideReversal", () => {
  it("moves FullyPaid back to PartiallyPaid", () => {
    expect(decideReversal(fig(150_000, 150_000), 50_000)).toEqual({
      reconciliationStatus: "Reversal",
      reversedKobo: 50_000,
      amountPaidAfterKobo: 100_000,
      paymentStateBefore: "FullyPaid",
      paymentStateAfter: "PartiallyPaid",
      deficitKobo: 50_000,
      overpaymentKobo: 0
    })
  })

  it("moves FullyPaid back to AwaitingPayment when everything is reversed", () => {
    const d = decideReversal(fig(150_000, 150_000), 150_000)
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["FullyPaid", "AwaitingPayment"])
    expect([d.amountPaidAfterKobo, d.deficitKobo]).toEqual([0, 150_000])
  })

  it("moves Overpaid to FullyPaid, to PartiallyPaid, or keeps it Overpaid", () => {
    expect(decideReversal(fig(100, 150), 50).paymentStateAfter).toBe("FullyPaid")
    expect(decideReversal(fig(100, 150), 51).paymentStateAfter).toBe("PartiallyPaid")
    const still = decideReversal(fig(100, 150), 49)
    expect([still.paymentStateAfter, still.overpaymentKobo]).toEqual(["Overpaid", 1])
  })

  it("moves PartiallyPaid to AwaitingPayment", () => {
    const d = decideReversal(fig(100, 40), 40)
    expect([d.paymentStateBefore, d.paymentStateAfter]).toEqual(["PartiallyPaid", "AwaitingPayment"])
  })

  it("clamps the reversal at the amount paid so the account never goes negative", () => {
    expect(decideReversal(fig(100, 40), 90)).toEqual({
      reconciliationStatus: "Reversal",
      reversedKobo: 40,
      amountPaidAfterKobo: 0,
      paymentStateBefore: "PartiallyPaid",
      paymentStateAfter: "AwaitingPayment",
      deficitKobo: 100,
      overpaymentKobo: 0
    })
    const nothingPaid = decideReversal(fig(100, 0), 10)
    expect([nothingPaid.reversedKobo, nothingPaid.amountPaidAfterKobo]).toEqual([0, 0])
  })

  it("keeps an open account Open", () => {
    const d = decideReversal(fig(null, 500), 700)
    expect([d.reversedKobo, d.amountPaidAfterKobo, d.paymentStateBefore, d.paymentStateAfter]).toEqual([500, 0, "Open", "Open"])
    expect([d.deficitKobo, d.overpaymentKobo]).toEqual([0, 0])
  })

  it("throws on an amount that is not a positive safe integer", () => {
    for (const amount of [0, -5, 0.1, Number.NaN]) {
      expect(() => decideReversal(fig(100, 100), amount), String(amount)).toThrow(/positive safe integer/)
    }
  })
})

describe("isDuplicateInflow", () => {
  const t0 = Date.UTC(2026, 10, 21, 10, 0, 0)
  const prior: PriorCredit = {
    reference: "000013251121100000000000000001",
    amountKobo: 150_000,
    senderAccountNumber: "0108024071",
    senderName: "ADEYEMI JOHN O",
    paidAtMs: t0
  }
  const next = (overrides: Partial<Inflow> = {}): Inflow => ({
    reference: "000013251121110000000000000002",
    amountKobo: 150_000,
    senderAccountNumber: "0108024071",
    senderName: "ADEYEMI JOHN O",
    paidAtMs: t0 + 60_000,
    ...overrides
  })

  it("flags a new reference repeating the payer and amount within 24 h", () => {
    expect(isDuplicateInflow(next(), [prior])).toBe(true)
  })

  it("includes exactly 24 h and excludes 24 h + 1 ms, on either side", () => {
    expect(isDuplicateInflow(next({ paidAtMs: t0 + DUPLICATE_WINDOW_MS }), [prior])).toBe(true)
    expect(isDuplicateInflow(next({ paidAtMs: t0 + DUPLICATE_WINDOW_MS + 1 }), [prior])).toBe(false)
    expect(isDuplicateInflow(next({ paidAtMs: t0 - DUPLICATE_WINDOW_MS }), [prior])).toBe(true)
    expect(isDuplicateInflow(next({ paidAtMs: t0 - DUPLICATE_WINDOW_MS - 1 }), [prior])).toBe(false)
    expect(DUPLICATE_WINDOW_MS).toBe(86_400_000)
  })

  it("never flags an inflow as a duplicate of its own reference", () => {
    expect(isDuplicateInflow(next({ reference: prior.reference }), [prior])).toBe(false)
    expect(isDuplicateInflow(next({ reference: prior.reference, paidAtMs: t0 }), [prior])).toBe(false)
  })

  it("requires the same amount", () => {
    expect(isDuplicateInflow(next({ amountKobo: 150_001 }), [prior])).toBe(false)
    expect(isDuplicateInflow(next({ amountKobo: 149_999 }), [prior])).toBe(false)
  })

  it("decides the payer by account number when both have one, regardless of name", () => {
    expect(isDuplicateInflow(next({ senderName: "SOMEONE ELSE" }), [prior])).toBe(true)
    expect(isDuplicateInflow(next({ senderAccountNumber: "0108024072" }), [prior])).toBe(false)
    expect(isDuplicateInflow(next({ senderAccountNumber: " 0108024071 " }), [prior])).toBe(true)
  })

  it("falls back to the normalised name when either account number is missing", () => {
    const noAccount = next({ senderAccountNumber: null })
    expect(isDuplicateInflow(noAccount, [prior])).toBe(true)
    expect(isDuplicateInflow(next({ senderAccountNumber: "" }), [prior])).toBe(true)
    expect(isDuplicateInflow(noAccount, [{ ...prior, senderAccountNumber: null }])).toBe(true)
    expect(isDuplicateInflow(next({ senderAccountNumber: null, senderName: "ADEYEMI JOHN" }), [prior])).toBe(false)
  })

  it("matches names ignoring case, punctuation and whitespace", () => {
    for (const senderName of ["adeyemi john o", "Adeyemi,  John O.", "  ADEYEMI\tJOHN   O  ", "ADEYEMI JOHN O.", "Adéyẹmí John O"]) {
      expect(isDuplicateInflow(next({ senderAccountNumber: null, senderName }), [prior]), senderName).toBe(true)
    }
  })

  it("never matches on missing or blank names", () => {
    const anon = next({ senderAccountNumber: null, senderName: null })
    expect(isDuplicateInflow(anon, [{ ...prior, senderAccountNumber: null, senderName: null }])).toBe(false)
    const blank = next({ senderAccountNumber: null, senderName: " .. " })
    expect(isDuplicateInflow(blank, [{ ...prior, senderAccountNumber: null, senderName: "--" }])).toBe(false)
    expect(isDuplicateInflow(anon, [prior])).toBe(false)
  })

  it("finds a match anywhere among the prior credits, and none in an empty list", () => {
    const other: PriorCredit = { ...prior, reference: "r-other", amountKobo: 5_000 }
    expect(isDuplicateInflow(next(), [other, prior])).toBe(true)
    expect(isDuplicateInflow(next(), [other])).toBe(false)
    expect(isDuplicateInflow(next(), [])).toBe(false)
  })
})

describe("normalisePayerName", () => {
  it("upper-cases, strips punctuation and collapses whitespace", () => {
    expect(normalisePayerName("  Adeyemi,  John\tO. ")).toBe("ADEYEMI JOHN O")
    expect(normalisePayerName("O'Brien-Okafor")).toBe("OBRIENOKAFOR")
    expect(normalisePayerName("Ọlá Àdìgún")).toBe("OLA ADIGUN")
    expect(normalisePayerName("O\u0323la\u0301 A\u0300di\u0300gu\u0301n")).toBe("OLA ADIGUN")
    expect(normalisePayerName("...")).toBe("")
  })
})
