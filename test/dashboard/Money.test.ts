import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { formatBps, formatNaira, nairaInput, parseNaira } from "../../src/dashboard/Money.js"

/** The dashboard's naira: typed by people, sent as integer kobo (string arithmetic, no floats), shown with kobo. */

const kobo = (s: string, allowZero = false) => {
  const r = parseNaira(s, { allowZero })
  if (!r.ok) throw new Error(`${s}: ${r.error}`)
  return r.kobo
}
const refused = (s: string, allowZero = false) => {
  const r = parseNaira(s, { allowZero })
  expect(r.ok, `${JSON.stringify(s)} should be refused`).toBe(false)
  return r.ok ? "" : r.error
}

describe("parseNaira", () => {
  it("reads naira with or without thousands commas, kobo, the sign and the currency code", () => {
    expect(kobo("1500")).toBe(150_000)
    expect(kobo("1,500")).toBe(150_000)
    expect(kobo("1,500.50")).toBe(150_050)
    expect(kobo("1,500.5")).toBe(150_050)
    expect(kobo("1500.05")).toBe(150_005)
    expect(kobo("0.01")).toBe(1)
    expect(kobo("₦1,500.00")).toBe(150_000)
    expect(kobo("  NGN 20 ")).toBe(2_000)
    expect(kobo("ngn20.10")).toBe(2_010)
    expect(kobo("1,234,567.89")).toBe(123_456_789)
    expect(kobo("007")).toBe(700)
  })

  it("is exact where floats are not", () => {
    // 1.15 * 100 = 114.99999999999999 and 0.29 * 100 = 28.999999999999996 in floating point.
    expect(kobo("1.15")).toBe(115)
    expect(kobo("0.29")).toBe(29)
    expect(kobo("4.35")).toBe(435)
    expect(kobo("90,071,992,547,409.91")).toBe(Number.MAX_SAFE_INTEGER)
  })

  it("refuses what is not an amount in naira, saying why", () => {
    expect(refused("")).toMatch(/Enter an amount/)
    expect(refused("   ")).toMatch(/Enter an amount/)
    expect(refused("-5")).toMatch(/negative/)
    expect(refused("1.505")).toMatch(/two digits after the point/)
    expect(refused("1,500.505")).toMatch(/two digits after the point/)
    for (const bad of ["1,50", "1,5000", ",500", "1,,500", "1500,", "1.2.3", "1e5", "1E3", "abc", "12a", "1 500", "0x10", ".5", "5.", "Infinity", "NaN", "+5", "1_000", "₦", "١٢٣"]) refused(bad)
    expect(refused("0")).toMatch(/more than ₦0\.00/)
    expect(refused("0.00")).toMatch(/more than ₦0\.00/)
    expect(refused("90,071,992,547,409.92")).toMatch(/too large/)
    expect(refused("99999999999999999999")).toMatch(/too large/)
  })

  it("accepts zero only when asked to", () => {
    expect(kobo("0", true)).toBe(0)
    expect(kobo("0.00", true)).toBe(0)
  })

  it("round-trips every safe kobo amount through the formatter and the input form", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (k) => {
      expect(kobo(formatNaira(k))).toBe(k)
      expect(kobo(nairaInput(k))).toBe(k)
    }))
  })
})

describe("formatNaira", () => {
  it("shows naira with kobo and thousands commas", () => {
    expect(formatNaira(150_000)).toBe("₦1,500.00")
    expect(formatNaira(150_050)).toBe("₦1,500.50")
    expect(formatNaira(5)).toBe("₦0.05")
    expect(formatNaira(0)).toBe("₦0.00")
    expect(formatNaira(123_456_789)).toBe("₦1,234,567.89")
    expect(formatNaira(-2_500)).toBe("-₦25.00")
    expect(formatNaira(Number.MAX_SAFE_INTEGER)).toBe("₦90,071,992,547,409.91")
  })
  it("refuses to show what is not integer kobo", () => {
    expect(formatNaira(1.5)).toBe("—")
    expect(formatNaira(Number.NaN)).toBe("—")
  })
  it("shows basis points as a percentage", () => {
    expect(formatBps(9_250)).toBe("92.50%")
    expect(formatBps(10_000)).toBe("100.00%")
    expect(formatBps(5)).toBe("0.05%")
  })
})
