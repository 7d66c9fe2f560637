import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { koboToNaira, nairaToKobo } from "../../src/domain/Naira.js"

/** Kobo from 1 (₦0.01) to 10^14 (₦10^12). */
const kobo = fc.integer({ min: 1, max: 100_000_000_000_000 })
const text = (k: number, minPlaces: number) => {
  const whole = Math.floor(k / 100)
  const cents = String(k % 100).padStart(2, "0")
  const places = cents.replace(/0+$/, "")
  return places.length >= minPlaces ? `${whole}.${places}` : `${whole}.${cents.slice(0, Math.max(minPlaces, places.length))}`
}

describe("naira to kobo (exact, from the decimal text)", () => {
  it("every decimal string of ₦0.01 to ₦10^12, with and without trailing zeros, converts exactly", () =>
    fc.assert(fc.property(kobo, fc.integer({ min: 0, max: 4 }), (k, zeros) => {
      const plain = text(k, 0).replace(/\.$/, "")
      expect(nairaToKobo(plain)).toEqual(Either.right(k))
      expect(nairaToKobo(`${text(k, 2)}${"0".repeat(zeros)}`)).toEqual(Either.right(k))
    }), { numRuns: 2_000 }))

  it("every JSON number of ₦0.01 to ₦10^12 converts exactly (and back)", () =>
    fc.assert(fc.property(kobo, (k) => {
      const naira = koboToNaira(k)
      expect(JSON.parse(JSON.stringify(naira))).toBe(naira)
      expect(nairaToKobo(naira)).toEqual(Either.right(k))
    }), { numRuns: 2_000 }))

  it("a fraction of a kobo is refused, however it is written", () =>
    fc.assert(fc.property(kobo, fc.integer({ min: 1, max: 9 }), (k, extra) => {
      expect(Either.isLeft(nairaToKobo(`${text(k, 2)}${extra}`))).toBe(true)
    }), { numRuns: 1_000 }))

  it("the samples: 3000, \"2990.00\", 1500.5; and what is not an amount", () => {
    expect(nairaToKobo(3000)).toEqual(Either.right(300_000))
    expect(nairaToKobo("2990.00")).toEqual(Either.right(299_000))
    expect(nairaToKobo(1500.5)).toEqual(Either.right(150_050))
    expect(nairaToKobo("0.01")).toEqual(Either.right(1))
    for (const bad of [0.1 + 0.2, "1.005", -5, "-5", "1e3", 1e21, "", " ", "12,000.00", null, undefined, {}, Number.NaN, Infinity, "0x10"]) {
      expect(Either.isLeft(nairaToKobo(bad)), JSON.stringify(bad)).toBe(true)
    }
  })
})
