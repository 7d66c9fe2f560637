/**
 * The periods a copilot prompt names, on the Africa/Lagos calendar: half-open [fromMs, toMs) over whole Lagos days
 * (UTC+1 all year, weeks start on Monday); a calendar unit ("this week", "this month") runs to its end, "last N days"
 * and "since ..." end with today. A month without a year is the latest one not in the future.
 */
import { addDays, type LagosDate, lagosDateOf, lagosMidnight } from "./Billing.js"

export interface Period { readonly fromMs: number; readonly toMs: number; readonly label: string }

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
  "October", "November", "December"]
const MONTH_RE = "(january|february|march|april|may|june|july|august|september|october|november|december|" +
  "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
const monthOf = (word: string): number => MONTHS.indexOf(word.slice(0, 3)) + 1
export const isMonth = (word: string): boolean => new RegExp(`^${MONTH_RE}$`).test(word)

/** The Lagos calendar date of an instant, and the instant its day starts. */
export const lagosDay = (ms: number): LagosDate => lagosDateOf(ms)
export const lagosDayStartMs = (ms: number): number => lagosMidnight(lagosDateOf(ms))

const dateLabel = (d: LagosDate): string => `${d.d} ${MONTH_NAMES[d.m - 1]} ${d.y}`
const span = (from: LagosDate, to: LagosDate, label: string): Period =>
  ({ fromMs: lagosMidnight(from), toMs: lagosMidnight(to), label })
const monthSpan = (y: number, m: number, label: string): Period =>
  span({ y, m, d: 1 }, m === 12 ? { y: y + 1, m: 1, d: 1 } : { y, m: m + 1, d: 1 }, label)

/** The most recent `month` (of `year` if given) not after today. */
const recentYear = (today: LagosDate, month: number, day: number, year?: string): number =>
  year !== undefined ? Number(year) : month > today.m || (month === today.m && day > today.d) ? today.y - 1 : today.y

export const parsePeriod = (text: string, nowMs: number): Period | undefined => {
  const today = lagosDateOf(nowMs)
  const tomorrow = addDays(today, 1)
  const monday = addDays(today, -((new Date(Date.UTC(today.y, today.m - 1, today.d)).getUTCDay() + 6) % 7))
  let m: RegExpMatchArray | null
  if ((m = text.match(/\b(?:last|past|previous)\s+(\d{1,3})\s+(day|week)s?\b/)) !== null) {
    const n = Math.min(366, Math.max(1, Number(m[1]) * (m[2] === "week" ? 7 : 1)))
    return span(addDays(today, 1 - n), tomorrow, `last ${n} days`)
  }
  if ((m = text.match(new RegExp(`\\bsince\\s+(?:(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}|${MONTH_RE}(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?)?)(?:\\s+(\\d{4}))?\\b`))) !== null) {
    const month = monthOf(m[2] ?? m[3]!)
    const day = Number(m[1] ?? m[4] ?? 1)
    const from = { y: recentYear(today, month, day, m[5]), m: month, d: day }
    return span(from, tomorrow, `since ${dateLabel(from)}`)
  }
  if ((m = text.match(new RegExp(`\\bon\\s+(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}(?:\\s+(\\d{4}))?\\b`))) !== null) {
    const month = monthOf(m[2]!)
    const day = { y: recentYear(today, month, Number(m[1]), m[3]), m: month, d: Number(m[1]) }
    return span(day, addDays(day, 1), dateLabel(day))
  }
  if ((m = text.match(new RegExp(`\\b(?:in|for|during|of|last)\\s+${MONTH_RE}(?:\\s+(\\d{4}))?\\b|\\b${MONTH_RE}\\s+(\\d{4})\\b`))) !== null) {
    const month = monthOf(m[1] ?? m[3]!)
    const y = recentYear(today, month, 1, m[2] ?? m[4])
    return monthSpan(y, month, `${MONTH_NAMES[month - 1]} ${y}`)
  }
  if (/\b(?:today|this day)\b/.test(text)) return span(today, tomorrow, "today")
  if (/\byesterday\b/.test(text)) return span(addDays(today, -1), today, "yesterday")
  if (/\b(?:this|current) week\b/.test(text)) return span(monday, addDays(monday, 7), "this week")
  if (/\b(?:last|previous) week\b/.test(text)) return span(addDays(monday, -7), monday, "last week")
  if (/\bpast week\b/.test(text)) return span(addDays(today, -6), tomorrow, "last 7 days")
  if (/\b(?:this|current) month\b/.test(text)) return monthSpan(today.y, today.m, "this month")
  if (/\b(?:last|previous) month\b/.test(text)) {
    return today.m === 1 ? monthSpan(today.y - 1, 12, "last month") : monthSpan(today.y, today.m - 1, "last month")
  }
  if (/\bpast month\b/.test(text)) return span(addDays(today, -29), tomorrow, "last 30 days")
  if (/\b(?:this|current) year\b/.test(text)) return span({ y: today.y, m: 1, d: 1 }, { y: today.y + 1, m: 1, d: 1 }, "this year")
  if (/\b(?:last|previous) year\b/.test(text)) return span({ y: today.y - 1, m: 1, d: 1 }, { y: today.y, m: 1, d: 1 }, "last year")
  return undefined
}
