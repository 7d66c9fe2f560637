import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { ask, type Book, type LateBook, seedBook, seedLateBook } from "./support.js"

// The copilot end to end over HTTP (issue 21 part 3): a table of phrasings (English, Nigerian business English, Pidgin,
// misspellings) against one seeded book, each checked for its intent, the key figure in naira text and in `figures`,
// and its references; tenant and mode isolation; the errors it can answer. Every expected figure is computed by hand
// from the fixture in ./support.ts:
//
//   INV-1001 Chinedu Okafor  expects ₦5,000.00, paid ₦5,000.00 (Exact)
//   INV-1002 Ngozi Adeyemi   expects ₦3,000.00, paid ₦1,200.00 (Underpaid), ₦1,800.00 outstanding
//   INV-1003 Emeka Eze       expects ₦2,000.00, paid ₦2,500.00 (Overpaid, surplus ₦500.00), then ₦500.00 refunded
//   INV-1004 Tunde Bakare    expects ₦4,000.00, nothing paid
//   INV-1005 Seyi Olufemi    expects ₦1,000.00, paid ₦1,000.00 by a business payer: risk 60 (high), credited
//   SUB-2001 Amaka Nwosu     open, then billed monthly ₦2,500.00 (due in 5 days): ₦2,500.00 outstanding
//   INV-1006 Chinedu Obi     open, nothing paid (a second "Chinedu")
//   an unmatched ₦777.00 deposit held for review; a ₦1,000.00 payout po-copilot-1 (Successful); a settlement run:
//   INV-1001 ₦5,000.00, INV-1003 ₦2,000.00, INV-1005 ₦1,000.00 (₦8,000.00 in 3 settlements, Paid)
//   the tenant's available balance: 970,000 credited - 50,000 refunded - 800,000 settled - 100,000 paid out = 20,000 kobo
//
//   collected today: 500,000 + 120,000 + 250,000 + 100,000 = 970,000 kobo (₦9,700.00) in 4 deposits; ₦777.00 for review
//   outstanding: 400,000 + 250,000 + 180,000 = 830,000 kobo (₦8,300.00) over 3 accounts, none of it overdue: the accounts
//   fall due the day they were created (today) and the billing period in 5 days; overdue starts the day after
//
// The late book (./support.ts, `seedLateBook`, its sandbox clock 10 days on) has money past its due date beside money
// not yet due: ₦4,500.00 overdue (LATE-1 ₦3,000.00, LATE-2 ₦1,500.00, 10 days), ₦2,000.00 not yet due (LATE-3).

type Row = {
  readonly prompt: string | ((b: Book) => string)
  readonly intent: string
  readonly figures?: Record<string, unknown>
  readonly says?: ReadonlyArray<string>
  readonly refs?: (b: Book) => ReadonlyArray<string>
  /** The references, in this order, and nothing else. */
  readonly exactRefs?: (b: Book) => ReadonlyArray<string>
  /** Text the answer must not hold. */
  readonly never?: ReadonlyArray<string>
}

const TODAY_COLLECTED = { collectedKobo: 970_000, depositCount: 4, pendingReviewKobo: 77_700, pendingReviewCount: 1 }
const NOTHING_COLLECTED = { collectedKobo: 0, depositCount: 0 }
/** Owed, none of it overdue yet: it all falls due today or later. */
const OWING = { overdueKobo: 0, overdueCount: 0, accountsOverdue: 0, notYetDueKobo: 830_000, accountsNotYetDue: 3, outstandingKobo: 830_000 }
const OWING_REFS = () => ["INV-1004", "SUB-2001", "INV-1002"]
const REVIEW = { count: 1, amountKobo: 77_700 }

const TABLE: ReadonlyArray<Row> = [
  // collections_summary: today unless the prompt names a period
  { prompt: "How much did we collect today?", intent: "collections_summary", figures: TODAY_COLLECTED, says: ["₦9,700.00 from 4 deposits", "₦777.00"], refs: (b) => [b.refs.exact, b.refs.under, b.refs.over, b.refs.risky] },
  { prompt: "how much came in this week", intent: "collections_summary", figures: TODAY_COLLECTED, says: ["₦9,700.00"] },
  { prompt: "Collections this month", intent: "collections_summary", figures: TODAY_COLLECTED, says: ["this month", "₦9,700.00"] },
  { prompt: "money wey enter today", intent: "collections_summary", figures: TODAY_COLLECTED, says: ["₦9,700.00"] },
  { prompt: "payemnts this week", intent: "collections_summary", figures: TODAY_COLLECTED, says: ["₦9,700.00"] },
  { prompt: "total colections yesterday", intent: "collections_summary", figures: NOTHING_COLLECTED, says: ["yesterday", "₦0.00 from 0 deposits"], exactRefs: () => [] },
  { prompt: "wetin we don collect for last month", intent: "collections_summary", figures: NOTHING_COLLECTED, says: ["last month", "₦0.00"] },
  // account_status, by accountRef and by name
  { prompt: "status of account INV-1002", intent: "account_status", figures: { matches: 1, accountRef: "INV-1002", expectedKobo: 300_000, amountPaidKobo: 120_000, deficitKobo: 180_000, paymentState: "PartiallyPaid", lastDepositKobo: 120_000 }, says: ["Ngozi Adeyemi (INV-1002)", "₦1,200.00 paid of ₦3,000.00 expected, ₦1,800.00 outstanding"], exactRefs: (b) => ["INV-1002", b.refs.under] },
  { prompt: "has Chinedu Okafor paid?", intent: "account_status", figures: { matches: 1, accountRef: "INV-1001", amountPaidKobo: 500_000, deficitKobo: 0, paymentState: "FullyPaid" }, says: ["Chinedu Okafor (INV-1001): fully paid: ₦5,000.00 of ₦5,000.00 expected"], exactRefs: (b) => ["INV-1001", b.refs.exact] },
  { prompt: "abeg check if Tunde Bakare don pay", intent: "account_status", figures: { matches: 1, accountRef: "INV-1004", amountPaidKobo: 0, deficitKobo: 400_000, paymentState: "AwaitingPayment", lastDepositKobo: null }, says: ["₦4,000.00 outstanding", "no deposit yet"], exactRefs: () => ["INV-1004"] },
  { prompt: "how much does Ngozi Adeyemi owe", intent: "account_status", figures: { accountRef: "INV-1002", deficitKobo: 180_000 }, says: ["₦1,800.00 outstanding"] },
  { prompt: "Emeka Eze's status", intent: "account_status", figures: { accountRef: "INV-1003", expectedKobo: 200_000, amountPaidKobo: 200_000, overpaymentKobo: 0, paymentState: "FullyPaid", lastDepositKobo: 250_000 }, says: ["fully paid: ₦2,000.00 of ₦2,000.00", "last deposit ₦2,500.00"] },
  { prompt: "wetin be the status of INV-1005", intent: "account_status", figures: { accountRef: "INV-1005", amountPaidKobo: 100_000, paymentState: "FullyPaid" }, says: ["Seyi Olufemi (INV-1005)"], exactRefs: (b) => ["INV-1005", b.refs.risky] },
  { prompt: "how far with Amaka Nwosu account", intent: "account_status", figures: { accountRef: "SUB-2001", expectedKobo: 250_000, amountPaidKobo: 0, deficitKobo: 250_000 }, says: ["billed monthly ₦2,500.00", "₦2,500.00 outstanding"] },
  { prompt: "status of Chinedu", intent: "account_status", figures: { matches: 2, amountPaidKobo: 500_000, deficitKobo: 0 }, says: ["2 accounts match \"Chinedu\"", "Chinedu Obi (INV-1006): open account (no expected amount), ₦0.00 paid", "Chinedu Okafor (INV-1001)"], refs: (b) => ["INV-1006", "INV-1001", b.refs.exact] },
  { prompt: "wetin be our balance", intent: "account_status", figures: { availableKobo: 20_000, heldKobo: 0, pendingReviewKobo: 77_700, inTransitKobo: 0, settledTodayKobo: 800_000, paidOutTodayKobo: 100_000 }, says: ["₦200.00 available to pay out", "₦8,000.00 settled and ₦1,000.00 paid out"], exactRefs: () => [] },
  { prompt: "Is Halima Abubakar owing?", intent: "account_status", figures: { matches: 0 }, says: ["I found no customer or account named \"Halima Abubakar\""], exactRefs: () => [] },
  { prompt: "chek account INV-9999 stattus", intent: "account_status", figures: { matches: 0 }, says: ["no account INV-9999"], exactRefs: () => [] },
  // overdue: only what is past its due date; what is owed but not yet due is said apart (the late book has both)
  { prompt: "what is overdue", intent: "overdue", figures: OWING, says: ["Nothing is overdue: no amount owed is past its due date", "₦8,300.00 is owed but not yet due, across 3 accounts", "Tunde Bakare (INV-1004) ₦4,000.00"], never: ["is overdue (past"], exactRefs: OWING_REFS },
  { prompt: "abeg show me who never pay", intent: "overdue", figures: OWING, says: ["Nothing is overdue", "₦8,300.00"], exactRefs: OWING_REFS },
  { prompt: "how much is outstanding", intent: "overdue", figures: OWING, says: ["₦8,300.00 is owed but not yet due"] },
  { prompt: "Which invoices are overdu and by how much?", intent: "overdue", figures: OWING, says: ["Amaka Nwosu (SUB-2001) ₦2,500.00", "Ngozi Adeyemi (INV-1002) ₦1,800.00"] },
  // did X pay in a period: that customer's credited deposits in the Lagos period named, not all time
  { prompt: "did Ngozi Adeyemi pay this month?", intent: "account_status", figures: { matches: 1, accountRef: "INV-1002", paidKobo: 120_000, depositCount: 1, deficitKobo: 180_000, paymentState: "PartiallyPaid" }, says: ["Ngozi Adeyemi (INV-1002) paid ₦1,200.00 this month (", "in 1 deposit", "Now: ₦1,200.00 paid of ₦3,000.00 expected, ₦1,800.00 outstanding"], exactRefs: (b) => ["INV-1002", b.refs.under] },
  { prompt: "did Ngozi Adeyemi pay last month?", intent: "account_status", figures: { matches: 1, accountRef: "INV-1002", paidKobo: 0, depositCount: 0, deficitKobo: 180_000 }, says: ["Ngozi Adeyemi (INV-1002) made no payment last month (", "last deposit ₦1,200.00"], exactRefs: () => ["INV-1002"] },
  { prompt: "did Tunde Bakare pay this month", intent: "account_status", figures: { matches: 1, accountRef: "INV-1004", paidKobo: 0, depositCount: 0, deficitKobo: 400_000 }, says: ["Tunde Bakare (INV-1004) made no payment this month", "₦4,000.00 outstanding; no deposit yet"], exactRefs: () => ["INV-1004"] },
  { prompt: "has Chinedu paid this week?", intent: "account_status", figures: { matches: 2, paidKobo: 500_000, depositCount: 1 }, says: ["2 accounts match \"Chinedu\"; this week (", "Chinedu Obi (INV-1006) made no payment", "Chinedu Okafor (INV-1001) paid ₦5,000.00 in 1 deposit"], exactRefs: (b) => ["INV-1006", "INV-1001", b.refs.exact] },
  { prompt: "did Amaka Obi pay this month?", intent: "account_status", figures: { matches: 0 }, says: ["I found no customer or account named \"Amaka Obi\""], exactRefs: () => [] },
  // underpaid and overpaid deposits in a period (the last 30 days when none is named)
  { prompt: "underpaid transfers today", intent: "underpaid_deposits", figures: { count: 1, amountKobo: 120_000 }, says: ["1 underpaid deposit today", "₦1,200.00"], exactRefs: (b) => [b.refs.under, "INV-1002"] },
  { prompt: "who paid less than expected this month", intent: "underpaid_deposits", figures: { count: 1, amountKobo: 120_000 }, says: ["₦1,200.00"] },
  { prompt: "undrpaid deposits yesterday", intent: "underpaid_deposits", figures: { count: 0, amountKobo: 0 }, says: ["0 underpaid deposits yesterday"], exactRefs: () => [] },
  { prompt: "overpaid deposits this month", intent: "overpaid_deposits", figures: { count: 1, amountKobo: 250_000, surplusKobo: 50_000 }, says: ["₦2,500.00 in all, ₦500.00 over what was expected"], exactRefs: (b) => [b.refs.over, "INV-1003"] },
  { prompt: "over payment today", intent: "overpaid_deposits", figures: { count: 1, surplusKobo: 50_000 }, says: ["₦500.00"] },
  { prompt: "overpayed deposits", intent: "overpaid_deposits", figures: { count: 1, amountKobo: 250_000 }, says: ["in the last 30 days"] },
  // the review queue and high-risk deposits
  { prompt: "What's in the review queue?", intent: "review_queue", figures: REVIEW, says: ["1 deposit waits for review: ₦777.00", "no matching account"], exactRefs: (b) => [b.refs.held] },
  { prompt: "reveiw que", intent: "review_queue", figures: REVIEW, says: ["₦777.00"] },
  { prompt: "wetin dey for review queue", intent: "review_queue", figures: REVIEW, says: ["₦777.00"] },
  { prompt: "deposits waiting for approval", intent: "review_queue", figures: REVIEW },
  { prompt: "risky deposits this month", intent: "high_risk_deposits", figures: { count: 1, amountKobo: 100_000, highestRiskScore: 60 }, says: ["1 high-risk deposit", "₦1,000.00", "risk 60"], exactRefs: (b) => [b.refs.risky, "INV-1005"] },
  { prompt: "which transfer get wahala", intent: "high_risk_deposits", figures: { count: 1, amountKobo: 100_000 }, says: ["in the last 30 days"] },
  { prompt: "any suspicous payments yesterday", intent: "high_risk_deposits", figures: { count: 0, amountKobo: 0 }, exactRefs: () => [] },
  // a deposit by reference
  { prompt: (b) => `find deposit ${b.refs.exact}`, intent: "deposit_lookup", figures: { matches: 1, amountKobo: 500_000, status: "Completed", reconciliationStatus: "Exact" }, says: ["₦5,000.00 into account INV-1001", "from CHINEDU OKAFOR"], exactRefs: (b) => [b.refs.exact, "INV-1001"] },
  { prompt: (b) => `check payment reference ${b.refs.held}`, intent: "deposit_lookup", figures: { amountKobo: 77_700, status: "PendingReview", reconciliationStatus: "Unmatched" }, says: ["₦777.00 into no known account"], exactRefs: (b) => [b.refs.held] },
  { prompt: "reciept for transaction ref TRX-88812", intent: "deposit_lookup", figures: { matches: 0 }, says: ["no deposit with reference TRX-88812"], exactRefs: () => [] },
  // payouts, refunds, settlements in a period
  { prompt: "payouts this week", intent: "payouts", figures: { count: 1, amountKobo: 100_000, successfulCount: 1 }, says: ["1 payout this week", "₦1,000.00"], exactRefs: () => ["po-copilot-1"] },
  { prompt: "payot today", intent: "payouts", figures: { count: 1, amountKobo: 100_000 } },
  { prompt: "how much did we pay out last month", intent: "payouts", figures: { count: 0, amountKobo: 0 }, says: ["0 payouts last month"], exactRefs: () => [] },
  { prompt: "refnds today", intent: "refunds", figures: { count: 1, amountKobo: 50_000 }, says: ["1 refund today", "₦500.00"], exactRefs: (b) => [b.refs.refund, b.refs.over] },
  { prompt: "how many refund we do this week", intent: "refunds", figures: { count: 1, amountKobo: 50_000 } },
  { prompt: "settlment report for this month", intent: "settlements", figures: { count: 3, netKobo: 800_000, paidCount: 3 }, says: ["3 settlements this month", "₦8,000.00 settled in all", "₦5,000.00 for INV-1001"], refs: (b) => [...b.settlementIds, "INV-1001", "INV-1003", "INV-1005"] },
  { prompt: "una don settle us this week?", intent: "settlements", figures: { count: 3, netKobo: 800_000 } },
  { prompt: "settlements last month", intent: "settlements", figures: { count: 0, netKobo: 0 }, says: ["0 settlements last month", "₦0.00 settled"], exactRefs: () => [] },
  // what the copilot cannot answer
  { prompt: "what is the meaning of life", intent: "unknown", figures: {}, says: ["How much did we collect today?", "Top 5 debtors"], exactRefs: () => [] },
  { prompt: "abeg sing me one song", intent: "unknown", figures: {}, exactRefs: () => [] }
]

/** Rows asked of the late book: overdue money (past its due date) beside money not yet due. */
const LATE_OVERDUE = {
  overdueKobo: 450_000, overdueCount: 2, accountsOverdue: 2, days1to7Kobo: 0, days8to30Kobo: 450_000, days8to30Count: 2, days31to60Kobo: 0,
  over60Kobo: 0, notYetDueKobo: 200_000, notYetDueCount: 1, accountsNotYetDue: 1, outstandingKobo: 650_000
}
const LATE_TABLE: ReadonlyArray<Row> = [
  { prompt: "what is overdue", intent: "overdue", figures: LATE_OVERDUE, says: ["₦4,500.00 is overdue (past its due date) across 2 accounts", "1-7 days ₦0.00 (0), 8-30 days ₦4,500.00 (2)", "Most overdue: Bola Akinwale (LATE-1) ₦3,000.00, 10 days past due; Funke Ojo (LATE-2) ₦1,500.00, 10 days past due", "Not yet due, so not counted: ₦2,000.00 more across 1 account"], never: ["Kunle Adebayo", "₦6,500.00"], exactRefs: () => ["LATE-1", "LATE-2"] },
  { prompt: "abeg who never pay?", intent: "overdue", figures: LATE_OVERDUE, never: ["Kunle Adebayo"], exactRefs: () => ["LATE-1", "LATE-2"] },
  { prompt: "how much is owed but not yet due", intent: "overdue", figures: { overdueKobo: 450_000, notYetDueKobo: 200_000 }, says: ["₦2,000.00 more across 1 account"] },
  // "Now" is 10 days on: the last 30 days still hold the payment; the last 7 do not.
  { prompt: "did Bola Akinwale pay in the last 30 days?", intent: "account_status", figures: { matches: 1, accountRef: "LATE-1", paidKobo: 100_000, depositCount: 1, deficitKobo: 300_000 }, says: ["Bola Akinwale (LATE-1) paid ₦1,000.00 in the last 30 days ("] },
  { prompt: "did Bola Akinwale pay in the last 7 days?", intent: "account_status", figures: { matches: 1, paidKobo: 0, depositCount: 0 }, says: ["made no payment in the last 7 days (", "last deposit ₦1,000.00"], exactRefs: () => ["LATE-1"] }
]

/** Rows answered from the insight read service (the lead's roll-ups): figures hand-computed from DESIGN.md's definitions. */
const INSIGHT_TABLE: ReadonlyArray<Row> = [
  { prompt: "How much did we collect today?", intent: "collections_summary", figures: { outstandingKobo: 830_000 }, says: ["₦8,300.00 is still outstanding"] },
  { prompt: "top 2 debtors", intent: "top_debtors", figures: { count: 2, outstandingKobo: 650_000, topOutstandingKobo: 400_000 }, says: ["1. Tunde Bakare (INV-1004) ₦4,000.00", "2. Amaka Nwosu (SUB-2001) ₦2,500.00"], exactRefs: () => ["INV-1004", "SUB-2001"] },
  { prompt: "which customers dey owe pass", intent: "top_debtors", figures: { count: 3, outstandingKobo: 830_000 }, says: ["₦8,300.00 outstanding in all", "3. Ngozi Adeyemi (INV-1002) ₦1,800.00"], exactRefs: OWING_REFS },
  // Aging puts all ₦8,300.00 in "0-7" (due today or in 5 days); none of it is overdue.
  { prompt: "what is overdue", intent: "overdue", figures: { ...OWING, days1to7Kobo: 0, days1to7Count: 0, days8to30Kobo: 0, days31to60Kobo: 0, over60Kobo: 0, notYetDueCount: 3 }, never: ["By days past due"] },
  // Receivables: 500,000 + 300,000 + 200,000 + 400,000 + 100,000 + the billing period's 250,000 = 1,750,000 expected;
  // collected against them 500,000 + 120,000 + 200,000 (Emeka's ₦2,500.00 less the ₦500.00 refunded) + 100,000 = 920,000.
  // floor(920,000 x 10000 / 1,750,000) = 5257 bps.
  { prompt: "wetin be the collection rate", intent: "collection_rate", figures: { collectionRateBps: 5257, collectedKobo: 920_000, expectedKobo: 1_750_000 }, says: ["52.57%", "₦9,200.00 collected of ₦17,500.00 expected"], exactRefs: () => [] },
  // Due in the last 7 days: everything but the billing period (due in 5 days): floor(920,000 x 10000 / 1,500,000) = 6133.
  { prompt: "colection rate last 7 days", intent: "collection_rate", figures: { collectionRateBps: 6133, expectedKobo: 1_500_000 }, says: ["61.33%"] },
  // Run-rate: the credited deposits of the last 30 days, 970,000 / 30 = 32,333 a day. Next 7 days: the billing period
  // due in 5 days (250,000) + 7 x 32,333 = 476,331.
  { prompt: "how much we go collect next week", intent: "forecast", figures: { days: 7, scheduledKobo: 250_000, runRatePerDayKobo: 32_333, projectedKobo: 476_331 }, says: ["₦4,763.31 expected in all", "₦2,500.00 of it billing", "₦323.33 a day"] },
  // Next 90 days: three monthly periods fall due (in 5 days, a month later, two months later): 750,000 + 90 x 32,333.
  { prompt: "forcast next 90 days", intent: "forecast", figures: { days: 90, scheduledKobo: 750_000, projectedKobo: 750_000 + 90 * 32_333 } }
]

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("the copilot over HTTP", (it) => {
  const book = Effect.cached(seedBook).pipe(Effect.runSync)

  /** Every reference an answer names belongs to tenant A's test mode. */
  const ownRefsOnly = (b: Book, references: ReadonlyArray<{ kind: string; id: string }>) => {
    for (const r of references) {
      const own = b.own[r.kind as keyof Book["own"]]
      expect(own, `unknown reference kind ${r.kind}`).toBeDefined()
      expect(own!.has(r.id), `${r.kind} ${r.id} is not tenant A's test-mode data`).toBe(true)
    }
    expect(references.length).toBeLessThanOrEqual(20)
  }

  const late = Effect.cached(seedLateBook).pipe(Effect.runSync)
  const ownLateRefsOnly = (l: LateBook, references: ReadonlyArray<{ kind: string; id: string }>) => {
    for (const r of references) expect(l.own[r.kind as keyof LateBook["own"]]?.has(r.id), `${r.kind} ${r.id} is not the late book's`).toBe(true)
  }

  const check = (row: Row, onLateBook = false) =>
    Effect.gen(function* () {
      const b = yield* book
      const l = onLateBook ? yield* late : undefined
      const prompt = typeof row.prompt === "string" ? row.prompt : row.prompt(b)
      const r = yield* ask(l ? l.t.testOwnerToken : b.a.testOwnerToken, prompt)
      expectStatus(r, 200)
      const why = `${prompt} -> ${JSON.stringify(r.body)}`
      expect(Object.keys(r.body).sort()).toEqual(["answer", "figures", "intent", "references", "rephrased"])
      expect(r.body.intent, why).toBe(row.intent)
      expect(r.body.rephrased).toBe(false)
      if (row.figures) expect(r.body.figures, why).toMatchObject(row.figures)
      for (const s of row.says ?? []) expect(r.body.answer, why).toContain(s)
      for (const s of row.never ?? []) expect(r.body.answer, why).not.toContain(s)
      const ids = r.body.references.map((x: { id: string }) => x.id)
      if (row.refs) expect(ids, why).toEqual(expect.arrayContaining([...row.refs(b)]))
      if (row.exactRefs) expect(ids, why).toEqual(row.exactRefs(b))
      if (l) ownLateRefsOnly(l, r.body.references)
      else ownRefsOnly(b, r.body.references)
      // Amounts are written in naira with kobo, never as bare kobo integers.
      for (const [k, v] of Object.entries(r.body.figures)) {
        if (k.endsWith("Kobo") && typeof v === "number" && v > 0) expect(r.body.answer, why).not.toMatch(new RegExp(`(^|[^\\d,.])${v}([^\\d,]|$)`))
      }
    })

  it.effect("the fixture seeds (tenant A test and live, tenant B)", () => Effect.asVoid(book), { timeout: 120_000 })

  expect(TABLE.length).toBeGreaterThanOrEqual(40)
  for (const row of TABLE) {
    const label = typeof row.prompt === "string" ? row.prompt : row.prompt.toString().replace(/^.*`(.*)`.*$/s, "$1")
    it.effect(`"${label}" -> ${row.intent}`, () => check(row))
  }
  for (const row of INSIGHT_TABLE) {
    it.effect(`insights: "${row.prompt}" -> ${row.intent}`, () => check(row))
  }
  it.effect("the late book seeds (its sandbox clock 10 days on)", () => Effect.asVoid(late), { timeout: 120_000 })
  for (const row of LATE_TABLE) {
    it.effect(`late book: "${row.prompt}" -> ${row.intent}`, () => check(row, true))
  }

  it.effect("overdue is not aging's 0-7 bucket: that bucket also holds what is not yet due, which overdue leaves out", () =>
    Effect.gen(function* () {
      const l = yield* late
      const aging = yield* call("GET", "/api/v1/insights/aging", { token: l.t.testOwnerToken })
      expectStatus(aging, 200)
      // LATE-3's ₦2,000.00, due in 20 days, sits in "0-7"; the two overdue receivables are 10 days past due.
      expect(aging.body.buckets).toEqual([
        { label: "0-7", count: 1, amountKobo: 200_000 }, { label: "8-30", count: 2, amountKobo: 450_000 },
        { label: "31-60", count: 0, amountKobo: 0 }, { label: "60+", count: 0, amountKobo: 0 }
      ])
      const overdue = (yield* ask(l.t.testOwnerToken, "what is overdue")).body
      expect(overdue.figures).toMatchObject({ overdueKobo: 450_000, days1to7Kobo: 0, notYetDueKobo: 200_000, outstandingKobo: aging.body.totalOutstandingKobo })
      // In the main book everything owed falls due today or later: all of it in "0-7", none of it overdue.
      const b = yield* book
      const mainAging = (yield* call("GET", "/api/v1/insights/aging", { token: b.a.testOwnerToken })).body
      expect(mainAging.buckets[0]).toEqual({ label: "0-7", count: 3, amountKobo: 830_000 })
      expect((yield* ask(b.a.testOwnerToken, "what is overdue")).body.figures).toMatchObject({ overdueKobo: 0, notYetDueKobo: 830_000 })
    }))

  it.effect("asking writes nothing: the tenant's rows in every table the copilot reads, its outbox and audit log stay as they were", () =>
    Effect.gen(function* () {
      const b = yield* book
      const sql = yield* SqlClient.SqlClient
      const snapshot = Effect.forEach(
        ["outbox", "audit_log", "transactions", "transfers", "virtual_accounts", "customers", "settlements", "billing_schedules", "ledger_entries", "holds"],
        (table) => sql<{ n: number; h: string }>`SELECT count(*)::int AS n, md5(COALESCE(string_agg(t::text, '|' ORDER BY t::text), '')) AS h
          FROM ${sql(table)} t WHERE t.tenant_id = ${b.a.tenantId}`.pipe(Effect.map((r) => `${table}:${r[0]!.n}:${r[0]!.h}`))
      ).pipe(Effect.orDie)
      const before = yield* snapshot
      for (const row of [...TABLE, ...INSIGHT_TABLE]) {
        expectStatus(yield* ask(b.a.testOwnerToken, typeof row.prompt === "string" ? row.prompt : row.prompt(b)), 200)
      }
      expect(yield* snapshot).toEqual(before)
    }))

  it.effect("isolation: another tenant's and the other mode's customers, accounts and deposits are never found", () =>
    Effect.gen(function* () {
      const b = yield* book
      const leaks = ["Zebedee", "Obiorah", "ZZ-9001", "₦9,900.00", "₦3,300.00", "Ifeoluwa", "Xylophone", "LV-7001", "₦8,800.00", "₦4,400.00",
        b.foreign.bDeposit, b.foreign.liveDeposit]
      for (const prompt of [
        "has Zebedee Obiorah-Quist paid?", "status of account ZZ-9001", `find deposit ${b.foreign.bDeposit}`,
        "has Ifeoluwa Xylophone-Dike paid?", "status of account LV-7001", `find deposit ${b.foreign.liveDeposit}`, "how much does Zebedee owe"
      ]) {
        const r = yield* ask(b.a.testOwnerToken, prompt)
        expectStatus(r, 200)
        const text = JSON.stringify(r.body)
        expect(r.body.answer, prompt).toMatch(/^I found no /)
        expect(r.body.figures, prompt).toEqual({ matches: 0 })
        expect(r.body.references, prompt).toEqual([])
        // The answer may repeat what was asked; nothing else of the other book may appear.
        for (const l of leaks.filter((x) => !prompt.includes(x))) expect(text.replaceAll(prompt, ""), `${prompt} leaks ${l}`).not.toContain(l)
      }
      // The same questions from tenant B (test) and from tenant A's live mode find their own customer: the search works.
      const fromB = yield* ask(b.b.testOwnerToken, "has Zebedee Obiorah-Quist paid?")
      expect(fromB.body.figures).toMatchObject({ matches: 1, accountRef: "ZZ-9001", amountPaidKobo: 330_000, deficitKobo: 660_000 })
      const fromLive = yield* ask(b.a.ownerToken, "has Ifeoluwa Xylophone-Dike paid?")
      expect(fromLive.body.figures).toMatchObject({ matches: 1, accountRef: "LV-7001", amountPaidKobo: 440_000 })
      // And neither sees tenant A's test-mode book.
      for (const token of [b.b.testOwnerToken, b.a.ownerToken]) {
        const r = yield* ask(token, "has Chinedu Okafor paid?")
        expect(r.body.figures).toEqual({ matches: 0 })
        const review = yield* ask(token, "What's in the review queue?")
        expect(review.body.figures).toMatchObject({ count: 0 })
        expect(JSON.stringify(review.body)).not.toContain(b.refs.held)
        const today = yield* ask(token, "How much did we collect today?")
        for (const ref of [b.refs.exact, b.refs.under, b.refs.over, b.refs.risky]) expect(JSON.stringify(today.body)).not.toContain(ref)
      }
      expect((yield* ask(b.b.testOwnerToken, "How much did we collect today?")).body.figures).toMatchObject({ collectedKobo: 330_000, depositCount: 1 })
      expect((yield* ask(b.a.ownerToken, "How much did we collect today?")).body.figures).toMatchObject({ collectedKobo: 440_000, depositCount: 1 })
    }))

  it.effect("'now' is the tenant's billing time: in test mode the sandbox clock moves 'today' as it moves billing", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "CLK-1", "Uche Nnaji", 300_000)
      expect((yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 300_000, senderName: "UCHE NNAJI" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      expect((yield* ask(t.testOwnerToken, "How much did we collect today?")).body.figures).toMatchObject({ collectedKobo: 300_000, depositCount: 1 })
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 2 * 86_400 } }), 200)
      const today = yield* ask(t.testOwnerToken, "How much did we collect today?")
      expect(today.body.figures).toMatchObject({ collectedKobo: 0, depositCount: 0 })
      const twoDaysAgo = new Date(Date.now() + 3_600_000).toISOString().slice(0, 10)
      expect(today.body.figures.from > twoDaysAgo).toBe(true)
      expect((yield* ask(t.testOwnerToken, "collections in the last 3 days")).body.figures).toMatchObject({ collectedKobo: 300_000, depositCount: 1, to: today.body.figures.to })
    }))

  it.effect("errors: empty or blank prompt 400, an API key 403, a Member may ask, malformed input never a 500", () =>
    Effect.gen(function* () {
      const b = yield* book
      const token = b.a.testOwnerToken
      for (const prompt of ["", "   ", " \n\t "]) expectProblem(yield* ask(token, prompt), 400, "empty_prompt")
      expectProblem(yield* ask(b.a.token, "How much did we collect today?"), 403, "wrong_plane")
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { json: { prompt: "hi" } }), 401, "missing_token")
      const member = yield* dashboardUser(b.a, "Member")
      const asMember = yield* ask(member.token, "How much did we collect today?")
      expectStatus(asMember, 200)
      expect(asMember.body.figures).toMatchObject(TODAY_COLLECTED)
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { token, json: { prompt: "hi", extra: 1 } }), 400, "unknown_field")
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { token, json: {} }), 400, "validation_failed")
      expectProblem(yield* ask(token, 42), 400, "validation_failed")
      expectProblem(yield* ask(token, "x".repeat(2001)), 400, "validation_failed")
      expectProblem(yield* ask(token, "collections\u0000today"), 400, "invalid_text")
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { token, rawBody: '{"prompt":"collections \\ud800 today"}' }), 400, "invalid_text")
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { token, rawBody: "prompt=hi", contentType: "text/plain" }), 415, "unsupported_media_type")
      for (const odd of ["₦₦₦ 🤷🏾‍♀️", "'; DROP TABLE transactions; --", "%_%", "status of account %", "has _ _ paid?", "find deposit %%%%", "ref ".repeat(400),
        "has Chinedu Okafor Chinedu Okafor Chinedu Okafor paid", "forecast next 9999 days", "top 100000 debtors", "collections since 31 February"]) {
        const r = yield* ask(token, odd)
        expect(r.status, `${odd}: ${JSON.stringify(r.body)}`).toBe(200)
        ownRefsOnly(b, r.body.references)
      }
    }))
})
