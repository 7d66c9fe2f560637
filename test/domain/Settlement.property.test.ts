import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  BPS_WHOLE, inPaymentOrder, legReference, planProblems, settlementStatusOf, type SplitLeg, splitNet, subMerchantPlan
} from "../../src/domain/Settlement.js"

// The split of one account's net into legs (interface "Settlement settings", rules 3 to 5; DESIGN.md "Wire shapes").

const netArb = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }))

/** A valid plan: unique priorities, each leg bps or flat, percentages at most 10000 in total. */
const planArb: fc.Arbitrary<ReadonlyArray<SplitLeg>> = fc
  .uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 0, maxLength: 8 })
  .chain((priorities) =>
    fc.tuple(
      ...priorities.map((priority) =>
        fc.record({
          subMerchantRef: fc.option(fc.constantFrom("sm-a", "sm-b"), { nil: null }),
          kind: fc.constantFrom("bps", "flat"),
          bps: fc.integer({ min: 1, max: BPS_WHOLE }),
          flatKobo: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 1_000_000 })),
          priority: fc.constant(priority)
        })
      )
    )
  )
  .map((legs) => {
    let room = BPS_WHOLE
    return legs.map((l): SplitLeg => {
      if (l.kind === "flat" || room === 0) return { subMerchantRef: l.subMerchantRef, bps: null, flatKobo: l.flatKobo, priority: l.priority }
      const bps = Math.min(l.bps, room)
      room -= bps
      return { subMerchantRef: l.subMerchantRef, bps, flatKobo: null, priority: l.priority }
    })
  })

describe("splitNet under fast-check", () => {
  it("the legs sum exactly to the net, none is negative or zero, flat legs over the net skip the whole settlement", () =>
    fc.assert(
      fc.property(netArb, planArb, (net, plan) => {
        expect(planProblems(plan)).toEqual([])
        const flats = plan.reduce((s, l) => s + (l.flatKobo ?? 0), 0)
        const d = splitNet(net, plan)
        if (flats > net) {
          expect(d.kind).toBe("skip")
          return
        }
        expect(d.kind).toBe("split")
        if (d.kind !== "split") return
        expect(d.amounts.reduce((s, a) => s + a.amountKobo, 0)).toBe(net)
        for (const a of d.amounts) expect(a.amountKobo).toBeGreaterThan(0)
      }),
      { numRuns: 2_000 }
    ))

  it("percentages are floors of what the flat legs leave, the rounding remainder lands on the first leg, the rest on the tenant's last leg", () =>
    fc.assert(
      fc.property(netArb, planArb, (net, plan) => {
        const d = splitNet(net, plan)
        if (d.kind !== "split") return
        const ordered = inPaymentOrder(plan)
        const rest = BigInt(net - ordered.reduce((s, l) => s + (l.flatKobo ?? 0), 0))
        const floor = (bps: number) => Number((rest * BigInt(bps)) / 10_000n)
        const bpsTotal = ordered.reduce((s, l) => s + (l.bps ?? 0), 0)
        const remainder = floor(bpsTotal) - ordered.reduce((s, l) => s + (l.bps !== null ? floor(l.bps) : 0), 0)
        expect(remainder).toBeGreaterThanOrEqual(0)
        expect(remainder).toBeLessThan(Math.max(1, ordered.filter((l) => l.bps !== null).length))
        // Every plan leg, in payment order, with its exact amount (zero amounts left out).
        const expected = ordered.map((leg, i) => ({ leg, amountKobo: (leg.flatKobo ?? floor(leg.bps!)) + (i === 0 ? remainder : 0) }))
        expected.push({ leg: null as unknown as SplitLeg, amountKobo: Number(rest) - floor(bpsTotal) })
        expect(d.amounts).toEqual(expected.filter((a) => a.amountKobo > 0).map((a) => ({ leg: a.leg ?? null, amountKobo: a.amountKobo })))
        // A percentage leg other than the first never gets more than its floor share.
        for (const a of d.amounts.slice(1)) if (a.leg?.bps != null) expect(a.amountKobo).toBe(floor(a.leg.bps))
      }),
      { numRuns: 2_000 }
    ))

  it("an empty plan is a single sweep of the whole net to the settlement account", () =>
    fc.assert(
      fc.property(netArb, (net) => {
        expect(splitNet(net, [])).toEqual({ kind: "split", amounts: net === 0 ? [] : [{ leg: null, amountKobo: net }] })
      })
    ))

  it("a sub-merchant's plan: the fee is the floor, the sub-merchant gets the rest", () =>
    fc.assert(
      fc.property(netArb, fc.integer({ min: 0, max: BPS_WHOLE }), (net, feeBps) => {
        const d = splitNet(net, subMerchantPlan("sm", feeBps))
        if (d.kind !== "split") throw new Error("a sub-merchant plan never skips")
        const fee = Number((BigInt(net) * BigInt(feeBps)) / 10_000n)
        expect(d.amounts.filter((a) => a.leg?.subMerchantRef === "sm").reduce((s, a) => s + a.amountKobo, 0)).toBe(net - fee)
        expect(d.amounts.filter((a) => a.leg?.subMerchantRef !== "sm").reduce((s, a) => s + a.amountKobo, 0)).toBe(fee)
      })
    ))
})

describe("splitNet by hand", () => {
  const leg = (priority: number, x: Partial<SplitLeg>): SplitLeg => ({ subMerchantRef: null, bps: null, flatKobo: null, priority, ...x })

  it.each([
    // [net, plan, amounts in payment order]
    [10_001, [leg(1, { subMerchantRef: "a", bps: 2_000 }), leg(2, { flatKobo: 100 })], [1_980, 100, 7_921]],
    [100, [leg(0, { bps: 3_333 }), leg(1, { bps: 3_333 }), leg(2, { bps: 3_334 })], [34, 33, 33]],
    [10, [leg(5, { bps: 3_333, subMerchantRef: "b" }), leg(1, { bps: 3_333, subMerchantRef: "a" }), leg(9, { bps: 3_334 })], [4, 3, 3]],
    [1_000, [leg(0, { flatKobo: 1_000 })], [1_000]],
    [999, [leg(0, { bps: 5_000 })], [499, 500]],
    [0, [leg(0, { bps: 5_000 })], []]
  ])("%i kobo", (net, plan, amounts) => {
    const d = splitNet(net, plan)
    expect(d.kind).toBe("split")
    if (d.kind === "split") expect(d.amounts.map((a) => a.amountKobo)).toEqual(amounts)
  })

  it("flat legs of 1,001 kobo over a net of 1,000: skipped with the reason, never partial", () => {
    const d = splitNet(1_000, [leg(0, { flatKobo: 600 }), leg(1, { flatKobo: 401 }), leg(2, { bps: 10 })])
    expect(d).toMatchObject({ kind: "skip", code: "flat_legs_exceed_net" })
    if (d.kind === "skip") expect(d.reason).toContain("1001 kobo")
  })

  it("refuses a negative or fractional net (the callers' bug)", () => {
    expect(() => splitNet(-1, [])).toThrow()
    expect(() => splitNet(1.5, [])).toThrow()
  })
})

describe("the plan's problems, statuses and references", () => {
  it("names each problem", () => {
    const paths = (plan: ReadonlyArray<SplitLeg>) => planProblems(plan).map((p) => p.path)
    const l = (priority: number, bps: number | null, flatKobo: number | null): SplitLeg => ({ subMerchantRef: null, bps, flatKobo, priority })
    expect(paths([l(0, 100, 5)])).toEqual(["splits.0"])
    expect(paths([l(0, null, null)])).toEqual(["splits.0"])
    expect(paths([l(0, 6_000, null), l(1, 4_001, null)])).toEqual(["splits"])
    expect(paths([l(3, 100, null), l(3, null, 10)])).toEqual(["splits.1.priority"])
    expect(paths(Array.from({ length: 21 }, (_, i) => l(i, null, 1)))).toEqual(["splits"])
    expect(paths([l(0, 10_000, null), l(1, null, 10)])).toEqual([])
  })

  it("a settlement is Paid when every leg is, Failed after a leg's last attempt, Processing otherwise", () => {
    expect(settlementStatusOf([])).toBe("Skipped")
    expect(settlementStatusOf([{ status: "Successful", attempts: 1 }, { status: "Successful", attempts: 2 }])).toBe("Paid")
    expect(settlementStatusOf([{ status: "Successful", attempts: 1 }, { status: "Failed", attempts: 2 }])).toBe("Processing")
    expect(settlementStatusOf([{ status: "Successful", attempts: 1 }, { status: "Reversed", attempts: 3 }])).toBe("Failed")
    expect(settlementStatusOf([{ status: "Processing", attempts: 4 }])).toBe("Processing")
  })

  it("leg references: the first attempt plain, later ones numbered", () => {
    expect(legReference("set_1", 2, 1)).toBe("stl_set_1_2")
    expect(legReference("set_1", 2, 3)).toBe("stl_set_1_2_3")
  })
})
