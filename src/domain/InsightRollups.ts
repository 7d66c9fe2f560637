/**
 * What the insight roll-ups hold, as pure functions: an account's receivables (what it is expected to pay, split by due
 * date, and how much of each is collected), a billing schedule's dues in a window, a deposit's contributions to the
 * daily figures, and a customer's score inputs. The insights consumer (services/insights/Rollups.ts) recomputes these
 * for whatever an event touched and adds the difference to the roll-up tables; a full scan computes the same functions
 * over every row (the test that compares them is test/insights/RollupsScan.test.ts).
 *
 * Days are Lagos day numbers: floor((epoch ms + 1 h) / 24 h), the days since 1970-01-01 of the Lagos calendar date.
 */
import { type BillingInterval, type LagosDate, periodCalendar } from "./Billing.js"
import { HIGH_RISK_SCORE, MEDIUM_RISK_SCORE } from "./Insights.js"

const DAY_MS = 24 * 60 * 60 * 1000
const LAGOS_OFFSET_MS = 60 * 60 * 1000

/** The Lagos day number of an instant. */
export const dayOf = (epochMs: number): number => Math.floor((epochMs + LAGOS_OFFSET_MS) / DAY_MS)
/** The Lagos midnight that starts day `day`. */
export const dayStartMs = (day: number): number => day * DAY_MS - LAGOS_OFFSET_MS
/** `YYYY-MM-DD` of a Lagos day number. */
export const dayIso = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)
/** The Lagos day number of `YYYY-MM-DD`, or undefined when it is no calendar date. */
export const dayOfIso = (iso: string): number | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso)
  if (!m) return undefined
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  return dayIso(ms / DAY_MS) === iso ? ms / DAY_MS : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Receivables
// ---------------------------------------------------------------------------------------------------------------

export interface ReceivableAccount {
  /** null: an open account, which expects nothing and has no receivable. */
  readonly expectedKobo: number | null
  readonly amountPaidKobo: number
  readonly createdAtMs: number
  readonly expiryMs: number | null
}

export interface ReceivablePeriod {
  /** The period's amount as billing keeps it (a cancelled period keeps what was paid of it). */
  readonly amountKobo: number
  readonly dueAtMs: number
}

export interface Receivable {
  /** 0 for what the account expected apart from billing, then 1, 2, ... for its billing periods in order. */
  readonly seq: number
  readonly dueDay: number
  readonly amountKobo: number
  readonly collectedKobo: number
}

/**
 * An account's receivables: what it expects apart from billing (its expected amount less its billing periods', due on
 * its expiry date, else the day it was created) first, then each billing period (oldest first, due on its due date).
 * What the account has been paid covers them in that order, as billing itself counts it; an amount paid over the
 * expected amount is an overpayment, not collected against any receivable. The amounts always add up to the expected
 * amount (periods beyond it, which billing never leaves, are cut), and each collected is at most its amount.
 */
export const receivablesOf = (account: ReceivableAccount, periods: ReadonlyArray<ReceivablePeriod>): ReadonlyArray<Receivable> => {
  const expected = account.expectedKobo ?? 0
  if (expected <= 0) return []
  const periodTotal = periods.reduce((sum, p) => sum + p.amountKobo, 0)
  const baseKobo = Math.max(0, expected - periodTotal)
  const out: Array<Receivable> = []
  let left = expected
  let paid = Math.max(0, account.amountPaidKobo)
  const push = (seq: number, dueMs: number, amount: number) => {
    const amountKobo = Math.min(amount, left)
    left -= amountKobo
    if (amountKobo <= 0) return
    const collectedKobo = Math.min(paid, amountKobo)
    paid -= collectedKobo
    out.push({ seq, dueDay: dayOf(dueMs), amountKobo, collectedKobo })
  }
  push(0, account.expiryMs ?? account.createdAtMs, baseKobo)
  periods.forEach((p, i) => push(i + 1, p.dueAtMs, p.amountKobo))
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// A billing schedule's dues (the forecast's scheduled part)
// ---------------------------------------------------------------------------------------------------------------

export interface ScheduleForDues {
  readonly status: "Active" | "Paused" | "Cancelled"
  readonly interval: BillingInterval
  readonly anchor: LagosDate
  readonly dueOffsetDays: number
  readonly amountKobo: number
  readonly nextAmountKobo: number | null
  /** Periods opened so far (the next to open is nextK + 1). */
  readonly nextK: number
  /** The periods opened, with their due instants (cancelled ones left out). */
  readonly opened: ReadonlyArray<ReceivablePeriod>
}

/** Days of projection past one interval: the forecast looks 180 days ahead; a schedule is recomputed at least once an interval. */
export const DUES_LOOKAHEAD_DAYS = 190
export const intervalDays = (interval: BillingInterval): number =>
  interval === "Weekly" ? 7 : interval === "Monthly" ? 31 : interval === "Quarterly" ? 92 : 366

/**
 * A schedule's billing dues by Lagos day in [fromDay, fromDay + one interval + DUES_LOOKAHEAD_DAYS): the periods it
 * opened (not cancelled) and, while Active, the periods it will open (the next at `nextAmountKobo` when set, the rest
 * at `amountKobo`). Sorted by day; one entry per day (amounts summed).
 */
export const scheduleDues = (s: ScheduleForDues, fromDay: number): ReadonlyArray<{ readonly day: number; readonly amountKobo: number }> => {
  const endDay = fromDay + intervalDays(s.interval) + DUES_LOOKAHEAD_DAYS
  const byDay = new Map<number, number>()
  const add = (day: number, amount: number) => {
    if (day >= fromDay && day < endDay && amount > 0) byDay.set(day, (byDay.get(day) ?? 0) + amount)
  }
  for (const p of s.opened) add(dayOf(p.dueAtMs), p.amountKobo)
  if (s.status === "Active") {
    for (let k = s.nextK + 1; ; k++) {
      const cal = periodCalendar(s.anchor, s.interval, k, s.dueOffsetDays)
      const day = dayOf(cal.dueAtMs)
      if (day >= endDay) break
      add(day, k === s.nextK + 1 ? s.nextAmountKobo ?? s.amountKobo : s.amountKobo)
    }
  }
  return [...byDay.entries()].sort((a, b) => a[0] - b[0]).map(([day, amountKobo]) => ({ day, amountKobo }))
}

// ---------------------------------------------------------------------------------------------------------------
// A deposit's contributions to the daily figures
// ---------------------------------------------------------------------------------------------------------------

export interface DepositForRollup {
  readonly kind: "inflow" | "reversal"
  readonly status: "Completed" | "PendingReview" | "Rejected" | "Reversed"
  /** Matched to a virtual account (an unmatched deposit is no collection). */
  readonly matched: boolean
  readonly amountKobo: number
}

/**
 * What a deposit adds to "collected" on its Lagos day (the forecast's run-rate): a matched inflow once it is Completed
 * (or later Reversed: it did come in), a matched reversal takes its amount back; held, rejected and unmatched deposits
 * add nothing.
 */
export const collectedContribution = (d: DepositForRollup): number => {
  if (!d.matched) return 0
  if (d.kind === "inflow") return d.status === "Completed" || d.status === "Reversed" ? d.amountKobo : 0
  return d.status === "Completed" ? -d.amountKobo : 0
}

/** The deposit risk band of transactions row `t` as SQL: the same bands as `riskBandOf`. */
export const riskBandSql = (t: string): string =>
  `CASE WHEN ${t}.risk_score >= ${HIGH_RISK_SCORE} THEN 'high' WHEN ${t}.risk_score >= ${MEDIUM_RISK_SCORE} THEN 'medium' ELSE 'low' END`
/** The Lagos day number of a timestamptz column, as SQL: the same as `dayOf`. */
export const daySql = (column: string): string => `floor((extract(epoch FROM ${column}) * 1000 + ${LAGOS_OFFSET_MS}) / ${DAY_MS})::int`
/** `collectedContribution` of transactions row `t`, as SQL. */
export const collectedSql = (t: string): string => `CASE WHEN ${t}.virtual_account_id IS NULL THEN 0
  WHEN ${t}.kind = 'inflow' AND ${t}.status IN ('Completed', 'Reversed') THEN ${t}.amount_kobo
  WHEN ${t}.kind = 'reversal' AND ${t}.status = 'Completed' THEN -${t}.amount_kobo ELSE 0 END`

// ---------------------------------------------------------------------------------------------------------------
// Customer score inputs
// ---------------------------------------------------------------------------------------------------------------

export interface ScoredReceivable {
  readonly dueDay: number
  readonly amountKobo: number
  readonly collectedKobo: number
  /** The Lagos day it became fully collected, null while something is outstanding. */
  readonly paidDay: number | null
}

/**
 * The score inputs of a customer's receivables on day `today`: a receivable counts once it is paid or its due day has
 * passed (due before today). On time: paid on or before its due day. Days late: paid -> paid day - due day (not below
 * 0); unpaid past due -> today - due day. onTimeRatio is null with nothing counted.
 */
export const scoreInputOf = (receivables: ReadonlyArray<ScoredReceivable>, today: number) => {
  let counted = 0
  let onTime = 0
  let lateDays = 0
  let expectedKobo = 0
  let outstandingKobo = 0
  for (const r of receivables) {
    expectedKobo += r.amountKobo
    outstandingKobo += r.amountKobo - r.collectedKobo
    const paid = r.paidDay !== null && r.collectedKobo >= r.amountKobo
    if (!paid && r.dueDay >= today) continue
    counted += 1
    if (paid) {
      if (r.paidDay! <= r.dueDay) onTime += 1
      lateDays += Math.max(0, r.paidDay! - r.dueDay)
    } else {
      lateDays += today - r.dueDay
    }
  }
  return {
    onTimeRatio: counted === 0 ? null : onTime / counted,
    averageDaysLate: counted === 0 ? 0 : lateDays / counted,
    outstandingKobo,
    expectedKobo
  }
}

