import { describe, expect, it } from "vitest"
import { formatWat } from "../../src/domain/Wat.js"

describe("formatWat (Africa/Lagos, UTC+1, no daylight saving)", () => {
  it("writes the Lagos day, month, year and 24-hour time with WAT", () => {
    expect(formatWat(Date.parse("2026-11-29T13:05:00Z"))).toBe("29 Nov 2026, 14:05 WAT")
    expect(formatWat(Date.parse("2026-01-05T08:00:00.000Z"))).toBe("5 Jan 2026, 09:00 WAT")
  })

  it("crosses the Lagos day, month and year an hour before UTC does", () => {
    expect(formatWat(Date.parse("2026-11-29T22:59:59Z"))).toBe("29 Nov 2026, 23:59 WAT")
    expect(formatWat(Date.parse("2026-11-29T23:00:00Z"))).toBe("30 Nov 2026, 00:00 WAT")
    expect(formatWat(Date.parse("2026-12-31T23:30:00Z"))).toBe("1 Jan 2027, 00:30 WAT")
    expect(formatWat(Date.parse("2028-02-28T23:00:00Z"))).toBe("29 Feb 2028, 00:00 WAT")
  })

  it("is UTC+1 in every month (Nigeria keeps no summer time), whatever the host's zone", () => {
    for (let m = 0; m < 12; m++) {
      const text = formatWat(Date.UTC(2026, m, 15, 11, 7))
      expect(text).toMatch(/^15 [A-Z][a-z]{2} 2026, 12:07 WAT$/)
    }
  })

  it("drops seconds rather than rounding them up", () => {
    expect(formatWat(Date.parse("2026-11-29T13:05:59.999Z"))).toBe("29 Nov 2026, 14:05 WAT")
  })

  it("refuses what is not an instant", () => {
    expect(() => formatWat(Number.NaN)).toThrow(RangeError)
    expect(() => formatWat(Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })
})
