import { describe, expect, it } from "vitest"
import { formatNaira, INTENTS, lagosDay, lagosDayStartMs, type ParsedIntent, parseIntent } from "../../src/domain/CopilotIntents.js"

/** Monday 23 November 2026, 10:00 in Lagos. */
const NOW = Date.parse("2026-11-23T10:00:00+01:00")
/** The instant a Lagos calendar date starts. */
const at = (date: string) => Date.parse(`${date}T00:00:00+01:00`)
const period = (from: string, to: string, label: string) => ({ fromMs: at(from), toMs: at(to), label })

const TODAY = period("2026-11-23", "2026-11-24", "today")
const YESTERDAY = period("2026-11-22", "2026-11-23", "yesterday")
const THIS_WEEK = period("2026-11-23", "2026-11-30", "this week")
const LAST_WEEK = period("2026-11-16", "2026-11-23", "last week")
const THIS_MONTH = period("2026-11-01", "2026-12-01", "this month")
const LAST_MONTH = period("2026-10-01", "2026-11-01", "last month")
const name = (value: string) => ({ kind: "name" as const, value })
const ref = (value: string) => ({ kind: "accountRef" as const, value })

/** Each phrasing and the whole parse expected for it at NOW. */
const TABLE: ReadonlyArray<readonly [string, ParsedIntent]> = [
  // collections_summary
  ["How much did we collect today?", { intent: "collections_summary", period: TODAY }],
  ["how far with payments today", { intent: "collections_summary", period: TODAY }],
  ["how much came in this week", { intent: "collections_summary", period: THIS_WEEK }],
  ["Collections this month", { intent: "collections_summary", period: THIS_MONTH }],
  ["total colections yesterday", { intent: "collections_summary", period: YESTERDAY }],
  ["money recieved last week", { intent: "collections_summary", period: LAST_WEEK }],
  ["wetin we don collect for last month", { intent: "collections_summary", period: LAST_MONTH }],
  ["How much don enter this week?", { intent: "collections_summary", period: THIS_WEEK }],
  ["money wey enter today", { intent: "collections_summary", period: TODAY }],
  ["payemnts this week", { intent: "collections_summary", period: THIS_WEEK }],
  ["How much have we received in the last 7 days?", { intent: "collections_summary", period: period("2026-11-17", "2026-11-24", "last 7 days") }],
  ["payments received in March", { intent: "collections_summary", period: period("2026-03-01", "2026-04-01", "March 2026") }],
  ["collections in December", { intent: "collections_summary", period: period("2025-12-01", "2026-01-01", "December 2025") }],
  ["collections in March 2025", { intent: "collections_summary", period: period("2025-03-01", "2025-04-01", "March 2025") }],
  ["collections since 1 March", { intent: "collections_summary", period: period("2026-03-01", "2026-11-24", "since 1 March 2026") }],
  ["since March 3rd, what came in?", { intent: "collections_summary", period: period("2026-03-03", "2026-11-24", "since 3 March 2026") }],
  ["collections this year", { intent: "collections_summary", period: period("2026-01-01", "2027-01-01", "this year") }],
  // account_status
  ["status of account INV-2041", { intent: "account_status", subject: ref("INV-2041") }],
  ["wetin be the status of INV-2041", { intent: "account_status", subject: ref("INV-2041") }],
  ["check account ACC_7781 status", { intent: "account_status", subject: ref("ACC_7781") }],
  ["has Chinedu Okafor paid?", { intent: "account_status", subject: name("Chinedu Okafor") }],
  ["did Ngozi Adeyemi pay this month", { intent: "account_status", subject: name("Ngozi Adeyemi"), period: THIS_MONTH }],
  ["did Amaka Obi pay this month?", { intent: "account_status", subject: name("Amaka Obi"), period: THIS_MONTH }],
  ["did Ngozi Adeyemi pay last month?", { intent: "account_status", subject: name("Ngozi Adeyemi"), period: LAST_MONTH }],
  ["has Chinedu paid this week?", { intent: "account_status", subject: name("Chinedu"), period: THIS_WEEK }],
  ["did Bola Akinwale pay in the last 30 days?", { intent: "account_status", subject: name("Bola Akinwale"), period: period("2026-10-25", "2026-11-24", "last 30 days") }],
  ["abeg check if Chinedu Okafor don pay", { intent: "account_status", subject: name("Chinedu Okafor") }],
  ["how far with Tunde Bakare account", { intent: "account_status", subject: name("Tunde Bakare") }],
  ["Is Emeka Eze owing?", { intent: "account_status", subject: name("Emeka Eze") }],
  ["how much does Emeka Eze owe", { intent: "account_status", subject: name("Emeka Eze") }],
  ["Chinedu Okafor's status", { intent: "account_status", subject: name("Chinedu Okafor") }],
  ["Any news on Ngozi Adeyemi?", { intent: "account_status", subject: name("Ngozi Adeyemi") }],
  ["Owen Smith stattus", { intent: "account_status", subject: name("Owen Smith") }],
  // overdue
  ["what is overdue", { intent: "overdue" }],
  ["Which invoices are overdu and by how much?", { intent: "overdue" }],
  ["abeg show me who never pay", { intent: "overdue" }],
  ["who never pay this month", { intent: "overdue", period: THIS_MONTH }],
  ["how much is outstanding", { intent: "overdue" }],
  ["how much is owed but not yet due", { intent: "overdue" }],
  ["outstandng balances", { intent: "overdue" }],
  ["show me aging", { intent: "overdue" }],
  // top_debtors
  ["who owes us the most", { intent: "top_debtors" }],
  ["top 5 debtors", { intent: "top_debtors", take: 5 }],
  ["which customers dey owe pass", { intent: "top_debtors" }],
  ["top ten defaulters", { intent: "top_debtors", take: 10 }],
  ["show me the 3 biggest debters", { intent: "top_debtors", take: 3 }],
  // forecast
  ["forecast for next 60 days", { intent: "forecast", days: 60 }],
  ["forecast", { intent: "forecast", days: 30 }],
  ["what will we collect next month", { intent: "forecast", days: 30 }],
  ["projected collections for the next 2 weeks", { intent: "forecast", days: 14 }],
  ["how much we go collect next week", { intent: "forecast", days: 7 }],
  ["forcast next 90 days", { intent: "forecast", days: 90 }],
  ["forecast next quarter", { intent: "forecast", days: 90 }],
  ["forecast 120 days", { intent: "forecast", days: 120 }],
  ["forecast for next 365 days", { intent: "forecast", days: 180 }],
  ["forecast next 3 days", { intent: "forecast", days: 7 }],
  // deposit_lookup
  ["find deposit 999999261121100000123456", { intent: "deposit_lookup", reference: "999999261121100000123456" }],
  ["reciept for transaction ref TRX-88812", { intent: "deposit_lookup", reference: "TRX-88812" }],
  ["check payment reference 4455667788", { intent: "deposit_lookup", reference: "4455667788" }],
  ["where is 000013261123100000123456789012?", { intent: "deposit_lookup", reference: "000013261123100000123456789012" }],
  // payouts, refunds, settlements
  ["payouts this week", { intent: "payouts", period: THIS_WEEK }],
  ["how much did we pay out last month", { intent: "payouts", period: LAST_MONTH }],
  ["payot yesterday", { intent: "payouts", period: YESTERDAY }],
  ["payouts on 5 November", { intent: "payouts", period: period("2026-11-05", "2026-11-06", "5 November 2026") }],
  ["payouts in the past week", { intent: "payouts", period: period("2026-11-17", "2026-11-24", "last 7 days") }],
  ["refunds we sent in October", { intent: "refunds", period: period("2026-10-01", "2026-11-01", "October 2026") }],
  ["how many refund we do last week", { intent: "refunds", period: LAST_WEEK }],
  ["make I see refund wey we do for October", { intent: "refunds", period: period("2026-10-01", "2026-11-01", "October 2026") }],
  ["refnds today", { intent: "refunds", period: TODAY }],
  ["refunds last 2 weeks", { intent: "refunds", period: period("2026-11-10", "2026-11-24", "last 14 days") }],
  ["settlment report for last month", { intent: "settlements", period: LAST_MONTH }],
  ["settlements since 1 November", { intent: "settlements", period: period("2026-11-01", "2026-11-24", "since 1 November 2026") }],
  ["settlements since 1 December", { intent: "settlements", period: period("2025-12-01", "2026-11-24", "since 1 December 2025") }],
  ["una don settle us this week?", { intent: "settlements", period: THIS_WEEK }],
  // collection_rate
  ["wetin be the collection rate", { intent: "collection_rate" }],
  ["What percentage of invoices were paid this month?", { intent: "collection_rate", period: THIS_MONTH }],
  ["colection rate last month", { intent: "collection_rate", period: LAST_MONTH }],
  // underpaid and overpaid
  ["underpaid transfers last week", { intent: "underpaid_deposits", period: LAST_WEEK }],
  ["who paid less than expected this month", { intent: "underpaid_deposits", period: THIS_MONTH }],
  ["show part payments yesterday", { intent: "underpaid_deposits", period: YESTERDAY }],
  ["undrpaid deposits yesterday", { intent: "underpaid_deposits", period: YESTERDAY }],
  ["under-paid transfers today", { intent: "underpaid_deposits", period: TODAY }],
  ["overpaid deposits this month", { intent: "overpaid_deposits", period: THIS_MONTH }],
  ["who paid more than the amount last week", { intent: "overpaid_deposits", period: LAST_WEEK }],
  ["over payment today", { intent: "overpaid_deposits", period: TODAY }],
  ["overpayed deposits", { intent: "overpaid_deposits" }],
  // review_queue and high_risk_deposits
  ["What's in the review queue?", { intent: "review_queue" }],
  ["anything pending review?", { intent: "review_queue" }],
  ["deposits waiting for approval", { intent: "review_queue" }],
  ["wetin dey for review queue", { intent: "review_queue" }],
  ["reveiw que", { intent: "review_queue" }],
  ["risky deposits this month", { intent: "high_risk_deposits", period: THIS_MONTH }],
  ["high-risk transfers today", { intent: "high_risk_deposits", period: TODAY }],
  ["any suspicous payments last week", { intent: "high_risk_deposits", period: LAST_WEEK }],
  ["which transfer get wahala", { intent: "high_risk_deposits" }]
]

const UNKNOWN = [
  "",
  "   ?!  ",
  "hello",
  "how far",
  "tell me a joke",
  "What's the weather in Lagos?",
  "who won the match yesterday",
  "show me stats for this month",
  "what are we spending on diesel",
  "asdf qwerty zxcv"
]

describe("parseIntent: the phrasing table", () => {
  it("has at least 50 phrasings and covers every intent but unknown", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(50)
    expect(new Set(TABLE.map(([, p]) => p.intent))).toEqual(new Set(INTENTS.filter((i) => i !== "unknown")))
  })

  it.each(TABLE)("%s", (prompt, expected) => {
    expect(parseIntent(prompt, NOW)).toEqual(expected)
  })

  it.each(UNKNOWN)("%j is unknown, with nothing else made up", (prompt) => {
    expect(parseIntent(prompt, NOW)).toEqual({ intent: "unknown" })
  })
})

describe("parseIntent: the Lagos calendar", () => {
  it("uses the Lagos day, not the UTC day, just after Lagos midnight", () => {
    const justAfterMidnight = Date.parse("2026-11-22T23:30:00Z") // 00:30 on Monday 23 November in Lagos
    expect(parseIntent("collections today", justAfterMidnight).period).toEqual(TODAY)
    expect(parseIntent("collections this week", justAfterMidnight).period).toEqual(THIS_WEEK)
  })

  it("starts the week on Monday from a Sunday", () => {
    const sunday = Date.parse("2026-11-29T20:00:00+01:00")
    expect(parseIntent("payouts this week", sunday).period).toEqual(THIS_WEEK)
    expect(parseIntent("payouts last week", sunday).period).toEqual(LAST_WEEK)
  })

  it("crosses a year for last month in January", () => {
    const january = Date.parse("2027-01-10T12:00:00+01:00")
    expect(parseIntent("collections last month", january).period).toEqual(period("2026-12-01", "2027-01-01", "last month"))
    expect(parseIntent("collections last year", january).period).toEqual(period("2026-01-01", "2027-01-01", "last year"))
  })

  it("reads a month name only as a month", () => {
    expect(parseIntent("May I see the payouts", NOW)).toEqual({ intent: "payouts" })
    expect(parseIntent("refunds in May", NOW).period).toEqual(period("2026-05-01", "2026-06-01", "May 2026"))
  })

  it("lagosDay and lagosDayStartMs give the Lagos date and its midnight", () => {
    const late = Date.parse("2026-11-22T23:30:00Z")
    expect(lagosDay(late)).toEqual({ y: 2026, m: 11, d: 23 })
    expect(lagosDayStartMs(late)).toBe(at("2026-11-23"))
  })
})

describe("parseIntent: stability", () => {
  it("ignores case and punctuation", () => {
    expect(parseIntent("HOW MUCH CAME IN THIS WEEK???", NOW)).toEqual(parseIntent("how much came in this week", NOW))
    expect(parseIntent("Top-5 debtors, please!", NOW)).toEqual({ intent: "top_debtors", take: 5 })
  })

  it("answers the same for the same prompt and instant", () => {
    for (const [prompt] of TABLE) expect(parseIntent(prompt, NOW)).toEqual(parseIntent(prompt, NOW))
  })
})

describe("formatNaira", () => {
  it.each([
    [0, "₦0.00"],
    [1, "₦0.01"],
    [99, "₦0.99"],
    [100, "₦1.00"],
    [150000, "₦1,500.00"],
    [123456789, "₦1,234,567.89"],
    [100000000000, "₦1,000,000,000.00"],
    [-500, "-₦5.00"],
    [-123456789, "-₦1,234,567.89"],
    [-0, "₦0.00"]
  ])("%s kobo is %s", (kobo, text) => {
    expect(formatNaira(kobo)).toBe(text)
  })

  it("refuses what is not an amount", () => {
    expect(() => formatNaira(Number.NaN)).toThrow(RangeError)
  })
})
