import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  addDays,
  BILLING_INTERVALS,
  type BillingInterval,
  isoDate,
  type LagosDate,
  lagosDateOf,
  lagosMidnight,
  nextPeriodAfter,
  periodCalendar,
  type PeriodInput,
  periodStartDate,
  periodStates,
  periodsStartedBy,
  type PeriodStatus
} from "../../src/domain/Billing.js"

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS

// ---------------------------------------------------------------------------------------------------------------
// The model, written independently of the module: a proleptic Gregorian calendar by day counting (no `Date`), and
// West Africa Time as a fixed UTC+1.
// ---------------------------------------------------------------------------------------------------------------

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
const monthLengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const modelDaysInMonth = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : monthLengths[m - 1]!)

/** Days from 1970-01-01 to `date`, counted year by year and month by month. */
const modelEpochDay = (date: LagosDate): number => {
  let days = 0
  if (date.y >= 1970) for (let y = 1970; y < date.y; y++) days += isLeap(y) ? 366 : 365
  else for (let y = date.y; y < 1970; y++) days -= isLeap(y) ? 366 : 365
  for (let m = 1; m < date.m; m++) days += modelDaysInMonth(date.y, m)
  return days + date.d - 1
}

const modelDateOfEpochDay = (epochDay: number): LagosDate => {
  let y = 1970
  let days = epochDay
  while (days < 0) {
    y--
    days += isLeap(y) ? 366 : 365
  }
  while (days >= (isLeap(y) ? 366 : 365)) {
    days -= isLeap(y) ? 366 : 365
    y++
  }
  let m = 1
  while (days >= modelDaysInMonth(y, m)) {
    days -= modelDaysInMonth(y, m)
    m++
  }
  return { y, m, d: days + 1 }
}

/** Lagos midnight of `date`: 00:00 at UTC+1 is 23:00 UTC the day before. */
const modelMidnight = (date: LagosDate): number => modelEpochDay(date) * DAY_MS - HOUR_MS
const modelLagosDateOf = (ms: number): LagosDate => modelDateOfEpochDay(Math.floor((ms + HOUR_MS) / DAY_MS))

const stepMonths: Record<BillingInterval, number> = { Weekly: 0, Monthly: 1, Quarterly: 3, Yearly: 12 }

/** The k-th start (0-based): whole weeks, or whole months keeping the anchor day clamped to the month's length. */
const modelStart = (anchor: LagosDate, interval: BillingInterval, k: number): LagosDate => {
  if (interval === "Weekly") return modelDateOfEpochDay(modelEpochDay(anchor) + 7 * k)
  let y = anchor.y
  let m = anchor.m
  for (let i = 0; i < stepMonths[interval] * k; i++) {
    m++
    if (m === 13) {
      m = 1
      y++
    }
  }
  return { y, m, d: Math.min(anchor.d, modelDaysInMonth(y, m)) }
}

const modelStartMs = (anchor: LagosDate, interval: BillingInterval, k: number) => modelMidnight(modelStart(anchor, interval, k))

/** The naive count: walk k up from 0 while the k-th period has started. */
const modelStartedBy = (anchor: LagosDate, interval: BillingInterval, t: number): number => {
  let k = 0
  while (modelStartMs(anchor, interval, k) <= t) k++
  return k
}

const iso = (ms: number) => new Date(ms).toISOString()
const D = (s: string): LagosDate => {
  const [y, m, d] = s.split("-").map(Number)
  return { y: y!, m: m!, d: d! }
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------------------------

// A real calendar date, years 2000 to 2100; days 29 to 31 are drawn often (clamped to the month's length).
const anchorArb: fc.Arbitrary<LagosDate> = fc
  .record({
    y: fc.integer({ min: 2000, max: 2100 }),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.integer({ min: 28, max: 31 }))
  })
  .map(({ y, m, d }) => ({ y, m, d: Math.min(d, modelDaysInMonth(y, m)) }))

const intervalArb = fc.constantFrom<BillingInterval>(...BILLING_INTERVALS)
// Up to 50 years of periods for every interval.
const maxK: Record<BillingInterval, number> = { Weekly: 2600, Monthly: 600, Quarterly: 200, Yearly: 50 }
const scheduleArb = fc
  .tuple(anchorArb, intervalArb)
  .chain(([anchor, interval]) =>
    fc.record({ anchor: fc.constant(anchor), interval: fc.constant(interval), k: fc.integer({ min: 0, max: maxK[interval] }) })
  )

// ---------------------------------------------------------------------------------------------------------------
// Table of calendar cases
// ---------------------------------------------------------------------------------------------------------------

describe("Billing calendar: table of cases", () => {
  it.each<[string, BillingInterval, string, ReadonlyArray<string>]>([
    ["Monthly on the 31st, 2027 (Feb 28)", "Monthly", "2027-01-31", ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"]],
    ["Monthly on the 31st, 2028 (leap: Feb 29)", "Monthly", "2028-01-31", ["2028-01-31", "2028-02-29", "2028-03-31", "2028-04-30"]],
    ["Monthly on the 30th", "Monthly", "2027-01-30", ["2027-01-30", "2027-02-28", "2027-03-30", "2027-04-30", "2027-05-30"]],
    ["Monthly on the 30th, leap year", "Monthly", "2028-01-30", ["2028-01-30", "2028-02-29", "2028-03-30"]],
    ["Monthly on the 29th", "Monthly", "2027-01-29", ["2027-01-29", "2027-02-28", "2027-03-29"]],
    ["Monthly on the 29th, leap year", "Monthly", "2028-01-29", ["2028-01-29", "2028-02-29", "2028-03-29"]],
    ["Monthly across a year end", "Monthly", "2027-11-30", ["2027-11-30", "2027-12-30", "2028-01-30", "2028-02-29"]],
    ["Monthly in 2100 (not a leap year)", "Monthly", "2100-01-29", ["2100-01-29", "2100-02-28", "2100-03-29"]],
    ["Monthly in 2000 (a leap year)", "Monthly", "2000-01-31", ["2000-01-31", "2000-02-29", "2000-03-31"]],
    ["Quarterly from Nov 30 (2026 -> Feb 28)", "Quarterly", "2026-11-30", ["2026-11-30", "2027-02-28", "2027-05-30", "2027-08-30", "2027-11-30"]],
    ["Quarterly from Nov 30 (2027 -> Feb 29)", "Quarterly", "2027-11-30", ["2027-11-30", "2028-02-29", "2028-05-30"]],
    ["Quarterly from Aug 31", "Quarterly", "2027-08-31", ["2027-08-31", "2027-11-30", "2028-02-29", "2028-05-31"]],
    ["Yearly from Feb 29 2028", "Yearly", "2028-02-29", ["2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"]],
    ["Yearly from Dec 31", "Yearly", "2027-12-31", ["2027-12-31", "2028-12-31", "2029-12-31"]],
    ["Weekly across a month end", "Weekly", "2027-01-25", ["2027-01-25", "2027-02-01", "2027-02-08"]],
    ["Weekly across Feb in a leap year", "Weekly", "2028-02-22", ["2028-02-22", "2028-02-29", "2028-03-07"]],
    ["Weekly across a year end", "Weekly", "2027-12-29", ["2027-12-29", "2028-01-05", "2028-01-12"]]
  ])("%s", (_name, interval, anchor, starts) => {
    const a = D(anchor)
    starts.forEach((start, k) => {
      expect(isoDate(periodStartDate(a, interval, k))).toBe(start)
      const cal = periodCalendar(a, interval, k + 1, 0)
      expect(cal.index).toBe(k + 1)
      expect(isoDate(lagosDateOf(cal.startMs))).toBe(start)
      // Lagos midnight is 23:00 UTC the day before.
      expect(iso(cal.startMs)).toBe(iso(Date.parse(`${start}T00:00:00+01:00`)))
      if (k + 1 < starts.length) expect(iso(cal.endMs)).toBe(iso(Date.parse(`${starts[k + 1]}T00:00:00+01:00`)))
    })
  })

  it("Lagos midnight: a period starting 2027-03-01 starts at 2027-02-28T23:00:00Z", () => {
    expect(iso(lagosMidnight(D("2027-03-01")))).toBe("2027-02-28T23:00:00.000Z")
    expect(iso(periodCalendar(D("2027-03-01"), "Monthly", 1, 0).startMs)).toBe("2027-02-28T23:00:00.000Z")
    expect(iso(periodCalendar(D("2027-01-01"), "Yearly", 1, 0).startMs)).toBe("2026-12-31T23:00:00.000Z")
  })

  it.each<[string, string]>([
    ["2027-02-28T23:30:00.000Z", "2027-03-01"],
    ["2027-02-28T23:00:00.000Z", "2027-03-01"],
    ["2027-02-28T22:59:59.999Z", "2027-02-28"],
    ["2027-12-31T23:00:00.000Z", "2028-01-01"],
    ["2028-02-28T23:30:00.000Z", "2028-02-29"],
    ["2028-02-29T00:30:00.000Z", "2028-02-29"]
  ])("the instant %s is Lagos date %s", (instant, date) => {
    expect(isoDate(lagosDateOf(Date.parse(instant)))).toBe(date)
  })

  it.each<[number, string, string]>([
    // Period 2 of a Monthly schedule anchored 2027-01-31 starts 2027-02-28.
    [0, "2027-02-28", "2027-03-01"],
    [1, "2027-03-01", "2027-03-02"],
    [30, "2027-03-30", "2027-03-31"],
    [365, "2028-02-28", "2028-02-29"]
  ])("due offset %i days: due %s, overdue from the start of %s (Lagos)", (offset, due, overdue) => {
    const cal = periodCalendar(D("2027-01-31"), "Monthly", 2, offset)
    expect(isoDate(cal.dueDate)).toBe(due)
    expect(iso(cal.dueAtMs)).toBe(iso(Date.parse(`${due}T00:00:00+01:00`)))
    expect(iso(cal.overdueAtMs)).toBe(iso(Date.parse(`${overdue}T00:00:00+01:00`)))
    expect(cal.dueAtMs).toBe(cal.startMs + offset * DAY_MS)
    expect(cal.overdueAtMs).toBe(cal.dueAtMs + DAY_MS)
  })

  it("due offset 365 over a leap day lands a day earlier in the calendar", () => {
    const cal = periodCalendar(D("2028-02-01"), "Monthly", 1, 365)
    expect(isoDate(cal.dueDate)).toBe("2029-01-31")
    expect(iso(cal.overdueAtMs)).toBe("2029-01-31T23:00:00.000Z")
  })

  it.each<[string, BillingInterval, string, string, number]>([
    ["before the anchor", "Monthly", "2027-01-31", "2027-01-30T22:59:59.999Z", 0],
    ["exactly at the anchor's Lagos midnight", "Monthly", "2027-01-31", "2027-01-30T23:00:00.000Z", 1],
    ["1 ms before the second boundary", "Monthly", "2027-01-31", "2027-02-27T22:59:59.999Z", 1],
    ["exactly at the second boundary (Feb 28)", "Monthly", "2027-01-31", "2027-02-27T23:00:00.000Z", 2],
    ["600 months on, exactly at the boundary", "Monthly", "2027-01-31", "2077-01-30T23:00:00.000Z", 601],
    ["600 months on, 1 ms before", "Monthly", "2027-01-31", "2077-01-30T22:59:59.999Z", 600],
    ["600 months from the 29th, Feb of a non-leap year", "Monthly", "2027-03-29", "2077-02-27T23:00:00.000Z", 600],
    ["Quarterly 200 quarters on", "Quarterly", "2027-11-30", "2077-11-29T23:00:00.000Z", 201],
    ["Yearly from a leap day, 2032 boundary", "Yearly", "2028-02-29", "2032-02-28T23:00:00.000Z", 5],
    ["Yearly from a leap day, 1 ms before 2032", "Yearly", "2028-02-29", "2032-02-28T22:59:59.999Z", 4],
    ["Weekly, 100 years of weeks", "Weekly", "2027-01-01", "2126-12-31T23:00:00.000Z", 5218]
  ])("periodsStartedBy %s", (_name, interval, anchor, at, count) => {
    const t = Date.parse(at)
    expect(periodsStartedBy(D(anchor), interval, t)).toBe(count)
    expect(nextPeriodAfter(D(anchor), interval, t)).toBe(count + 1)
  })

  it("nextPeriodAfter picks up at the next boundary, never back-filling", () => {
    const a = D("2027-01-31")
    // Mid-March: periods 1 (Jan 31), 2 (Feb 28), 3 (Mar 31)... the next to start is 3.
    expect(nextPeriodAfter(a, "Monthly", Date.parse("2027-03-15T12:00:00Z"))).toBe(3)
    expect(isoDate(lagosDateOf(periodCalendar(a, "Monthly", 3, 0).startMs))).toBe("2027-03-31")
    // Exactly at the start of period 3, period 3 has started: the next is 4.
    expect(nextPeriodAfter(a, "Monthly", Date.parse("2027-03-30T23:00:00Z"))).toBe(4)
    expect(nextPeriodAfter(a, "Monthly", Date.parse("2027-03-30T22:59:59.999Z"))).toBe(3)
    // Before the anchor: period 1.
    expect(nextPeriodAfter(a, "Weekly", Date.parse("2026-01-01T00:00:00Z"))).toBe(1)
  })

  it("addDays crosses month, year and leap days in the Lagos calendar", () => {
    expect(isoDate(addDays(D("2028-02-28"), 1))).toBe("2028-02-29")
    expect(isoDate(addDays(D("2027-02-28"), 1))).toBe("2027-03-01")
    expect(isoDate(addDays(D("2027-12-31"), 1))).toBe("2028-01-01")
    expect(isoDate(addDays(D("2027-01-01"), 365))).toBe("2028-01-01")
    expect(isoDate(addDays(D("2028-01-01"), 365))).toBe("2028-12-31")
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Properties of the calendar
// ---------------------------------------------------------------------------------------------------------------

describe("Billing calendar: properties against a day-counting model", () => {
  it("lagosDateOf and lagosMidnight agree with the model for any instant 2000-2100", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1) - DAY_MS, max: Date.UTC(2101, 0, 1) }), (t) => {
        const date = lagosDateOf(t)
        expect(date).toEqual(modelLagosDateOf(t))
        const midnight = lagosMidnight(date)
        expect(midnight).toBe(modelMidnight(date))
        expect(midnight).toBeLessThanOrEqual(t)
        expect(t - midnight).toBeLessThan(DAY_MS)
      }),
      { numRuns: 3000 }
    )
  })

  it("period k and k+1: strictly increasing Lagos midnights, the anchor day clamped, the month advancing by the interval", () => {
    fc.assert(
      fc.property(scheduleArb, ({ anchor, interval, k }) => {
        const s = periodStartDate(anchor, interval, k)
        const next = periodStartDate(anchor, interval, k + 1)
        expect(s).toEqual(modelStart(anchor, interval, k))
        expect(next).toEqual(modelStart(anchor, interval, k + 1))
        const cal = periodCalendar(anchor, interval, k + 1, 0)
        expect(cal.startMs).toBe(modelMidnight(s))
        expect(cal.endMs).toBe(modelMidnight(next))
        expect(cal.endMs).toBeGreaterThan(cal.startMs)
        // Every start is a Lagos midnight: 00:00 at UTC+1 and its own Lagos date.
        expect((cal.startMs + HOUR_MS) % DAY_MS).toBe(0)
        expect(lagosDateOf(cal.startMs)).toEqual(s)
        expect(lagosDateOf(cal.startMs - 1)).toEqual(modelDateOfEpochDay(modelEpochDay(s) - 1))
        if (interval === "Weekly") {
          // No DST in Lagos: always exactly 7 * 24 h.
          expect(cal.endMs - cal.startMs).toBe(7 * DAY_MS)
          expect(cal.startMs).toBe(lagosMidnight(anchor) + 7 * k * DAY_MS)
        } else {
          const step = stepMonths[interval]
          expect(s.d).toBe(Math.min(anchor.d, modelDaysInMonth(s.y, s.m)))
          expect(next.d).toBe(Math.min(anchor.d, modelDaysInMonth(next.y, next.m)))
          expect(next.y * 12 + next.m - (s.y * 12 + s.m)).toBe(step)
          expect(s.y * 12 + s.m - (anchor.y * 12 + anchor.m)).toBe(step * k)
        }
      }),
      { numRuns: 4000 }
    )
  })

  it("period 1 starts on the anchor and due/overdue follow the offset in whole Lagos days", () => {
    fc.assert(
      fc.property(scheduleArb, fc.integer({ min: 0, max: 365 }), ({ anchor, interval, k }, offset) => {
        expect(periodCalendar(anchor, interval, 1, offset).startMs).toBe(modelMidnight(anchor))
        const cal = periodCalendar(anchor, interval, k + 1, offset)
        const due = modelDateOfEpochDay(modelEpochDay(modelStart(anchor, interval, k)) + offset)
        expect(cal.dueDate).toEqual(due)
        expect(cal.dueAtMs).toBe(modelMidnight(due))
        expect(cal.dueAtMs).toBe(cal.startMs + offset * DAY_MS)
        expect(cal.overdueAtMs).toBe(cal.dueAtMs + DAY_MS)
      }),
      { numRuns: 3000 }
    )
  })

  // An instant near a boundary (at, 1 ms before/after) or anywhere from a year before the anchor to 50 years on.
  const instantArb = (anchor: LagosDate, interval: BillingInterval) =>
    fc.oneof(
      fc.record({ k: fc.integer({ min: 0, max: maxK[interval] }), delta: fc.constantFrom(-1, 0, 1, -HOUR_MS, HOUR_MS) }).map(
        ({ k, delta }) => modelStartMs(anchor, interval, k) + delta
      ),
      fc.integer({ min: modelMidnight(anchor) - 366 * DAY_MS, max: modelMidnight(anchor) + 50 * 366 * DAY_MS })
    )
  const startedArb = fc
    .tuple(anchorArb, intervalArb)
    .chain(([anchor, interval]) => fc.record({ anchor: fc.constant(anchor), interval: fc.constant(interval), t: instantArb(anchor, interval) }))

  it("periodsStartedBy equals the naive count of periods whose start is at or before t", () => {
    fc.assert(
      fc.property(startedArb, ({ anchor, interval, t }) => {
        expect(periodsStartedBy(anchor, interval, t)).toBe(modelStartedBy(anchor, interval, t))
      }),
      { numRuns: 3000 }
    )
  })

  it("nextPeriodAfter's period starts after t and the one before it does not", () => {
    fc.assert(
      fc.property(startedArb, ({ anchor, interval, t }) => {
        const n = nextPeriodAfter(anchor, interval, t)
        expect(n).toBeGreaterThanOrEqual(1)
        expect(periodCalendar(anchor, interval, n, 0).startMs).toBeGreaterThan(t)
        if (n > 1) expect(periodCalendar(anchor, interval, n - 1, 0).startMs).toBeLessThanOrEqual(t)
      }),
      { numRuns: 3000 }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Properties of periodStates
// ---------------------------------------------------------------------------------------------------------------

const T0 = Date.UTC(2027, 0, 1)
const periodArb: fc.Arbitrary<PeriodInput> = fc
  .record({
    amountKobo: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 5_000_000 })),
    cancelled: fc.boolean(),
    due: fc.integer({ min: 0, max: 40 }),
    overdueDays: fc.integer({ min: 1, max: 2 })
  })
  .map(({ amountKobo, cancelled, due, overdueDays }) => ({
    amountKobo,
    cancelled,
    dueAtMs: T0 + due * DAY_MS,
    overdueAtMs: T0 + (due + overdueDays) * DAY_MS
  }))
const periodsArb = fc.array(periodArb, { maxLength: 14 })
const moneyArb = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 60_000_000 }))
const nowArb = fc.oneof(
  fc.integer({ min: T0 - DAY_MS, max: T0 + 45 * DAY_MS }),
  // Exactly at, or 1 ms before, a whole day from T0: where Due and Overdue begin.
  fc.record({ d: fc.integer({ min: 0, max: 45 }), delta: fc.constantFrom(-1, 0) }).map(({ d, delta }) => T0 + d * DAY_MS + delta)
)

/** The model: period i is paid what the money covers beyond all the periods before it, clamped to its amount. */
const modelPaid = (periods: ReadonlyArray<PeriodInput>, base: number, paid: number): Array<number> => {
  const pool = paid > base ? paid - base : 0
  return periods.map((_, i) => {
    const before = periods.slice(0, i).reduce((s, p) => s + p.amountKobo, 0)
    return Math.max(0, Math.min(periods[i]!.amountKobo, pool - before))
  })
}
const modelStatus = (p: PeriodInput, outstanding: number, now: number): PeriodStatus =>
  p.cancelled ? "Cancelled" : outstanding === 0 ? "Paid" : now < p.dueAtMs ? "Open" : now < p.overdueAtMs ? "Due" : "Overdue"

const unpaidRank: Record<PeriodStatus, number> = { Open: 0, Due: 1, Overdue: 2, Paid: -1, Cancelled: -1 }

describe("periodStates: properties against a prefix-sum model", () => {
  it("attribution oldest first, carry-forward, outstanding and status", () => {
    fc.assert(
      fc.property(periodsArb, moneyArb, moneyArb, nowArb, (periods, base, paid, now) => {
        const states = periodStates(periods, base, paid, now)
        expect(states.length).toBe(periods.length)
        const expectedPaid = modelPaid(periods, base, paid)
        const total = periods.reduce((s, p) => s + p.amountKobo, 0)
        const pool = Math.max(0, paid - base)
        expect(states.map((s) => s.paidKobo)).toEqual(expectedPaid)
        expect(states.reduce((s, x) => s + x.paidKobo, 0)).toBe(Math.min(pool, total))
        states.forEach((s, i) => {
          const p = periods[i]!
          expect(s.paidKobo).toBeGreaterThanOrEqual(0)
          expect(s.paidKobo).toBeLessThanOrEqual(p.amountKobo)
          // Partly paid only if everything before is fully paid and nothing after has anything.
          if (s.paidKobo > 0 && s.paidKobo < p.amountKobo) {
            states.slice(0, i).forEach((b, j) => expect(b.paidKobo).toBe(periods[j]!.amountKobo))
            states.slice(i + 1).forEach((a) => expect(a.paidKobo).toBe(0))
          }
          // Any money on a period means all before it are full.
          if (s.paidKobo > 0) states.slice(0, i).forEach((b, j) => expect(b.paidKobo).toBe(periods[j]!.amountKobo))
          expect(s.outstandingKobo).toBe(p.cancelled ? 0 : p.amountKobo - s.paidKobo)
          expect(s.status).toBe(modelStatus(p, p.amountKobo - s.paidKobo, now))
          expect(s.status === "Paid").toBe(s.outstandingKobo === 0 && !p.cancelled)
          expect(s.status === "Cancelled").toBe(p.cancelled)
          const unpaid = !p.cancelled && s.outstandingKobo > 0
          expect(s.status === "Overdue").toBe(unpaid && now >= p.overdueAtMs)
          expect(s.status === "Due").toBe(unpaid && p.dueAtMs <= now && now < p.overdueAtMs)
          expect(s.status === "Open").toBe(unpaid && now < p.dueAtMs)
        })
      }),
      { numRuns: 4000 }
    )
  })

  it("paying more never un-pays a period", () => {
    fc.assert(
      fc.property(periodsArb, moneyArb, moneyArb, moneyArb, nowArb, (periods, base, paid, more, now) => {
        const before = periodStates(periods, base, paid, now)
        const after = periodStates(periods, base, paid + more, now)
        before.forEach((b, i) => {
          const a = after[i]!
          expect(a.paidKobo).toBeGreaterThanOrEqual(b.paidKobo)
          expect(a.outstandingKobo).toBeLessThanOrEqual(b.outstandingKobo)
          if (b.status === "Paid") expect(a.status).toBe("Paid")
        })
      }),
      { numRuns: 3000 }
    )
  })

  it("time only moves an unpaid period forward: Open -> Due -> Overdue, never back", () => {
    fc.assert(
      fc.property(periodsArb, moneyArb, moneyArb, nowArb, fc.integer({ min: 0, max: 10 * DAY_MS }), (periods, base, paid, now, dt) => {
        const before = periodStates(periods, base, paid, now)
        const after = periodStates(periods, base, paid, now + dt)
        before.forEach((b, i) => {
          const a = after[i]!
          expect(a.paidKobo).toBe(b.paidKobo)
          if (unpaidRank[b.status] >= 0) expect(unpaidRank[a.status]).toBeGreaterThanOrEqual(unpaidRank[b.status])
          else expect(a.status).toBe(b.status)
        })
      }),
      { numRuns: 3000 }
    )
  })

  it("with real calendars: an unpaid period is Open before its due date, Due on it, Overdue the next Lagos day", () => {
    fc.assert(
      fc.property(scheduleArb, fc.integer({ min: 0, max: 365 }), fc.integer({ min: 1, max: 1_000_000 }), ({ anchor, interval, k }, offset, amount) => {
        const cal = periodCalendar(anchor, interval, k + 1, offset)
        const p: PeriodInput = { amountKobo: amount, cancelled: false, dueAtMs: cal.dueAtMs, overdueAtMs: cal.overdueAtMs }
        const at = (t: number) => periodStates([p], 0, 0, t)[0]!.status
        expect(at(cal.dueAtMs - 1)).toBe("Open")
        expect(at(cal.dueAtMs)).toBe("Due")
        expect(at(cal.overdueAtMs - 1)).toBe("Due")
        expect(at(cal.overdueAtMs)).toBe("Overdue")
        expect(periodStates([p], 0, amount, cal.overdueAtMs)[0]!.status).toBe("Paid")
        expect(periodStates([p], 5, amount + 4, cal.overdueAtMs)[0]).toEqual({ paidKobo: amount - 1, outstandingKobo: 1, status: "Overdue" })
      }),
      { numRuns: 2000 }
    )
  })
})
