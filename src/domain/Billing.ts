/**
 * Recurring billing's pure parts: the Africa/Lagos calendar of a schedule's periods, and each period's state as a
 * function of the periods, what the account has been paid, and the time.
 *
 * Nigeria keeps West Africa Time (UTC+1) all year, so a Lagos calendar date's midnight is 23:00 UTC the day before.
 * A schedule's periods start at Lagos midnight on its anchor date plus whole intervals; Monthly (and Quarterly and
 * Yearly) keep the anchor's day of the month, clamped to the month's length (Jan 31 -> Feb 28/29 -> Mar 31).
 */

export const BILLING_INTERVALS = ["Weekly", "Monthly", "Quarterly", "Yearly"] as const
export type BillingInterval = (typeof BILLING_INTERVALS)[number]

export const DUE_OFFSET_MAX_DAYS = 365
const LAGOS_OFFSET_MS = 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

/** A calendar date in Lagos: month 1 to 12. */
export interface LagosDate {
  readonly y: number
  readonly m: number
  readonly d: number
}

export const lagosDateOf = (epochMs: number): LagosDate => {
  const t = new Date(epochMs + LAGOS_OFFSET_MS)
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() }
}

/** The instant of 00:00 in Lagos on `date`. */
export const lagosMidnight = (date: LagosDate): number => Date.UTC(date.y, date.m - 1, date.d) - LAGOS_OFFSET_MS

export const isoDate = (date: LagosDate): string =>
  `${String(date.y).padStart(4, "0")}-${String(date.m).padStart(2, "0")}-${String(date.d).padStart(2, "0")}`

export const addDays = (date: LagosDate, days: number): LagosDate => lagosDateOf(lagosMidnight(date) + days * DAY_MS)

const daysInMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate()

const monthsOf: Record<Exclude<BillingInterval, "Weekly">, number> = { Monthly: 1, Quarterly: 3, Yearly: 12 }

/** The start date of the `k`-th period (0-based) of a schedule anchored on `anchor`. */
export const periodStartDate = (anchor: LagosDate, interval: BillingInterval, k: number): LagosDate => {
  if (interval === "Weekly") return addDays(anchor, 7 * k)
  const months = anchor.m - 1 + monthsOf[interval] * k
  const y = anchor.y + Math.floor(months / 12)
  const m = (months % 12) + 1
  return { y, m, d: Math.min(anchor.d, daysInMonth(y, m)) }
}

export interface PeriodCalendar {
  /** 1-based. */
  readonly index: number
  readonly startMs: number
  readonly endMs: number
  readonly dueDate: LagosDate
  /** From this instant (the start of its due date in Lagos) an unpaid period is Due. */
  readonly dueAtMs: number
  /** From this instant (the start of the next Lagos day) an unpaid period is Overdue. */
  readonly overdueAtMs: number
}

/** The calendar of the `index`-th period (1-based). */
export const periodCalendar = (anchor: LagosDate, interval: BillingInterval, index: number, dueOffsetDays: number): PeriodCalendar => {
  const start = periodStartDate(anchor, interval, index - 1)
  const dueDate = addDays(start, dueOffsetDays)
  return {
    index,
    startMs: lagosMidnight(start),
    endMs: lagosMidnight(periodStartDate(anchor, interval, index)),
    dueDate,
    dueAtMs: lagosMidnight(dueDate),
    overdueAtMs: lagosMidnight(addDays(dueDate, 1))
  }
}

/** How many periods have started by `nowMs` (those whose start is at or before it). */
export const periodsStartedBy = (anchor: LagosDate, interval: BillingInterval, nowMs: number): number => {
  // A first guess from the average length, then exact steps: cheap for any jump of the clock.
  const approxDays = interval === "Weekly" ? 7 : interval === "Monthly" ? 30.4 : interval === "Quarterly" ? 91.3 : 365.2
  let k = Math.max(0, Math.floor((nowMs - lagosMidnight(anchor)) / (approxDays * DAY_MS)) - 1)
  while (k > 0 && lagosMidnight(periodStartDate(anchor, interval, k - 1)) > nowMs) k--
  while (lagosMidnight(periodStartDate(anchor, interval, k)) <= nowMs) k++
  return k
}

/** The index (1-based) of the first period that starts after `nowMs`: where a resumed schedule picks up. */
export const nextPeriodAfter = (anchor: LagosDate, interval: BillingInterval, nowMs: number): number =>
  periodsStartedBy(anchor, interval, nowMs) + 1

export type PeriodStatus = "Open" | "Due" | "Paid" | "Overdue" | "Cancelled"

export interface PeriodInput {
  /** What the period expects (after a cancel: what it had been paid then). */
  readonly amountKobo: number
  readonly cancelled: boolean
  readonly dueAtMs: number
  readonly overdueAtMs: number
}

export interface PeriodState {
  readonly paidKobo: number
  readonly outstandingKobo: number
  readonly status: PeriodStatus
}

/**
 * The state of each period (in order, oldest first): what the account was paid beyond `baseKobo` (what it held when
 * the schedule began) pays the oldest period first, so an overpayment carries forward and a reversal re-opens the
 * latest paid period first. Unpaid: Open, then Due from its due date, then Overdue from the day after.
 */
export const periodStates = (periods: ReadonlyArray<PeriodInput>, baseKobo: number, amountPaidKobo: number, nowMs: number): ReadonlyArray<PeriodState> => {
  let left = Math.max(0, amountPaidKobo - baseKobo)
  return periods.map((p) => {
    const paidKobo = Math.min(left, p.amountKobo)
    left -= paidKobo
    const outstandingKobo = p.amountKobo - paidKobo
    const status: PeriodStatus = p.cancelled
      ? "Cancelled"
      : outstandingKobo === 0
        ? "Paid"
        : nowMs >= p.overdueAtMs
          ? "Overdue"
          : nowMs >= p.dueAtMs
            ? "Due"
            : "Open"
    return { paidKobo, outstandingKobo: p.cancelled ? 0 : outstandingKobo, status }
  })
}
