import { formatNaira, type Period } from "../../src/domain/CopilotIntents.js"
import { addDays, isoDate, lagosDateOf, lagosMidnight } from "../../src/domain/Billing.js"
import { type DepositItem, MAX_REFERENCES } from "./CopilotReads.js"
import type { Figures } from "./LanguageModel.js"

// How the copilot writes: Lagos dates and periods for a person, lists of deposits, references without repeats. Pure.

export interface Reference { readonly kind: string; readonly id: string }
export interface Draft { readonly answer: string; readonly figures: Figures; readonly references: ReadonlyArray<Reference> }

export const DAY_MS = 86_400_000
export const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

/** A Lagos calendar date for a person: "23 November 2026". */
export const lagosDateText = (ms: number) => {
  const d = lagosDateOf(ms)
  return `${d.d} ${MONTHS[d.m - 1]} ${d.y}`
}
export const lagosTimeText = (ms: number) => new Date(ms + 3_600_000).toISOString().slice(11, 16)
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
export const percent = (bps: number) => `${(bps / 100).toFixed(2)}%`

/** "today (23 November 2026)", "this week (23 November 2026 to 29 November 2026)". */
export const periodText = (p: Period) => {
  const first = lagosDateText(p.fromMs)
  const last = lagosDateText(p.toMs - DAY_MS)
  return first === last ? `${p.label} (${first})` : `${p.label} (${first} to ${last})`
}
/** The period after a verb ("paid ₦X ..."): "this month (...)", "in the last 7 days (...)", "in March 2026 (...)", "on 5 November 2026 (...)". */
export const duringText = (p: Period) => {
  const text = periodText(p)
  if (/^last \d+ days$/.test(p.label)) return `in the ${text}`
  if (/^\d/.test(p.label)) return `on ${text}`
  return /^[A-Z]/.test(p.label) ? `in ${text}` : text
}
export const periodFigures = (p: Period) => ({ from: isoDate(lagosDateOf(p.fromMs)), to: isoDate(lagosDateOf(p.toMs - DAY_MS)) })

/** The last 30 Lagos days, today included: the window of list questions that name no period. */
export const last30Days = (nowMs: number): Period => {
  const today = lagosDateOf(nowMs)
  return { fromMs: lagosMidnight(addDays(today, -29)), toMs: lagosMidnight(addDays(today, 1)), label: "in the last 30 days" }
}
export const todayPeriod = (nowMs: number): Period => {
  const today = lagosDateOf(nowMs)
  return { fromMs: lagosMidnight(today), toMs: lagosMidnight(addDays(today, 1)), label: "today" }
}

export const uniqueRefs = (refs: ReadonlyArray<Reference>): ReadonlyArray<Reference> => {
  const seen = new Set<string>()
  return refs.filter((r) => (seen.has(`${r.kind}:${r.id}`) ? false : (seen.add(`${r.kind}:${r.id}`), true))).slice(0, MAX_REFERENCES)
}
export const depositRefs = (items: ReadonlyArray<DepositItem>): ReadonlyArray<Reference> =>
  items.flatMap((d) => [{ kind: "transaction", id: d.reference }, ...(d.accountRef ? [{ kind: "accountRef", id: d.accountRef }] : [])])
export const depositLine = (d: DepositItem) =>
  `${formatNaira(d.amountKobo)} (${d.reference}${d.accountRef ? `, account ${d.accountRef}` : ", no matching account"}, ${lagosDateText(d.reconciledAt.getTime())})`
export const listed = (lines: ReadonlyArray<string>, total: number) =>
  lines.length === 0 ? "" : ` Latest: ${lines.slice(0, 5).join("; ")}${total > 5 ? `; and ${total - 5} more` : ""}.`

export const EXAMPLES = [
  "How much did we collect today?", "Collections this month", "What is the status of account INV-2041?", "Has Chinedu Okafor paid?",
  "What is overdue?", "Underpaid deposits last week", "Overpaid deposits this month", "What's in the review queue?",
  "High-risk deposits this month", "Forecast for the next 60 days", "Top 5 debtors", "Find deposit <reference>",
  "Payouts this week", "Refunds last month", "Settlements since 1 November", "What is our collection rate?"
]

