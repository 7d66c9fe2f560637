import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isBalanced, LedgerAccount, type Leg } from "../../src/domain/Ledger.js"
import {
  decideOutcome,
  decideRefund,
  FINAL_STATUSES,
  holdableKobo,
  isReservedReference,
  kindOf,
  lagosDay,
  MoneyJournal,
  payoutClaimLegs,
  refundClaimLegs,
  refundReference,
  type RefundInput,
  type TransferOutcome,
  type TransferStatus,
  transferEventType,
  transitOf
} from "../../src/domain/MoneyOut.js"

const at = (iso: string) => Date.parse(iso)
/** The net change of each account over the legs, zero accounts dropped. */
const net = (legs: ReadonlyArray<Leg>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const l of legs) out[l.account] = (out[l.account] ?? 0) + l.amountKobo
  for (const k of Object.keys(out)) if (out[k] === 0) delete out[k]
  return out
}

describe("lagosDay: the payout cap's day is the calendar day in Africa/Lagos (UTC+1, no daylight saving)", () => {
  it.each([
    ["2025-03-14T22:59:59.999Z", "2025-03-14"],
    ["2025-03-14T23:00:00.000Z", "2025-03-15"],
    ["2025-03-14T00:00:00.000Z", "2025-03-14"],
    // 23:00 UTC the day before is already Lagos midnight.
    ["2025-03-13T23:00:00.000Z", "2025-03-14"],
    ["2025-03-13T22:59:59.000Z", "2025-03-13"],
    // Month, leap day and year boundaries.
    ["2024-02-28T23:00:00.000Z", "2024-02-29"],
    ["2024-02-29T23:00:00.000Z", "2024-03-01"],
    ["2024-12-31T22:59:59.000Z", "2024-12-31"],
    ["2024-12-31T23:00:00.000Z", "2025-01-01"],
    // Summer and winter alike: no daylight saving in Nigeria.
    ["2025-07-01T22:59:59.000Z", "2025-07-01"],
    ["2025-07-01T23:00:00.000Z", "2025-07-02"]
  ])("%s is Lagos day %s", (iso, day) => {
    expect(lagosDay(at(iso))).toBe(day)
  })

  it("property: agrees with the time zone database's Africa/Lagos calendar day", () => {
    const lagos = new Intl.DateTimeFormat("en-CA", { timeZone: "Africa/Lagos", year: "numeric", month: "2-digit", day: "2-digit" })
    fc.assert(
      fc.property(fc.integer({ min: at("1990-01-01T00:00:00Z"), max: at("2099-01-01T00:00:00Z") }), (ms) => {
        const day = lagosDay(ms)
        expect(day).toBe(lagos.format(ms))
        expect(lagosDay(ms + 86_400_000)).not.toBe(day)
      }),
      { numRuns: 2_000 }
    )
  })
})

describe("decideRefund: the unrefunded surplus, never more than the overpayment, held money first, then what is free and available", () => {
  const base: RefundInput = { surplusKobo: 5_000, refundedKobo: 0, overpaymentKobo: 5_000, heldKobo: 0, freeKobo: 15_000, availableKobo: 15_000 }

  it("no_refundable_surplus: a deposit that paid no more than was due", () => {
    expect(decideRefund({ ...base, surplusKobo: 0 })).toEqual({ kind: "no_refundable_surplus" })
  })

  it("no_refundable_surplus: the surplus was refunded already (wholly, or more than the surplus by a later change)", () => {
    expect(decideRefund({ ...base, refundedKobo: 5_000 })).toEqual({ kind: "no_refundable_surplus" })
    expect(decideRefund({ ...base, refundedKobo: 6_000 })).toEqual({ kind: "no_refundable_surplus" })
  })

  it("no_refundable_surplus: the account is no longer overpaid (a later reversal lowered it)", () => {
    expect(decideRefund({ ...base, overpaymentKobo: 0 })).toEqual({ kind: "no_refundable_surplus" })
  })

  it("nothing_available: a refundable surplus, but none of it is held and nothing is free or available", () => {
    expect(decideRefund({ ...base, freeKobo: 0 })).toEqual({ kind: "nothing_available", refundableKobo: 5_000 })
    // Free money a payout drew on is not here either.
    expect(decideRefund({ ...base, availableKobo: 0 })).toEqual({ kind: "nothing_available", refundableKobo: 5_000 })
    expect(decideRefund({ ...base, overpaymentKobo: 3_000, freeKobo: 0, availableKobo: 0 })).toEqual({ kind: "nothing_available", refundableKobo: 3_000 })
  })

  it("refund: all from free money when nothing is held", () => {
    expect(decideRefund(base)).toEqual({ kind: "refund", amountKobo: 5_000, fromEscrowKobo: 0, fromFreeKobo: 5_000 })
  })

  it("refund: all from escrow when the hold covers it, even with free money about (held first)", () => {
    expect(decideRefund({ ...base, heldKobo: 15_000 })).toEqual({ kind: "refund", amountKobo: 5_000, fromEscrowKobo: 5_000, fromFreeKobo: 0 })
    expect(decideRefund({ ...base, heldKobo: 5_000, freeKobo: 0, availableKobo: 0 })).toEqual({ kind: "refund", amountKobo: 5_000, fromEscrowKobo: 5_000, fromFreeKobo: 0 })
  })

  it("refund: escrow first, the rest from free money", () => {
    expect(decideRefund({ ...base, heldKobo: 2_000 })).toEqual({ kind: "refund", amountKobo: 5_000, fromEscrowKobo: 2_000, fromFreeKobo: 3_000 })
  })

  it("refund: free money only as far as the available balance still has it (a payout took part)", () => {
    expect(decideRefund({ ...base, availableKobo: 1_200 })).toEqual({ kind: "refund", amountKobo: 1_200, fromEscrowKobo: 0, fromFreeKobo: 1_200 })
    expect(decideRefund({ ...base, heldKobo: 1_000, availableKobo: 1_200 })).toEqual({ kind: "refund", amountKobo: 2_200, fromEscrowKobo: 1_000, fromFreeKobo: 1_200 })
    // ... and as far as the account's own free money holds it.
    expect(decideRefund({ ...base, freeKobo: 700 })).toEqual({ kind: "refund", amountKobo: 700, fromEscrowKobo: 0, fromFreeKobo: 700 })
  })

  it("refund: only what is left of the surplus after earlier refunds, and never above the overpayment", () => {
    expect(decideRefund({ ...base, refundedKobo: 1_500 })).toEqual({ kind: "refund", amountKobo: 3_500, fromEscrowKobo: 0, fromFreeKobo: 3_500 })
    expect(decideRefund({ ...base, overpaymentKobo: 1_000 })).toEqual({ kind: "refund", amountKobo: 1_000, fromEscrowKobo: 0, fromFreeKobo: 1_000 })
  })

  const kobo = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 10_000_000 }))
  const inputArb: fc.Arbitrary<RefundInput> = fc.record({
    surplusKobo: kobo, refundedKobo: kobo, overpaymentKobo: kobo, heldKobo: kobo, freeKobo: kobo, availableKobo: kobo
  })

  it("property: never more than surplus - refunded, the overpayment, or held + min(free, available); escrow first; as much as it may", () => {
    fc.assert(
      fc.property(inputArb, (i) => {
        const d = decideRefund(i)
        const refundable = Math.min(i.surplusKobo - i.refundedKobo, i.overpaymentKobo)
        const reachable = i.heldKobo + Math.min(i.freeKobo, i.availableKobo)
        if (refundable <= 0) {
          expect(d).toEqual({ kind: "no_refundable_surplus" })
          return
        }
        if (d.kind === "no_refundable_surplus") throw new Error("refundable surplus called none")
        if (d.kind === "nothing_available") {
          expect(reachable).toBe(0)
          expect(d.refundableKobo).toBe(refundable)
          return
        }
        expect(d.amountKobo).toBeGreaterThan(0)
        expect(d.amountKobo).toBe(d.fromEscrowKobo + d.fromFreeKobo)
        expect(d.amountKobo).toBeLessThanOrEqual(i.surplusKobo - i.refundedKobo)
        expect(d.amountKobo).toBeLessThanOrEqual(i.overpaymentKobo)
        expect(d.amountKobo).toBeLessThanOrEqual(reachable)
        expect(d.fromEscrowKobo).toBeLessThanOrEqual(i.heldKobo)
        expect(d.fromFreeKobo).toBeLessThanOrEqual(Math.min(i.freeKobo, i.availableKobo))
        expect(d.fromEscrowKobo).toBeGreaterThanOrEqual(0)
        expect(d.fromFreeKobo).toBeGreaterThanOrEqual(0)
        // Escrow first: free money is touched only once the held money is used up (or the refund is covered).
        expect(d.fromEscrowKobo).toBe(Math.min(refundable, i.heldKobo))
        // And it sends all it may: the refundable amount, or all that is reachable.
        expect(d.amountKobo).toBe(Math.min(refundable, reachable))
        expect(isBalanced(refundClaimLegs("va_1", d.fromEscrowKobo, d.fromFreeKobo))).toBe(true)
      }),
      { numRuns: 2_000 }
    )
  })
})

describe("holdableKobo: the deposit's unrefunded amount, as far as it is still free and available", () => {
  it.each([
    [{ appliedKobo: 15_000, refundedKobo: 0, freeKobo: 20_000, availableKobo: 20_000 }, 15_000],
    [{ appliedKobo: 15_000, refundedKobo: 5_000, freeKobo: 20_000, availableKobo: 20_000 }, 10_000],
    [{ appliedKobo: 15_000, refundedKobo: 0, freeKobo: 4_000, availableKobo: 20_000 }, 4_000],
    [{ appliedKobo: 15_000, refundedKobo: 0, freeKobo: 20_000, availableKobo: 3_000 }, 3_000],
    [{ appliedKobo: 15_000, refundedKobo: 15_000, freeKobo: 20_000, availableKobo: 20_000 }, 0],
    [{ appliedKobo: 15_000, refundedKobo: 16_000, freeKobo: 20_000, availableKobo: 20_000 }, 0],
    [{ appliedKobo: 15_000, refundedKobo: 0, freeKobo: 0, availableKobo: 20_000 }, 0],
    [{ appliedKobo: 0, refundedKobo: 0, freeKobo: 20_000, availableKobo: 20_000 }, 0]
  ])("%o -> %i", (input, expected) => {
    expect(holdableKobo(input)).toBe(expected)
  })

  it("property: never negative, never above any of its bounds", () => {
    const k = fc.integer({ min: 0, max: 1_000_000 })
    fc.assert(
      fc.property(fc.record({ appliedKobo: k, refundedKobo: k, freeKobo: k, availableKobo: k }), (i) => {
        const h = holdableKobo(i)
        expect(h).toBeGreaterThanOrEqual(0)
        expect(h).toBeLessThanOrEqual(Math.max(0, i.appliedKobo - i.refundedKobo))
        expect(h).toBeLessThanOrEqual(i.freeKobo)
        expect(h).toBeLessThanOrEqual(i.availableKobo)
        expect(h).toBe(Math.max(0, Math.min(i.appliedKobo - i.refundedKobo, i.freeKobo, i.availableKobo)))
      })
    )
  })
})

describe("decideOutcome: every state and outcome", () => {
  const payout = transitOf("payout", null)
  const refund = transitOf("refund", "va_9")
  const A = 12_345
  const paid = (t: typeof payout) => ({ step: "paid", legs: [{ account: t.inTransit, amountKobo: A }, { account: LedgerAccount.providerClearing, amountKobo: -A }] })
  const returned = (t: typeof payout) => ({ step: "returned", legs: [{ account: t.inTransit, amountKobo: A }, { account: t.returnTo, amountKobo: -A }] })
  const reversed = (t: typeof payout) => ({ step: "reversed", legs: [{ account: LedgerAccount.providerClearing, amountKobo: A }, { account: t.returnTo, amountKobo: -A }] })

  type Row = readonly [TransferStatus, TransferOutcome, TransferStatus, "applied" | "repeat" | "ignored", ReadonlyArray<"paid" | "returned" | "reversed">]
  const table: ReadonlyArray<Row> = [
    ["Pending", "success", "Successful", "applied", ["paid"]],
    ["Pending", "failed", "Failed", "applied", ["returned"]],
    ["Pending", "reversed", "Reversed", "applied", ["paid", "reversed"]],
    ["Processing", "success", "Successful", "applied", ["paid"]],
    ["Processing", "failed", "Failed", "applied", ["returned"]],
    ["Processing", "reversed", "Reversed", "applied", ["paid", "reversed"]],
    ["Successful", "success", "Successful", "repeat", []],
    ["Successful", "failed", "Successful", "ignored", []],
    ["Successful", "reversed", "Reversed", "applied", ["reversed"]],
    ["Failed", "success", "Failed", "ignored", []],
    ["Failed", "failed", "Failed", "repeat", []],
    ["Failed", "reversed", "Failed", "ignored", []],
    ["Reversed", "success", "Reversed", "repeat", []],
    ["Reversed", "failed", "Reversed", "ignored", []],
    ["Reversed", "reversed", "Reversed", "repeat", []]
  ]

  it.each(table)("%s + %s -> %s (%s; journals %j)", (status, outcome, next, effect, steps) => {
    for (const t of [payout, refund]) {
      const d = decideOutcome(status, outcome, A, t)
      expect(d.status).toBe(next)
      expect(d.effect).toBe(effect)
      const byStep = { paid: paid(t), returned: returned(t), reversed: reversed(t) }
      expect(d.journals).toEqual(steps.map((s) => byStep[s]))
      for (const j of d.journals) expect(isBalanced(j.legs)).toBe(true)
    }
  })

  it("a payout's money goes back to payouts_drawn; a refund's back to its account's escrow; a settlement leg's to its source", () => {
    expect(payout).toEqual({ inTransit: "payouts_in_transit", returnTo: "payouts_drawn" })
    expect(refund).toEqual({ inTransit: "refunds_in_transit", returnTo: "escrow:va_9" })
    expect(() => transitOf("refund", null)).toThrow()
    expect(transitOf("settlement", "va_9", "sub_merchant:sm_1")).toEqual({ inTransit: "settlements_in_transit", returnTo: "sub_merchant:sm_1" })
    expect(() => transitOf("settlement", "va_9")).toThrow()
  })

  const statusArb = fc.constantFrom<TransferStatus>("Pending", "Processing", "Successful", "Failed", "Reversed")
  const outcomeArb = fc.constantFrom<TransferOutcome>("success", "failed", "reversed")

  it("property: the same outcome again is a repeat; a final state never changes except Successful -> Reversed", () => {
    fc.assert(
      fc.property(statusArb, outcomeArb, fc.integer({ min: 1, max: 10_000_000 }), (status, outcome, amount) => {
        const d = decideOutcome(status, outcome, amount, payout)
        for (const j of d.journals) expect(isBalanced(j.legs)).toBe(true)
        if (d.effect !== "applied") {
          expect(d.status).toBe(status)
          expect(d.journals).toEqual([])
        } else {
          expect(FINAL_STATUSES).toContain(d.status)
          expect(decideOutcome(d.status, outcome, amount, payout).effect).toBe("repeat")
        }
        if (status === "Failed" || status === "Reversed") expect(d.status).toBe(status)
        if (status === "Successful") expect(["Successful", "Reversed"]).toContain(d.status)
      })
    )
  })

  it("property: whatever outcomes arrive in whatever order, the claim and the journals leave the money where the final state says", () => {
    fc.assert(
      fc.property(fc.array(outcomeArb, { maxLength: 8 }), fc.constantFrom("payout" as const, "refund" as const), fc.integer({ min: 1, max: 1_000_000 }), (outcomes, kind, amount) => {
        const t = transitOf(kind, "va_1")
        // The claim: out of where the money was (payouts_drawn, or the account's escrow), into transit.
        const legs: Array<Leg> = kind === "payout" ? [...payoutClaimLegs(amount)] : [...refundClaimLegs("va_1", amount, 0)]
        let status: TransferStatus = "Processing"
        for (const o of outcomes) {
          const d = decideOutcome(status, o, amount, t)
          for (const j of d.journals) legs.push(...j.legs)
          status = d.status
        }
        const n = net(legs)
        if (status === "Processing") {
          expect(n).toEqual({ [t.returnTo]: amount, [t.inTransit]: -amount })
        } else if (status === "Successful") {
          expect(n).toEqual({ [t.returnTo]: amount, [LedgerAccount.providerClearing]: -amount })
        } else {
          // Failed or Reversed: the money is back where it came from; nothing stays in transit or at the provider.
          expect(n).toEqual({})
        }
      }),
      { numRuns: 1_000 }
    )
  })
})

describe("references and journal ids", () => {
  it.each([
    ["rfd_abc", true],
    ["RFD_abc", true],
    ["stl_1", true],
    ["Stl_", true],
    ["rfd", false],
    ["rfdx", false],
    ["x_rfd_1", false],
    ["refund-1", false],
    ["settle_1", false],
    ["po-1", false]
  ])("isReservedReference(%s) = %s", (ref, reserved) => {
    expect(isReservedReference(ref)).toBe(reserved)
  })

  it("a deposit's refunds are rfd_<ref>, then rfd_<ref>_2, ... (always reserved)", () => {
    expect(refundReference("9999990001", 1)).toBe("rfd_9999990001")
    expect(refundReference("9999990001", 2)).toBe("rfd_9999990001_2")
    expect(refundReference("9999990001", 3)).toBe("rfd_9999990001_3")
    expect(isReservedReference(refundReference("x", 5))).toBe(true)
  })

  it("journal ids by kind and step; events by state", () => {
    expect(MoneyJournal.hold("r1", 2)).toBe("hold:r1:2")
    expect(MoneyJournal.release("r1", 2)).toBe("release:r1:2")
    expect(MoneyJournal.claim("payout", "po-1")).toBe("pay:po-1")
    expect(MoneyJournal.claim("refund", "rfd_r1")).toBe("rfd:rfd_r1")
    expect(MoneyJournal.claim("settlement", "stl_1")).toBe("stl:stl_1")
    expect(MoneyJournal.outcome("payout", "po-1", "paid")).toBe("pay:po-1:paid")
    expect(MoneyJournal.outcome("refund", "rfd_r1", "returned")).toBe("rfd:rfd_r1:returned")
    expect(kindOf("api")).toBe("payout")
    expect(kindOf("dashboard")).toBe("payout")
    expect(kindOf("refund")).toBe("refund")
    expect(kindOf("settlement")).toBe("settlement")
    expect(transferEventType("Successful")).toBe("transfer.successful")
    expect(transferEventType("Failed")).toBe("transfer.failed")
    expect(transferEventType("Reversed")).toBe("transfer.reversed")
    expect(transferEventType("Pending")).toBeUndefined()
    expect(transferEventType("Processing")).toBeUndefined()
  })

  it("claim legs balance and leave out zero legs", () => {
    expect(refundClaimLegs("va", 0, 300)).toEqual([{ account: "customer_funds:va", amountKobo: 300 }, { account: "refunds_in_transit", amountKobo: -300 }])
    expect(refundClaimLegs("va", 200, 0)).toEqual([{ account: "escrow:va", amountKobo: 200 }, { account: "refunds_in_transit", amountKobo: -200 }])
    expect(refundClaimLegs("va", 200, 300)).toHaveLength(3)
    expect(isBalanced(refundClaimLegs("va", 200, 300))).toBe(true)
    expect(payoutClaimLegs(500)).toEqual([{ account: "payouts_drawn", amountKobo: 500 }, { account: "payouts_in_transit", amountKobo: -500 }])
  })
})
