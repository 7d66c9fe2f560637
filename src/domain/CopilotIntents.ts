/**
 * The copilot's deterministic intent parser: a prompt in English, Nigerian business English or Pidgin (with the usual
 * misspellings) becomes an intent, an optional Lagos-calendar period, and the subject, reference, forecast horizon or
 * top-N it names. No model and no IO: the same prompt at the same instant always parses the same way.
 *
 * How it decides, so a person can explain any answer: the prompt is lower-cased, stripped of punctuation, and each word
 * is corrected against a short vocabulary (a fixed map, then one edit, or two for long words). Every intent has cues
 * (a word, a word prefix ending in `*`, or a phrase) with weights; the intent with the highest total wins, earlier in
 * INTENTS on a tie, and below MIN_SCORE the answer is `unknown`. A named customer or account adds 3 to
 * `account_status`, a deposit reference 4 to `deposit_lookup`, a "next N days" horizon 2 to `forecast`.
 *
 * Periods are half-open [fromMs, toMs) over whole Lagos days (UTC+1 all year, weeks start on Monday); a calendar unit
 * ("this week", "this month") runs to its end, "last N days" and "since ..." end with today.
 */
import { isMonth, parsePeriod, type Period } from "./CopilotPeriods.js"
import { editDistance } from "./Nearest.js"

export { lagosDay, lagosDayStartMs, parsePeriod, type Period } from "./CopilotPeriods.js"

/** Specific intents first: a tie goes to the earlier one. */
export const INTENTS = [
  "underpaid_deposits", "overpaid_deposits", "review_queue", "high_risk_deposits", "deposit_lookup",
  "payouts", "refunds", "settlements", "collection_rate", "forecast", "top_debtors", "overdue",
  "account_status", "collections_summary", "unknown"
] as const
export type Intent = (typeof INTENTS)[number]

export interface Subject { readonly kind: "accountRef" | "name"; readonly value: string }
export interface ParsedIntent {
  readonly intent: Intent
  readonly period?: Period
  readonly subject?: Subject
  readonly reference?: string
  /** The forecast horizon in days, 7 to 180 (30 unless the prompt says). Only on `forecast`. */
  readonly days?: number
  /** "top 5 debtors": how many, 1 to 100. */
  readonly take?: number
}

export const MIN_SCORE = 2
export const FORECAST_DAYS = { min: 7, max: 180, default: 30 } as const

const CUES: Record<Exclude<Intent, "unknown">, Record<string, number>> = {
  underpaid_deposits: { "underpaid": 5, "under paid": 5, "underpayment*": 5, "under payment": 5, "paid less": 5,
    "less than": 2, "short*": 3, "part payment*": 4, "partial*": 4, "incomplete": 3, "deficit": 3 },
  overpaid_deposits: { "overpaid": 5, "over paid": 5, "overpayment*": 5, "over payment": 5, "paid more": 5,
    "more than": 2, "excess": 4, "extra": 2, "surplus": 3 },
  review_queue: { "review*": 4, "queue*": 3, "pending": 2, "awaiting": 2, "waiting": 2, "approv*": 2, "hold": 2,
    "held": 2, "manual*": 2 },
  high_risk_deposits: { "risk*": 4, "high risk": 2, "suspicious": 4, "fraud*": 4, "flagged": 3, "dodgy": 3,
    "red flag*": 3, "scam*": 3, "wahala": 3 },
  deposit_lookup: { "receipt": 2, "find": 1, "lookup": 2, "look up": 2, "reference": 2, "ref": 2, "session": 1,
    "transaction": 1 },
  payouts: { "payout*": 4, "pay out": 4, "paid out": 4, "withdraw*": 3, "disburse*": 3, "cash out": 3 },
  refunds: { "refund*": 4, "reversal*": 3, "revers*": 2, "chargeback*": 3, "charge back": 3, "returned": 2 },
  settlements: { "settle*": 4, "remit*": 2 },
  collection_rate: { "rate": 3, "collection rate": 2, "percent*": 3, "ratio": 3, "how well": 2 },
  forecast: { "forecast*": 4, "project*": 3, "predict*": 3, "expect*": 2, "will": 1, "going to": 1, "we go": 2,
    "upcoming": 2, "next": 1 },
  top_debtors: { "debtor*": 3, "top": 2, "most": 2, "highest": 2, "biggest": 2, "largest": 2, "worst": 2,
    "owe pass": 4, "defaulter*": 3, "owe*": 1 },
  overdue: { "overdue": 4, "late": 2, "owe*": 2, "outstanding": 3, "arrears": 3, "unpaid": 3, "never pay": 4,
    "never paid": 4, "not paid": 3, "havent paid": 3, "didnt pay": 3, "aging": 3, "ageing": 3, "past due": 4,
    "due": 1, "debt": 2 },
  account_status: { "status": 3, "account": 1, "balance": 2, "customer": 1, "paid up": 2, "up to date": 2 },
  collections_summary: { "collect*": 3, "came in": 3, "come in": 3, "comes in": 3, "inflow*": 3, "received": 2,
    "receive": 2, "enter": 2, "entered": 2, "payments": 2, "payment": 1, "paid": 1, "revenue": 2, "income": 2,
    "money": 1, "deposits": 1, "transfers": 1, "how much": 1, "total": 1, "summary": 2, "sales": 2 }
}

/** Misspellings and short forms that an edit distance would not catch safely. */
const FIXES: Record<string, string> = {
  tday: "today", tody: "today", "2day": "today", yday: "yesterday", ystday: "yesterday", wk: "week", mth: "month",
  overdu: "overdue", ovadue: "overdue", underpayed: "underpaid", overpayed: "overpaid", payot: "payout",
  pyout: "payout", settlment: "settlement", refnd: "refund", recieve: "receive", reciept: "receipt", rcpt: "receipt",
  collecton: "collection", colect: "collect", percantage: "percentage", stattus: "status", debters: "debtors",
  que: "queue", queu: "queue", qeue: "queue"
}

/** The words a misspelling may be corrected to (month names are left out: "match" is not "march"). */
const VOCAB = [
  "collect", "collection", "collections", "collected", "received", "receive", "receipt", "payment", "payments",
  "payout", "payouts", "refund", "refunds", "refunded", "settlement", "settlements", "settled", "overdue",
  "underpaid", "overpaid", "underpayment", "overpayment", "forecast", "projection", "projected", "prediction",
  "deposit", "deposits", "transfer", "transfers", "transaction", "transactions", "review", "queue",
  "debtor", "debtors", "customer", "customers", "account", "accounts", "status", "outstanding", "suspicious",
  "flagged", "percentage", "expected", "balance", "reference", "today", "yesterday", "weeks", "months", "partial",
  "arrears", "revenue", "summary", "withdrawal", "defaulters", "highest", "biggest", "largest"
]

const STOP = new Set(("a an the of for in on at to from by with and or is are was were be been has have had do does " +
  "did done can could would should will shall may might me my i we us our you your it its this that these those what " +
  "whats how who whom which when where why please pls abeg wetin dey don na wey una oga sir ma madam show tell give " +
  "list find check see get got let lets any all some so far much many far today yesterday week month year day days " +
  "last past next since this today everybody everyone anybody anyone somebody people they them he she his her their " +
  "just now still yet already ok okay hello hi " +
  // Real words one edit from a vocabulary word, never corrected: "spending" is not "pending", "stats" not "status".
  "spending sending ending lending stats states match").split(" "))

const NUMBER_WORDS: Record<string, string> = {
  one: "1", two: "2", three: "3", four: "4", five: "5", six: "6", seven: "7", eight: "8", nine: "9", ten: "10",
  twelve: "12", fifteen: "15", twenty: "20", thirty: "30", forty: "40", fifty: "50", sixty: "60", ninety: "90"
}


/** A lower-case word as the parser reads it: a fixed fix, a number word as digits, else the nearest vocabulary word. */
const correct = (word: string): string => {
  const fixed = FIXES[word] ?? NUMBER_WORDS[word]
  if (fixed !== undefined) return fixed
  if (word.length < 5 || STOP.has(word) || VOCAB.includes(word) || /\d/.test(word) || isMonth(word)) return word
  const allowed = word.length >= 8 ? 2 : 1
  let best = word
  let bestDistance = allowed + 1
  for (const v of VOCAB) {
    if (Math.abs(v.length - word.length) > allowed) continue
    const dist = editDistance(word, v)
    if (dist < bestDistance) [best, bestDistance] = [v, dist]
  }
  return best
}

/** Lower-case words without punctuation ("what's" -> "whats", "pay-out" -> "pay out"), each corrected. */
export const normalise = (prompt: string): string[] =>
  prompt.toLowerCase().replace(/['’`]/g, "").split(/[^a-z0-9]+/).filter((w) => w.length > 0).map(correct)

/** A cue is a word ("rate"), a word prefix ("refund*") or a phrase ("came in", "part payment*"). */
const cueMatches = (cue: string, words: readonly string[], text: string): boolean => {
  const prefix = cue.endsWith("*")
  const stem = prefix ? cue.slice(0, -1) : cue
  if (stem.includes(" ")) return text.includes(prefix ? ` ${stem}` : ` ${stem} `)
  return prefix ? words.some((w) => w.startsWith(stem)) : words.includes(stem)
}

/** The score of every intent for these words: the explainable core of the parser. */
export const scoreIntents = (words: readonly string[]): Record<Exclude<Intent, "unknown">, number> => {
  const text = ` ${words.join(" ")} `
  const scores = {} as Record<Exclude<Intent, "unknown">, number>
  for (const [intent, cues] of Object.entries(CUES) as Array<[Exclude<Intent, "unknown">, Record<string, number>]>) {
    scores[intent] = Object.entries(cues).reduce((sum, [cue, w]) => sum + (cueMatches(cue, words, text) ? w : 0), 0)
  }
  return scores
}

// ---- Lagos calendar ----

/** "next 60 days", "next 2 weeks", "next quarter", "forecast 90 days": the horizon in days, if the prompt names one. */
const parseHorizon = (text: string): number | undefined => {
  const unit = (u: string) => (u.startsWith("week") ? 7 : u.startsWith("month") ? 30 : u.startsWith("quarter") ? 90 : 1)
  const m = text.match(/\bnext\s+(?:(\d{1,4})\s+)?(days?|weeks?|months?|quarters?)\b/) ??
    text.match(/\b(?<!last |past |previous )(\d{1,4})\s+(days?|weeks?|months?)\b/)
  return m === null ? undefined : Number(m[1] ?? 1) * unit(m[2]!)
}

const parseTake = (text: string): number | undefined => {
  const m = text.match(/\btop\s+(\d{1,4})\b/) ??
    text.match(/\b(\d{1,4})\s+(?:(?:biggest|largest|highest|worst|top)\s+)?(?:debtors?|customers|defaulters|accounts)\b/)
  return m === null ? undefined : Math.min(100, Math.max(1, Number(m[1])))
}

// ---- subjects and references, read from the prompt as typed ----

const ACCOUNT_WORDS = new Set(["account", "accountref", "customer", "invoice", "acct", "acc"])
const REFERENCE_WORDS = new Set(["deposit", "reference", "ref", "transaction", "transfer", "session", "receipt",
  "txn", "payment", "sessionid"])

interface Identifiers { readonly reference?: string; readonly accountRef?: string }

const parseIdentifiers = (prompt: string): Identifiers => {
  const raw = prompt.split(/\s+/).map((t) => t.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "")).filter((t) => t !== "")
  let found: { reference?: string; accountRef?: string } = {}
  raw.forEach((token, i) => {
    if (!/\d/.test(token) || !/^[A-Za-z0-9][A-Za-z0-9_\-./]*$/.test(token) || /^\d+(st|nd|rd|th)$/i.test(token)) return
    const before = raw.slice(Math.max(0, i - 3), i).map((w) => correct(w.toLowerCase()))
    const allDigits = /^\d+$/.test(token)
    if (before.some((w) => ACCOUNT_WORDS.has(w)) && !allDigits) found = { accountRef: token, ...found }
    else if (before.some((w) => REFERENCE_WORDS.has(w)) || (allDigits && token.length >= 10)) found = { reference: token, ...found }
    else if (!allDigits && token.length >= 4 && !token.split(/[^A-Za-z]+/).filter((w) => w !== "").every(isKeyword)) {
      found = { accountRef: token, ...found } // "INV-2041" names an account; "Top-5" does not
    }
  })
  return found
}

const NAME_PATTERNS = [
  /\b(?:has|have|did|if)\s+(.+?)\s+(?:paid|pay|settled)\b/i,
  /\b(?:status|balance|account)\s+(?:of|for)\s+(.+)/i,
  /\bhow far (?:with|for)\s+(.+)/i,
  /\b(?:does|do|is)\s+(.+?)\s+(?:owe|owes|owing)\b/i,
  /\b(?:customer|for)\s+(.+)/i,
  /^(.+?)(?:'s|’s)\s+(?:status|account|balance)\b/i
]
const CUE_WORDS = Object.values(CUES).flatMap((cues) => Object.keys(cues)).filter((c) => !c.includes(" "))
/** A word the parser understands, so never part of a name (prefix cues of 4+ letters: "Owen" is not "owe*"). */
const isKeyword = (word: string): boolean => {
  const c = correct(word.toLowerCase())
  return STOP.has(c) || VOCAB.includes(c) || isMonth(c) || CUE_WORDS.some((cue) =>
    cue === c || (cue.endsWith("*") && cue.length >= 5 && c.startsWith(cue.slice(0, -1))))
}

/** The first run of words that are not keywords: "Tunde Bakare account today" -> "Tunde Bakare". */
const nameFrom = (phrase: string, skipLeading: boolean): string | undefined => {
  const words: string[] = []
  for (const w of phrase.split(/\s+/).map((t) => t.replace(/(?:'s|’s)$/i, "").replace(/[^\p{L}'-]/gu, ""))) {
    const keyword = w.length < 2 || isKeyword(w)
    if (keyword && (words.length > 0 || !skipLeading)) break
    if (!keyword) words.push(w)
    if (words.length === 4) break
  }
  return words.length === 0 ? undefined : words.join(" ")
}

const parseName = (prompt: string): string | undefined => {
  for (const pattern of NAME_PATTERNS) {
    const m = prompt.match(pattern)
    const name = m === null ? undefined : nameFrom(m[1]!, false)
    if (name !== undefined) return name
  }
  // Otherwise two or more capitalised words that are not keywords: "Any news on Ngozi Adeyemi?"
  return prompt.match(/\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)+/gu)?.map((run) => nameFrom(run, true))
    .find((n) => n?.includes(" "))
}

// ---- the parser ----

export const parseIntent = (prompt: string, nowMs: number): ParsedIntent => {
  const words = normalise(prompt)
  const text = words.join(" ")
  const ids = parseIdentifiers(prompt)
  const name = ids.accountRef === undefined ? parseName(prompt) : undefined
  const subject: Subject | undefined = ids.accountRef !== undefined ? { kind: "accountRef", value: ids.accountRef }
    : name !== undefined ? { kind: "name", value: name } : undefined
  const horizon = parseHorizon(text)

  const scores = scoreIntents(words)
  if (subject !== undefined) scores.account_status += 3
  if (ids.reference !== undefined) scores.deposit_lookup += 4
  if (horizon !== undefined && /\bnext\b/.test(text)) scores.forecast += 2
  let intent: Intent = "unknown"
  let best = MIN_SCORE - 1
  for (const candidate of INTENTS) {
    if (candidate !== "unknown" && scores[candidate] > best) [intent, best] = [candidate, scores[candidate]]
  }
  if (intent === "unknown") return { intent }

  const period = intent === "forecast" ? undefined : parsePeriod(text, nowMs)
  const take = parseTake(text)
  const days = Math.min(FORECAST_DAYS.max, Math.max(FORECAST_DAYS.min, horizon ?? FORECAST_DAYS.default))
  return {
    intent,
    ...(period !== undefined ? { period } : {}),
    ...(subject !== undefined ? { subject } : {}),
    ...(ids.reference !== undefined ? { reference: ids.reference } : {}),
    ...(intent === "forecast" ? { days } : {}),
    ...(take !== undefined ? { take } : {})
  }
}

// ---- answers ----

/** Kobo as naira for a person to read: 150000 -> "₦1,500.00", -500 -> "-₦5.00". */
export const formatNaira = (kobo: number): string => {
  if (!Number.isFinite(kobo)) throw new RangeError(`not an amount of kobo: ${kobo}`)
  const whole = Math.round(Math.abs(kobo))
  const naira = String(Math.floor(whole / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  const sign = kobo < 0 && whole > 0 ? "-" : ""
  return `${sign}₦${naira}.${String(whole % 100).padStart(2, "0")}`
}
