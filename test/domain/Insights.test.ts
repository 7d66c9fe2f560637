import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  AGING_BUCKETS,
  agingBucketOf,
  agingOf,
  bandOf,
  collectionRateBps,
  customerScore,
  daysPastDue,
  forecastWeeks,
  HIGH_RISK_SCORE,
  isOverdue,
  lagosDayNumber,
  lagosWeekStart,
  riskBandOf,
  runRatePerDayKobo
} from "../../src/domain/Insights.js"

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS

/** An instant given as a Lagos wall-clock time (UTC+1 all year). */
const lagos = (y: number, m: number, d: number, h = 0, min = 0, s = 0, ms = 0) =>
  Date.UTC(y, m - 1, d, h, min, s, ms) - HOUR_MS

// The model, independent of the module: a Lagos day is floor((t + 1h) / 24h); 1970-01-01 was a Thursday.
const modelDay = (t: number) => Math.floor((t + HOUR_MS) / DAY_MS)
const modelMonday = (day: number) => day - (((day + 3) % 7) + 7) % 7 // day 0 (Thu) -> -3 (Mon 1969-12-29)
const isoOfDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10)

// 2025-01-13 is a Monday, 2025-01-15 a Wednesday.
const WEDNESDAY = lagos(2025, 1, 15, 10)
const MONDAY = lagos(2025, 1, 13, 10)

describe("collectionRateBps", () => {
  it("hand-computed fixtures", () => {
    // ₦750 of ₦1,000: 75000 x 10000 / 100000 = 7500
    expect(collectionRateBps(75_000, 100_000)).toBe(7_500)
    // 1 kobo of 3: 10000 / 3 = 3333.33 -> 3333
    expect(collectionRateBps(1, 3)).toBe(3_333)
    // 2 of 3: 20000 / 3 = 6666.67 -> 6666 (floor, not rounded)
    expect(collectionRateBps(2, 3)).toBe(6_666)
    // 99,999 of 100,000: 999990000 / 100000 = 9999.9 -> 9999: never 100% until fully collected
    expect(collectionRateBps(99_999, 100_000)).toBe(9_999)
    expect(collectionRateBps(100_000, 100_000)).toBe(10_000)
    // overpaid: 150% capped at 10000
    expect(collectionRateBps(150_000, 100_000)).toBe(10_000)
    // nothing expected: 0, whatever was collected
    expect(collectionRateBps(0, 0)).toBe(0)
    expect(collectionRateBps(5_000, 0)).toBe(0)
    expect(collectionRateBps(0, 100_000)).toBe(0)
  })

  it("is exact beyond floating point (BigInt)", () => {
    const max = Number.MAX_SAFE_INTEGER // 9007199254740991
    // (max - 1) x 10000 / max = 9999.99999999999889 -> 9999; in floating point it rounds to 10000
    expect(((max - 1) * 10_000) / max).toBe(10_000)
    expect(collectionRateBps(max - 1, max)).toBe(9_999)
    // totals past 2^53 as bigints: 2^70 of 2^71 = 5000
    expect(collectionRateBps(2n ** 70n, 2n ** 71n)).toBe(5_000)
    expect(collectionRateBps(2n ** 71n - 1n, 2n ** 71n)).toBe(9_999)
  })

  it("rejects what is not kobo", () => {
    expect(() => collectionRateBps(-1, 10)).toThrow(RangeError)
    expect(() => collectionRateBps(1.5, 10)).toThrow(RangeError)
    expect(() => collectionRateBps(1, -10n)).toThrow(RangeError)
  })

  it("property: in 0..10000, floor of the exact ratio, monotone in collected", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 80n }), fc.bigInt({ min: 0n, max: 2n ** 80n }), fc.bigInt({ min: 0n, max: 2n ** 80n }), (a, b, expected) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a]
        const rLo = collectionRateBps(lo, expected)
        const rHi = collectionRateBps(hi, expected)
        expect(rLo).toBeGreaterThanOrEqual(0)
        expect(rHi).toBeLessThanOrEqual(10_000)
        expect(rLo).toBeLessThanOrEqual(rHi)
        if (expected > 0n && hi < expected) {
          // rate/10000 <= hi/expected < (rate+1)/10000
          expect(BigInt(rHi) * expected <= hi * 10_000n).toBe(true)
          expect(hi * 10_000n < BigInt(rHi + 1) * expected).toBe(true)
        }
      })
    )
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 26 }), fc.integer({ min: 1, max: 2 ** 26 }), (c, e) => {
        expect(collectionRateBps(c, e)).toBe(Math.min(10_000, Math.floor((c * 10_000) / e)))
      })
    )
  })
})

describe("daysPastDue (Lagos calendar days)", () => {
  const due = lagos(2025, 1, 13) // Monday 00:00 Lagos = Sunday 23:00 UTC
  it("0 on the due day, whatever the hour", () => {
    expect(daysPastDue(due, due)).toBe(0)
    expect(daysPastDue(due, lagos(2025, 1, 13, 23, 59, 59, 999))).toBe(0)
    // 2025-01-13T22:59:59.999Z is still Monday in Lagos
    expect(daysPastDue(due, Date.UTC(2025, 0, 13, 22, 59, 59, 999))).toBe(0)
  })
  it("1 from the next Lagos midnight (23:00 UTC), not the UTC one", () => {
    expect(daysPastDue(due, Date.UTC(2025, 0, 13, 23))).toBe(1) // Tuesday 00:00 Lagos
    expect(daysPastDue(due, lagos(2025, 1, 14))).toBe(1)
    // Due 23:30 Lagos Monday, asked 00:10 Lagos Tuesday: 40 minutes, but a day (both are Monday in UTC)
    expect(daysPastDue(lagos(2025, 1, 13, 23, 30), lagos(2025, 1, 14, 0, 10))).toBe(1)
    // Due 00:10 Lagos Tuesday (23:10 UTC Monday), asked 23:50 Lagos Tuesday: same Lagos day
    expect(daysPastDue(lagos(2025, 1, 14, 0, 10), lagos(2025, 1, 14, 23, 50))).toBe(0)
  })
  it("counts calendar days, across a month and a leap day", () => {
    // Monday -> Thursday: 3
    expect(daysPastDue(due, lagos(2025, 1, 16, 8))).toBe(3)
    // 2024-02-28 -> 2024-03-01: 29th in between, 2 days
    expect(daysPastDue(lagos(2024, 2, 28, 12), lagos(2024, 3, 1, 0, 1))).toBe(2)
    // Dec 31 23:59 -> Jan 1 00:00 (Lagos): 1
    expect(daysPastDue(lagos(2024, 12, 31, 23, 59), lagos(2025, 1, 1))).toBe(1)
  })
  it("0 when not yet due", () => {
    expect(daysPastDue(lagos(2025, 2, 1), lagos(2025, 1, 1))).toBe(0)
    expect(daysPastDue(due, due - 1)).toBe(0)
  })
  it("property: the Lagos day difference, at least 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 0, max: 4_102_444_800_000 }), (d, n) => {
        expect(daysPastDue(d, n)).toBe(Math.max(0, modelDay(n) - modelDay(d)))
        expect(lagosDayNumber(n)).toBe(modelDay(n))
      })
    )
  })
})

describe("overdue: past the due date, not aging's 0-7", () => {
  const due = lagos(2025, 1, 13, 9) // due Monday
  it("is not overdue before or on its due day (whatever the hour), and is from the next Lagos midnight", () => {
    expect(isOverdue(daysPastDue(due, lagos(2025, 1, 10)))).toBe(false) // not yet due
    expect(isOverdue(daysPastDue(due, lagos(2025, 1, 13, 23, 59, 59, 999)))).toBe(false) // due today
    expect(isOverdue(daysPastDue(due, lagos(2025, 1, 14)))).toBe(true) // Tuesday 00:00: 1 day past due
    // Aging's "0-7" holds all three of those.
    expect([lagos(2025, 1, 10), lagos(2025, 1, 13, 20), lagos(2025, 1, 14)].map((n) => agingBucketOf(daysPastDue(due, n)))).toEqual(["0-7", "0-7", "0-7"])
  })
})

describe("aging", () => {
  it("bucket boundaries", () => {
    expect(AGING_BUCKETS).toEqual(["0-7", "8-30", "31-60", "60+"])
    expect(agingBucketOf(0)).toBe("0-7")
    expect(agingBucketOf(7)).toBe("0-7")
    expect(agingBucketOf(8)).toBe("8-30")
    expect(agingBucketOf(30)).toBe("8-30")
    expect(agingBucketOf(31)).toBe("31-60")
    expect(agingBucketOf(60)).toBe("31-60")
    expect(agingBucketOf(61)).toBe("60+")
    expect(agingBucketOf(10_000)).toBe("60+")
  })

  it("hand-computed fixture", () => {
    const now = lagos(2025, 3, 31, 12) // Monday 31 March 2025, noon Lagos
    const items = [
      { outstandingKobo: 10_000, dueMs: lagos(2025, 4, 5) }, //    not yet due      -> 0-7
      { outstandingKobo: 20_000, dueMs: lagos(2025, 3, 31, 23, 59) }, // due today -> 0 days, 0-7
      { outstandingKobo: 30_000, dueMs: lagos(2025, 3, 24, 23, 59) }, // 24 -> 31: 7 days, 0-7
      { outstandingKobo: 40_000, dueMs: lagos(2025, 3, 23) }, //   8 days           -> 8-30
      { outstandingKobo: 50_000, dueMs: lagos(2025, 3, 1) }, //    30 days          -> 8-30
      { outstandingKobo: 60_000, dueMs: lagos(2025, 2, 28) }, //   31 days (Feb 28 + 31 = Mar 31) -> 31-60
      { outstandingKobo: 70_000, dueMs: lagos(2025, 1, 30) }, //   Jan 30 -> Mar 31: 1 + 28 + 31 = 60 -> 31-60
      { outstandingKobo: 80_000, dueMs: lagos(2025, 1, 29, 23, 59) }, // 61 days -> 60+
      { outstandingKobo: 90_000, dueMs: lagos(2024, 3, 31) }, //   a year           -> 60+
      { outstandingKobo: 0, dueMs: lagos(2024, 1, 1) } //          paid: left out
    ]
    expect(agingOf(items, now)).toEqual([
      { label: "0-7", count: 3, amountKobo: 60_000 }, //    10,000 + 20,000 + 30,000
      { label: "8-30", count: 2, amountKobo: 90_000 }, //   40,000 + 50,000
      { label: "31-60", count: 2, amountKobo: 130_000 }, // 60,000 + 70,000
      { label: "60+", count: 2, amountKobo: 170_000 } //    80,000 + 90,000
    ])
  })

  it("all four buckets even when empty", () => {
    expect(agingOf([], 0)).toEqual(AGING_BUCKETS.map((label) => ({ label, count: 0, amountKobo: 0 })))
  })

  it("rejects what is not kobo", () => {
    expect(() => agingOf([{ outstandingKobo: -1, dueMs: 0 }], 0)).toThrow(RangeError)
  })

  it("property: amounts sum to the outstanding total, counts to the items with something outstanding", () => {
    const item = fc.record({ outstandingKobo: fc.oneof(fc.constant(0), fc.nat({ max: 10 ** 12 })), dueMs: fc.integer({ min: 1.6e12, max: 1.9e12 }) })
    fc.assert(
      fc.property(fc.array(item, { maxLength: 60 }), fc.integer({ min: 1.6e12, max: 1.9e12 }), (items, now) => {
        const buckets = agingOf(items, now)
        expect(buckets.map((b) => b.label)).toEqual([...AGING_BUCKETS])
        expect(buckets.reduce((s, b) => s + b.amountKobo, 0)).toBe(items.reduce((s, i) => s + i.outstandingKobo, 0))
        expect(buckets.reduce((s, b) => s + b.count, 0)).toBe(items.filter((i) => i.outstandingKobo > 0).length)
        for (const b of buckets) if (b.count === 0) expect(b.amountKobo).toBe(0)
      })
    )
  })
})

describe("forecast", () => {
  // ₦30,000 in the trailing 30 days: 3,000,000 / 30 = 100,000 kobo a day
  const TRAILING = 3_000_000

  it("run-rate is floor(trailing / 30)", () => {
    expect(runRatePerDayKobo(3_000_000)).toBe(100_000)
    expect(runRatePerDayKobo(3_000_029)).toBe(100_000) // 100,000.97 -> 100,000
    expect(runRatePerDayKobo(29)).toBe(0)
    expect(runRatePerDayKobo(0)).toBe(0)
  })

  it("7 days from a Wednesday: Wed-Sun (5 days) then Mon-Tue (2 days), scheduled inside the horizon only", () => {
    const scheduled = [
      { dueMs: lagos(2025, 1, 14, 12), amountKobo: 11_111 }, //  Tuesday before: already due, left out
      { dueMs: lagos(2025, 1, 15, 23, 30), amountKobo: 50_000 }, // today (Wed 23:30 Lagos = 22:30 UTC) -> week 1
      { dueMs: lagos(2025, 1, 19, 23, 59), amountKobo: 5_000 }, // Sunday 23:59 Lagos -> still week 1
      { dueMs: lagos(2025, 1, 21, 23, 59), amountKobo: 70_000 }, // Tue, the last day -> week 2
      { dueMs: lagos(2025, 1, 22), amountKobo: 99_999 } //           Wed 00:00 Lagos (Tue 23:00 UTC): past the horizon
    ]
    expect(forecastWeeks(7, WEDNESDAY, scheduled, TRAILING)).toEqual([
      // 50,000 + 5,000 = 55,000 scheduled; 55,000 + 100,000 x 5 = 555,000
      { weekStart: "2025-01-13", scheduledKobo: 55_000, projectedKobo: 555_000 },
      // 70,000 + 100,000 x 2 = 270,000
      { weekStart: "2025-01-20", scheduledKobo: 70_000, projectedKobo: 270_000 }
    ])
  })

  it("8, 30 and 180 days from a Wednesday", () => {
    // 8 days, Wed 15 .. Wed 22: 5 + 3
    expect(forecastWeeks(8, WEDNESDAY, [], TRAILING)).toEqual([
      { weekStart: "2025-01-13", scheduledKobo: 0, projectedKobo: 500_000 },
      { weekStart: "2025-01-20", scheduledKobo: 0, projectedKobo: 300_000 }
    ])
    // 30 days, Jan 15 .. Feb 13: 5 + 7 + 7 + 7 + 4 (Mon Feb 10 .. Thu Feb 13)
    expect(forecastWeeks(30, WEDNESDAY, [], TRAILING)).toEqual([
      { weekStart: "2025-01-13", scheduledKobo: 0, projectedKobo: 500_000 },
      { weekStart: "2025-01-20", scheduledKobo: 0, projectedKobo: 700_000 },
      { weekStart: "2025-01-27", scheduledKobo: 0, projectedKobo: 700_000 },
      { weekStart: "2025-02-03", scheduledKobo: 0, projectedKobo: 700_000 },
      { weekStart: "2025-02-10", scheduledKobo: 0, projectedKobo: 400_000 }
    ])
    // 180 days, Jan 15 .. Jul 13 (Sun): 5 + 25 x 7 = 180, so 26 weeks, the last Mon Jul 7 .. Sun Jul 13 full
    const w180 = forecastWeeks(180, WEDNESDAY, [{ dueMs: lagos(2025, 7, 13, 20), amountKobo: 1 }, { dueMs: lagos(2025, 7, 14), amountKobo: 2 }], TRAILING)
    expect(w180).toHaveLength(26)
    expect(w180[0]).toEqual({ weekStart: "2025-01-13", scheduledKobo: 0, projectedKobo: 500_000 })
    expect(w180[1]).toEqual({ weekStart: "2025-01-20", scheduledKobo: 0, projectedKobo: 700_000 })
    expect(w180[25]).toEqual({ weekStart: "2025-07-07", scheduledKobo: 1, projectedKobo: 700_001 })
    // 500,000 + 25 x 700,000 + 1 = 18,000,001 = 100,000 x 180 + 1
    expect(w180.reduce((s, w) => s + w.projectedKobo, 0)).toBe(18_000_001)
  })

  it("7, 8, 30 and 180 days from a Monday", () => {
    // 7 days, Mon 13 .. Sun 19: one full week
    expect(forecastWeeks(7, MONDAY, [], TRAILING)).toEqual([{ weekStart: "2025-01-13", scheduledKobo: 0, projectedKobo: 700_000 }])
    // 8 days: 7 + 1 (Mon 20)
    expect(forecastWeeks(8, MONDAY, [], TRAILING)).toEqual([
      { weekStart: "2025-01-13", scheduledKobo: 0, projectedKobo: 700_000 },
      { weekStart: "2025-01-20", scheduledKobo: 0, projectedKobo: 100_000 }
    ])
    // 30 days, Jan 13 .. Feb 11: 7 x 4 + 2 (Mon Feb 10, Tue Feb 11)
    expect(forecastWeeks(30, MONDAY, [], TRAILING).map((w) => [w.weekStart, w.projectedKobo])).toEqual([
      ["2025-01-13", 700_000],
      ["2025-01-20", 700_000],
      ["2025-01-27", 700_000],
      ["2025-02-03", 700_000],
      ["2025-02-10", 200_000]
    ])
    // 180 days, Jan 13 .. Jul 11 (Fri): 25 x 7 + 5, so 26 weeks, the last Mon Jul 7 .. Fri Jul 11
    const w180 = forecastWeeks(180, MONDAY, [{ dueMs: lagos(2025, 7, 11, 23), amountKobo: 3 }, { dueMs: lagos(2025, 7, 12), amountKobo: 4 }], TRAILING)
    expect(w180).toHaveLength(26)
    expect(w180.slice(0, 25).every((w) => w.projectedKobo === 700_000)).toBe(true)
    expect(w180[25]).toEqual({ weekStart: "2025-07-07", scheduledKobo: 3, projectedKobo: 500_003 })
  })

  it("today is the Lagos date: Sunday 23:30 Lagos is still Sunday; 23:30 UTC Sunday is Monday in Lagos", () => {
    const sundayLate = lagos(2025, 1, 19, 23, 30)
    expect(forecastWeeks(7, sundayLate, [], TRAILING).map((w) => [w.weekStart, w.projectedKobo])).toEqual([
      ["2025-01-13", 100_000], // Sunday alone
      ["2025-01-20", 600_000] //  Mon .. Sat
    ])
    const mondayInLagos = Date.UTC(2025, 0, 19, 23, 30)
    expect(forecastWeeks(7, mondayInLagos, [], TRAILING)).toEqual([{ weekStart: "2025-01-20", scheduledKobo: 0, projectedKobo: 700_000 }])
    expect(lagosWeekStart(mondayInLagos)).toEqual({ y: 2025, m: 1, d: 20 })
  })

  it("nothing collected: the projection is what is scheduled", () => {
    expect(forecastWeeks(7, MONDAY, [{ dueMs: MONDAY, amountKobo: 12_345 }], 0)).toEqual([
      { weekStart: "2025-01-13", scheduledKobo: 12_345, projectedKobo: 12_345 }
    ])
  })

  it("days outside 7..180 or not whole: RangeError", () => {
    for (const days of [6, 181, 0, -7, 7.5, Number.NaN]) expect(() => forecastWeeks(days, MONDAY, [], 0)).toThrow(RangeError)
  })

  it("property: projected >= scheduled; consecutive Mondays covering exactly the horizon days; totals add up", () => {
    const scheduledArb = fc.array(fc.record({ dueMs: fc.integer({ min: 1.6e12, max: 1.8e12 }), amountKobo: fc.nat({ max: 10 ** 10 }) }), { maxLength: 40 })
    fc.assert(
      fc.property(
        fc.integer({ min: 7, max: 180 }),
        fc.integer({ min: 1.6e12, max: 1.8e12 }),
        scheduledArb,
        fc.nat({ max: 10 ** 13 }),
        (days, now, scheduled, trailing) => {
          const weeks = forecastWeeks(days, now, scheduled, trailing)
          const today = modelDay(now)
          const last = today + days - 1
          const perDay = Math.floor(trailing / 30)
          // Monday-based weeks from the one holding today to the one holding the last day, one each
          expect(weeks.map((w) => w.weekStart)).toEqual(
            Array.from({ length: (modelMonday(last) - modelMonday(today)) / 7 + 1 }, (_, i) => isoOfDay(modelMonday(today) + 7 * i))
          )
          let horizonDays = 0
          weeks.forEach((w, i) => {
            expect(w.projectedKobo).toBeGreaterThanOrEqual(w.scheduledKobo)
            const monday = modelMonday(today) + 7 * i
            const inHorizon = Math.min(monday + 7, last + 1) - Math.max(monday, today)
            expect(inHorizon).toBeGreaterThanOrEqual(1)
            expect(w.projectedKobo - w.scheduledKobo).toBe(perDay * inHorizon)
            horizonDays += inHorizon
            const due = scheduled.filter((s) => modelDay(s.dueMs) >= Math.max(monday, today) && modelDay(s.dueMs) < Math.min(monday + 7, last + 1))
            expect(w.scheduledKobo).toBe(due.reduce((s, x) => s + x.amountKobo, 0))
          })
          expect(horizonDays).toBe(days)
          const inside = scheduled.filter((s) => modelDay(s.dueMs) >= today && modelDay(s.dueMs) <= last)
          expect(weeks.reduce((s, w) => s + w.scheduledKobo, 0)).toBe(inside.reduce((s, x) => s + x.amountKobo, 0))
        }
      )
    )
  })
})

describe("customer score", () => {
  it("hand-computed fixtures", () => {
    // perfect: 60 x 1 = 60; 25 - 0 = 25; 15 - 0 = 15 -> 100
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: 0, outstandingKobo: 0, expectedKobo: 500_000 })).toBe(100)
    // 3 of 4 on time: round(45) = 45; 2.5 days late: 25 - 2 = 23; 200 of 1000 outstanding: 15 - floor(3) = 12 -> 80
    expect(customerScore({ onTimeRatio: 0.75, averageDaysLate: 2.5, outstandingKobo: 20_000, expectedKobo: 100_000 })).toBe(80)
    // 2 of 3 on time: round(39.99..) = 40; 10 days late: 15; 1 kobo of 100,000 outstanding: 15 - floor(0.00015) = 15 -> 70
    expect(customerScore({ onTimeRatio: 2 / 3, averageDaysLate: 10, outstandingKobo: 1, expectedKobo: 100_000 })).toBe(70)
    // 1 of 3: round(20) = 20; 40 days late: 25 lost (capped) -> 0; half outstanding: 15 - floor(7.5) = 8 -> 28
    expect(customerScore({ onTimeRatio: 1 / 3, averageDaysLate: 40, outstandingKobo: 50_000, expectedKobo: 100_000 })).toBe(28)
    // never on time, 25+ days late, everything outstanding: 0 + 0 + 0 = 0
    expect(customerScore({ onTimeRatio: 0, averageDaysLate: 90, outstandingKobo: 100_000, expectedKobo: 100_000 })).toBe(0)
    // nothing due yet: 30; not late: 25; nothing outstanding: 15 -> 70
    expect(customerScore({ onTimeRatio: null, averageDaysLate: 0, outstandingKobo: 0, expectedKobo: 0 })).toBe(70)
    // outstanding with nothing expected (an open account's deficit): all 15 lost: 60 + 25 + 0 = 85
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: 0, outstandingKobo: 1, expectedKobo: 0 })).toBe(85)
    // more outstanding than expected counts as all of it: 60 + 25 + 0 = 85
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: 0, outstandingKobo: 300, expectedKobo: 100 })).toBe(85)
    // paying early (negative lateness) is not rewarded: same as 0 days
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: -3, outstandingKobo: 0, expectedKobo: 1 })).toBe(100)
    // 0.99 days late loses nothing (whole days), 1 day loses 1
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: 0.99, outstandingKobo: 0, expectedKobo: 1 })).toBe(100)
    expect(customerScore({ onTimeRatio: 1, averageDaysLate: 1, outstandingKobo: 0, expectedKobo: 1 })).toBe(99)
  })

  it("rejects inputs out of range", () => {
    expect(() => customerScore({ onTimeRatio: 1.01, averageDaysLate: 0, outstandingKobo: 0, expectedKobo: 0 })).toThrow(RangeError)
    expect(() => customerScore({ onTimeRatio: Number.NaN, averageDaysLate: 0, outstandingKobo: 0, expectedKobo: 0 })).toThrow(RangeError)
    expect(() => customerScore({ onTimeRatio: 1, averageDaysLate: Number.NaN, outstandingKobo: 0, expectedKobo: 0 })).toThrow(RangeError)
    expect(() => customerScore({ onTimeRatio: 1, averageDaysLate: 0, outstandingKobo: -1, expectedKobo: 0 })).toThrow(RangeError)
  })

  it("bands: Excellent 80+, Good 60+, Fair 40+, Poor", () => {
    expect(bandOf(100)).toBe("Excellent")
    expect(bandOf(80)).toBe("Excellent")
    expect(bandOf(79)).toBe("Good")
    expect(bandOf(60)).toBe("Good")
    expect(bandOf(59)).toBe("Fair")
    expect(bandOf(40)).toBe("Fair")
    expect(bandOf(39)).toBe("Poor")
    expect(bandOf(0)).toBe("Poor")
  })

  const input = fc.record({
    onTimeRatio: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    averageDaysLate: fc.double({ min: -10, max: 400, noNaN: true }),
    outstandingKobo: fc.nat({ max: 10 ** 13 }),
    expectedKobo: fc.nat({ max: 10 ** 13 })
  })

  it("property: an integer in 0..100", () => {
    fc.assert(
      fc.property(input, (i) => {
        const s = customerScore(i)
        expect(Number.isInteger(s)).toBe(true)
        expect(s).toBeGreaterThanOrEqual(0)
        expect(s).toBeLessThanOrEqual(100)
      })
    )
  })

  it("property: a better on-time ratio never lowers it; more outstanding or more lateness never raises it", () => {
    fc.assert(
      fc.property(input, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.nat({ max: 10 ** 13 }), fc.double({ min: 0, max: 400, noNaN: true }), (i, r1, r2, more, later) => {
        const [lo, hi] = r1 <= r2 ? [r1, r2] : [r2, r1]
        expect(customerScore({ ...i, onTimeRatio: lo })).toBeLessThanOrEqual(customerScore({ ...i, onTimeRatio: hi }))
        expect(customerScore({ ...i, outstandingKobo: i.outstandingKobo + more })).toBeLessThanOrEqual(customerScore(i))
        expect(customerScore({ ...i, averageDaysLate: i.averageDaysLate + later })).toBeLessThanOrEqual(customerScore(i))
      })
    )
  })
})

describe("deposit risk bands", () => {
  it("low below 30, medium 30-59, high 60+", () => {
    expect(HIGH_RISK_SCORE).toBe(60)
    expect(riskBandOf(0)).toBe("low")
    expect(riskBandOf(29)).toBe("low")
    expect(riskBandOf(30)).toBe("medium")
    expect(riskBandOf(59)).toBe("medium")
    expect(riskBandOf(60)).toBe("high")
    expect(riskBandOf(100)).toBe("high")
  })
  it("rejects a score outside 0..100", () => {
    for (const s of [-1, 101, 50.5, Number.NaN]) expect(() => riskBandOf(s)).toThrow(RangeError)
  })
  it("property: high exactly from HIGH_RISK_SCORE", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 100 }), (s) => {
      expect(riskBandOf(s) === "high").toBe(s >= HIGH_RISK_SCORE)
    }))
  })
})
