/**
 * The insight figures' pure definitions: collection rate, aging of receivables, the cash-in forecast, the customer
 * score and the risk bands. No IO and nothing from outside src/domain: the roll-up consumer and the insight services
 * gather the inputs (per tenant and mode) and call these, so every figure the API answers is defined here once.
 *
 * Amounts are integer kobo (₦1 = 100 kobo). Dates are Lagos calendar dates: Nigeria keeps West Africa Time (UTC+1)
 * all year, so a Lagos day runs from 23:00 UTC the day before to 23:00 UTC; weeks start on Monday.
 *
 * How to check each figure by hand:
 *
 * - Collection rate, in basis points (10000 = 100%): floor(collected x 10000 / expected), at most 10000 (paying more
 *   than expected is still 100%), and 0 when nothing is expected. ₦750 collected of ₦1,000 expected:
 *   75000 x 10000 / 100000 = 7500 (75.00%).
 * - Days past due: the number of Lagos midnights between the due date and today; 0 on the due day itself and 0 for
 *   anything not yet due. Due Monday, asked on Thursday: 3.
 * - Aging: every receivable with something outstanding goes in one bucket by its days past due: "0-7" (0 to 7 days,
 *   which includes receivables not yet due), "8-30", "31-60", "60+" (61 days and more). A bucket's `amountKobo` is the
 *   sum of its receivables' outstanding kobo and `count` how many there are; fully paid receivables are left out, so
 *   the buckets add up to the total outstanding. The caller's due date: a billing period's due date, else the account's
 *   expiry date, else its creation date.
 * - Overdue (the copilot's "what is overdue"): a receivable with something outstanding whose due date has passed, 1 day
 *   or more past due; billing's `Overdue` likewise starts the Lagos day after the due date. What falls due today or
 *   later is outstanding but not yet due, so overdue is not the "0-7" bucket: due Monday, asked on Monday or before,
 *   it is not overdue; asked on Tuesday, it is (1 day).
 * - Forecast over the next `days` (7 to 180) Lagos days, today included: one row per Monday-to-Sunday week that
 *   overlaps those days (the first row's `weekStart` is the Monday on or before today, so it can be before today).
 *   `scheduledKobo` = billing amounts falling due on that week's days inside the horizon. Run-rate per day =
 *   floor(kobo collected in the trailing 30 days / 30). `projectedKobo` = scheduledKobo + run-rate x (the number of
 *   that week's days inside the horizon). Example: ₦30,000 collected in the last 30 days is 100,000 kobo a day; a
 *   horizon of 7 days from a Wednesday is Wed to Sun (5 days) in the first week and Mon to Tue (2 days) in the next,
 *   so with nothing scheduled the rows are 500,000 and 200,000 kobo.
 * - Customer score, an integer 0 to 100, the sum of three parts:
 *   on-time: round(60 x the share of due payments paid by their due date), or 30 with no due payment yet;
 *   lateness: 25 minus one point per whole day of average lateness (at most 25 lost);
 *   outstanding: 15 minus floor(15 x outstanding / expected) (at most 15 lost; all 15 when something is outstanding
 *   and nothing is expected).
 *   Example: 3 of 4 paid on time (45), 2.5 days late on average (25 - 2 = 23), ₦200 outstanding of ₦1,000 expected
 *   (15 - floor(15 x 0.2) = 12): 45 + 23 + 12 = 80, Excellent.
 *   Bands: Excellent 80 and above, Good 60 to 79, Fair 40 to 59, Poor below 40.
 * - Deposit risk bands, on the deposit's risk score 0 to 100: low below 30, medium 30 to 59, high 60 and above. These
 *   are reporting bands; whether a deposit is held for review is the tenant's own threshold.
 */
import { addDays, isoDate, type LagosDate, lagosDateOf, lagosMidnight } from "./Billing.js"

const DAY_MS = 24 * 60 * 60 * 1000

// Inputs are validated at the edges; anything else reaching here is a bug.
const assertKobo = (value: number, label: string): void => {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative safe integer of kobo, got ${String(value)}`)
  }
}
const assertInstant = (value: number, label: string): void => {
  if (!Number.isFinite(value)) throw new RangeError(`${label} must be a finite epoch-millisecond instant, got ${String(value)}`)
}

// ---------------------------------------------------------------------------------------------------------------
// Lagos calendar days
// ---------------------------------------------------------------------------------------------------------------

/** The Lagos calendar date of `epochMs` as a day count (days since 1970-01-01 as a calendar date). */
export const lagosDayNumber = (epochMs: number): number => {
  const d = lagosDateOf(epochMs)
  return Date.UTC(d.y, d.m - 1, d.d) / DAY_MS
}

/** The Monday (Lagos) of the week that holds `epochMs`. */
export const lagosWeekStart = (epochMs: number): LagosDate => {
  const date = lagosDateOf(epochMs)
  const weekday = new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay() // 0 Sunday .. 6 Saturday
  return addDays(date, -((weekday + 6) % 7))
}

// ---------------------------------------------------------------------------------------------------------------
// Collection rate
// ---------------------------------------------------------------------------------------------------------------

export const BPS_FULL = 10_000

/**
 * floor(collected x 10000 / expected) basis points, at most 10000; 0 when nothing is expected. Computed in BigInt, so
 * totals of any size give the exact figure. Accepts kobo as safe integers or bigints.
 */
export const collectionRateBps = (collectedKobo: number | bigint, expectedKobo: number | bigint): number => {
  const toBig = (v: number | bigint, label: string): bigint => {
    if (typeof v === "number") {
      assertKobo(v, label)
      return BigInt(v)
    }
    if (v < 0n) throw new RangeError(`${label} must be non-negative, got ${String(v)}`)
    return v
  }
  const collected = toBig(collectedKobo, "collectedKobo")
  const expected = toBig(expectedKobo, "expectedKobo")
  if (expected === 0n) return 0
  const bps = (collected * BigInt(BPS_FULL)) / expected // BigInt division truncates: floor for non-negatives
  return bps >= BigInt(BPS_FULL) ? BPS_FULL : Number(bps)
}

// ---------------------------------------------------------------------------------------------------------------
// Aging
// ---------------------------------------------------------------------------------------------------------------

export const AGING_BUCKETS = ["0-7", "8-30", "31-60", "60+"] as const
export type AgingLabel = (typeof AGING_BUCKETS)[number]

/**
 * Whole Lagos calendar days from the due date to the date of `nowMs`: 0 on the due day (whatever the hour), 1 from the
 * next Lagos midnight, and 0 for anything not yet due.
 */
export const daysPastDue = (dueMs: number, nowMs: number): number => {
  assertInstant(dueMs, "dueMs")
  assertInstant(nowMs, "nowMs")
  return Math.max(0, lagosDayNumber(nowMs) - lagosDayNumber(dueMs))
}

/** Days past due from which a receivable with something outstanding is overdue: its due date has passed. */
export const OVERDUE_FROM_DAYS = 1

/** Whether a receivable `days` past due (as `daysPastDue` counts them: 0 on its due day and before it) is overdue. */
export const isOverdue = (days: number): boolean => days >= OVERDUE_FROM_DAYS

/** 0..7 (and anything below, not yet due) -> "0-7"; 8..30 -> "8-30"; 31..60 -> "31-60"; 61 and more -> "60+". */
export const agingBucketOf = (days: number): AgingLabel =>
  days <= 7 ? "0-7" : days <= 30 ? "8-30" : days <= 60 ? "31-60" : "60+"

export interface AgingItem {
  readonly outstandingKobo: number
  /** The receivable's due instant: a billing period's due date, else the account's expiry, else its creation. */
  readonly dueMs: number
}

export interface AgingBucket {
  readonly label: AgingLabel
  readonly count: number
  readonly amountKobo: number
}

/** All four buckets, in AGING_BUCKETS order (empty ones with zeros); items with nothing outstanding left out. */
export const agingOf = (items: ReadonlyArray<AgingItem>, nowMs: number): ReadonlyArray<AgingBucket> => {
  assertInstant(nowMs, "nowMs")
  const count = [0, 0, 0, 0]
  const amount = [0, 0, 0, 0]
  for (const item of items) {
    assertKobo(item.outstandingKobo, "outstandingKobo")
    if (item.outstandingKobo === 0) continue
    const i = AGING_BUCKETS.indexOf(agingBucketOf(daysPastDue(item.dueMs, nowMs)))
    count[i]! += 1
    amount[i]! += item.outstandingKobo
  }
  return AGING_BUCKETS.map((label, i) => ({ label, count: count[i]!, amountKobo: amount[i]! }))
}

/** Outstanding receivables split by `isOverdue` (the insight service's `overdue` answers it from the roll-ups). */
export interface OverdueSplit {
  /** Receivables past their due date: how many, their outstanding kobo. */
  readonly overdue: { readonly count: number; readonly amountKobo: number }
  /** The overdue ones by days past due, in AGING_BUCKETS order ("0-7" then holds only 1 to 7 days). */
  readonly buckets: ReadonlyArray<AgingBucket>
  /** Receivables due today or later: outstanding, not overdue. */
  readonly notYetDue: { readonly count: number; readonly amountKobo: number }
}

// ---------------------------------------------------------------------------------------------------------------
// Forecast
// ---------------------------------------------------------------------------------------------------------------

export const FORECAST_MIN_DAYS = 7
export const FORECAST_MAX_DAYS = 180
export const RUN_RATE_WINDOW_DAYS = 30

export interface ScheduledAmount {
  /** When the billing amount falls due; counted on its Lagos date. */
  readonly dueMs: number
  readonly amountKobo: number
}

export interface ForecastWeek {
  /** The week's Monday, a Lagos date `YYYY-MM-DD`. */
  readonly weekStart: string
  readonly scheduledKobo: number
  readonly projectedKobo: number
}

/** floor(trailing 30-day collections / 30): kobo a day. */
export const runRatePerDayKobo = (trailing30DayCollectedKobo: number): number => {
  assertKobo(trailing30DayCollectedKobo, "trailing30DayCollectedKobo")
  return Math.floor(trailing30DayCollectedKobo / RUN_RATE_WINDOW_DAYS)
}

/**
 * The horizon is `days` Lagos days from today's date (the date of `nowMs`) included. One row per Monday-based week
 * overlapping it, oldest first. scheduledKobo: the `scheduled` amounts whose Lagos due date is in that week and in the
 * horizon (earlier or later ones are left out; what is already overdue is aging's). projectedKobo: scheduledKobo +
 * floor(trailing30DayCollectedKobo / 30) x the week's days inside the horizon.
 */
export const forecastWeeks = (
  days: number,
  nowMs: number,
  scheduled: ReadonlyArray<ScheduledAmount>,
  trailing30DayCollectedKobo: number
): ReadonlyArray<ForecastWeek> => {
  if (!Number.isInteger(days) || days < FORECAST_MIN_DAYS || days > FORECAST_MAX_DAYS) {
    throw new RangeError(`days must be an integer from ${FORECAST_MIN_DAYS} to ${FORECAST_MAX_DAYS}, got ${String(days)}`)
  }
  assertInstant(nowMs, "nowMs")
  const perDay = runRatePerDayKobo(trailing30DayCollectedKobo)
  const firstDay = lagosDayNumber(nowMs)
  const endDay = firstDay + days // exclusive
  const monday = lagosWeekStart(nowMs)
  const mondayDay = lagosDayNumber(lagosMidnight(monday))
  const weekCount = Math.ceil((endDay - mondayDay) / 7)
  const scheduledByWeek = new Array<number>(weekCount).fill(0)
  for (const s of scheduled) {
    assertInstant(s.dueMs, "dueMs")
    assertKobo(s.amountKobo, "amountKobo")
    const day = lagosDayNumber(s.dueMs)
    if (day < firstDay || day >= endDay) continue
    scheduledByWeek[Math.floor((day - mondayDay) / 7)]! += s.amountKobo
  }
  return scheduledByWeek.map((scheduledKobo, w) => {
    const weekFirst = mondayDay + 7 * w
    const inHorizon = Math.min(weekFirst + 7, endDay) - Math.max(weekFirst, firstDay)
    return { weekStart: isoDate(addDays(monday, 7 * w)), scheduledKobo, projectedKobo: scheduledKobo + perDay * inHorizon }
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Customer score
// ---------------------------------------------------------------------------------------------------------------

export const ON_TIME_POINTS = 60
/** On-time points for a customer with no due payment yet: half, neither good nor bad. */
export const NO_HISTORY_ON_TIME_POINTS = 30
export const LATENESS_POINTS = 25
export const OUTSTANDING_POINTS = 15

export interface CustomerScoreInput {
  /** Due payments paid by their due date / due payments, 0 to 1; null when nothing has fallen due yet. */
  readonly onTimeRatio: number | null
  /** Average days late over the due payments (0 if none late; below 0, paid early, counts as 0). */
  readonly averageDaysLate: number
  readonly outstandingKobo: number
  readonly expectedKobo: number
}

/**
 * round(60 x onTimeRatio) (30 when null) + (25 - min(25, floor(averageDaysLate))) +
 * (15 - floor(15 x min(outstanding, expected) / expected)) (0 of the 15 when outstanding > 0 and expected = 0),
 * clamped to 0..100.
 */
export const customerScore = (input: CustomerScoreInput): number => {
  const { averageDaysLate, expectedKobo, onTimeRatio, outstandingKobo } = input
  if (onTimeRatio !== null && !(onTimeRatio >= 0 && onTimeRatio <= 1)) {
    throw new RangeError(`onTimeRatio must be from 0 to 1 or null, got ${String(onTimeRatio)}`)
  }
  if (Number.isNaN(averageDaysLate)) throw new RangeError("averageDaysLate must be a number")
  assertKobo(outstandingKobo, "outstandingKobo")
  assertKobo(expectedKobo, "expectedKobo")
  const onTime = onTimeRatio === null ? NO_HISTORY_ON_TIME_POINTS : Math.round(ON_TIME_POINTS * onTimeRatio)
  const lateLost = Math.min(LATENESS_POINTS, Math.max(0, Math.floor(averageDaysLate)))
  const outstandingLost = outstandingKobo === 0
    ? 0
    : expectedKobo === 0
      ? OUTSTANDING_POINTS
      : Number((BigInt(OUTSTANDING_POINTS) * BigInt(Math.min(outstandingKobo, expectedKobo))) / BigInt(expectedKobo))
  const score = onTime + (LATENESS_POINTS - lateLost) + (OUTSTANDING_POINTS - outstandingLost)
  return Math.max(0, Math.min(100, score))
}

export const CUSTOMER_BANDS = ["Excellent", "Good", "Fair", "Poor"] as const
export type CustomerBand = (typeof CUSTOMER_BANDS)[number]

/** Excellent 80+, Good 60+, Fair 40+, else Poor. */
export const bandOf = (score: number): CustomerBand =>
  score >= 80 ? "Excellent" : score >= 60 ? "Good" : score >= 40 ? "Fair" : "Poor"

// ---------------------------------------------------------------------------------------------------------------
// Deposit risk bands
// ---------------------------------------------------------------------------------------------------------------

export const RISK_BANDS = ["low", "medium", "high"] as const
export type RiskBand = (typeof RISK_BANDS)[number]

/** A deposit with a risk score at or above this counts as high-risk in the insights. */
export const HIGH_RISK_SCORE = 60
export const MEDIUM_RISK_SCORE = 30

/** low below 30, medium 30 to 59, high 60 to 100. */
export const riskBandOf = (score: number): RiskBand => {
  if (!Number.isInteger(score) || score < 0 || score > 100) {
    throw new RangeError(`a risk score is an integer from 0 to 100, got ${String(score)}`)
  }
  return score >= HIGH_RISK_SCORE ? "high" : score >= MEDIUM_RISK_SCORE ? "medium" : "low"
}
