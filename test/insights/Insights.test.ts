import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { type Answer, call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

// The insight endpoints over real HTTP against a fixture whose every figure is computed by hand below (issue 21, must
// show 1): overview, aging, forecast and customer scores; the sandbox clock moving "today" in test mode; the date range;
// tenant and mode isolation; the dashboard plane; 400s.

const DAY_MS = 86_400_000
const LAGOS_MS = 3_600_000
const lagosDate = (ms: number) => new Date(ms + LAGOS_MS).toISOString().slice(0, 10)

type Tenant = Effect.Effect.Success<typeof testTenant>

/** Asks until the answer satisfies `ready` (the consumer keeps the roll-ups a moment after each event), bounded. */
const answerOf = (path: string, token: string, ready: (body: any) => boolean) =>
  waitFor(`${path} to be ready`, call("GET", path, { token }), { until: (r: Answer) => r.status === 200 && ready(r.body), timeoutMs: 30_000 }).pipe(
    Effect.map((r) => r.body)
  )

const deposit = (t: Tenant, accountNumber: string, amountKobo: number, senderName: string) =>
  Effect.gen(function* () {
    const r = yield* sendSigned(t, { accountNumber, amountKobo, senderName })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  })

/**
 * The fixture, all in test mode and all created today (Lagos):
 *   ins-a  Ada Obi    expects 100,000, paid  75,000  -> Underpaid, outstanding 25,000, due today (its creation)
 *   ins-b  Bola Ade   expects  50,000, paid  50,000  -> Exact, then a weekly schedule of 7,000 (period 1 due today)
 *   ins-c  Chidi Eke  expects  20,000, paid  30,000  -> Overpaid (collects 20,000; 10,000 is overpayment)
 *   ins-d  Dayo Ojo   open,            paid  10,000  -> Credited (no receivable)
 *   ins-e  Efe Ukpo   expects  40,000, paid       0  -> due in 35 days (its expiry)
 *   an unknown NUBAN           paid   5,000  -> Unmatched, held for review
 */
const seed = (t: Tenant) =>
  Effect.gen(function* () {
    const a = yield* createAccount(t.token, "ins-a", "Ada Obi", 100_000)
    const b = yield* createAccount(t.token, "ins-b", "Bola Ade", 50_000)
    const c = yield* createAccount(t.token, "ins-c", "Chidi Eke", 20_000)
    const d = yield* createAccount(t.token, "ins-d", "Dayo Ojo")
    const expiry = new Date(Date.now() + 35 * DAY_MS).toISOString()
    const e = yield* call("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "ins-e", name: "Efe Ukpo", expectedAmountKobo: 40_000, expiryDateUtc: expiry } })
    expectStatus(e, 201)
    yield* deposit(t, a.nuban, 75_000, "ADA OBI")
    yield* deposit(t, b.nuban, 50_000, "BOLA ADE")
    yield* deposit(t, c.nuban, 30_000, "CHIDI EKE")
    yield* deposit(t, d.nuban, 10_000, "DAYO OJO")
    yield* deposit(t, "0000014579", 5_000, "SOMEBODY ELSE")
    yield* waitForTransactions(t.tenantId, 5)
    const s = yield* call("POST", "/api/v1/billing/schedules", {
      token: t.token, json: { accountRef: "ins-b", interval: "Weekly", amountKobo: 7_000, dueOffsetDays: 0, reference: "ins-b-weekly" }
    })
    expectStatus(s, 201)
    return { expiryDay: lagosDate(Date.parse(expiry)) }
  })

const OVERVIEW = "/api/v1/insights"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("insights over HTTP", (it) => {
  it.effect("every figure of the hand-computed fixture; the sandbox clock moves aging and scores; isolation; the range", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      yield* seed(t)
      const dash = t.testOwnerToken

      // Overview. expected 100,000 + 50,000 + 7,000 (period 1) + 20,000 + 40,000 = 217,000; collected 75,000 + 50,000
      // + 20,000 = 145,000; outstanding 72,000; rate floor(145,000 x 10,000 / 217,000) = 6682.
      const o = yield* answerOf(OVERVIEW, dash, (b) => b.expectedKobo === 217_000 && b.reconciliation.Unmatched.count === 1)
      expect(o).toMatchObject({
        expectedKobo: 217_000, collectedKobo: 145_000, outstandingDeficitKobo: 72_000, collectionRateBps: 6682, from: null, to: null, mode: "test"
      })
      expect(o.reconciliation).toEqual({
        Exact: { count: 1, amountKobo: 50_000 }, Underpaid: { count: 1, amountKobo: 75_000 }, Overpaid: { count: 1, amountKobo: 30_000 },
        Duplicate: { count: 0, amountKobo: 0 }, Reversal: { count: 0, amountKobo: 0 }, Credited: { count: 1, amountKobo: 10_000 },
        Unmatched: { count: 1, amountKobo: 5_000 }
      })
      // Risk: bands by each deposit's own score as the transactions list shows it (low < 30 <= medium < 60 <= high).
      const txs = (yield* call("GET", "/api/v1/transactions?take=50", { token: t.token })).body.data as Array<{ riskScore: number; status: string }>
      expect(txs).toHaveLength(5)
      const band = (s: number) => (s >= 60 ? "high" : s >= 30 ? "medium" : "low")
      const bands = { low: 0, medium: 0, high: 0 }
      for (const x of txs) bands[band(x.riskScore)] += 1
      expect(o.risk).toEqual({ pendingReview: txs.filter((x) => x.status === "PendingReview").length, highRisk: bands.high, bands })
      expect(o.risk.pendingReview).toBeGreaterThanOrEqual(1) // the unmatched deposit waits for review

      // Aging today: everything outstanding is due today or later: 0-7 holds ins-a 25,000, ins-b's period 7,000 and
      // ins-e 40,000 (not yet due).
      const aging = (yield* call("GET", "/api/v1/insights/aging", { token: dash })).body
      expect(aging.buckets).toEqual([
        { label: "0-7", count: 3, amountKobo: 72_000 }, { label: "8-30", count: 0, amountKobo: 0 },
        { label: "31-60", count: 0, amountKobo: 0 }, { label: "60+", count: 0, amountKobo: 0 }
      ])
      expect(aging.totalOutstandingKobo).toBe(72_000)

      // Forecast over 14 days: collected in the trailing 30 days 75,000 + 50,000 + 30,000 + 10,000 = 165,000 (the
      // overpayment came in; the unmatched deposit did not) -> 5,500 a day. Billing due: 7,000 today and 7,000 in 7 days.
      // Waits for the schedule's dues: the overview can reach 217,000 before them, when an insights pass that claimed
      // the deposits reads ins-b's period 1 after the schedule committed; the schedule's event is the next pass's. Its
      // dues are written together, so "some scheduled" is ready; the figures are asserted exactly below.
      const f = yield* answerOf("/api/v1/insights/forecast?days=14", dash, (b) => b.weeks.some((w: any) => w.scheduledKobo > 0))
      expect(f).toMatchObject({ days: 14, trailing30DayCollectedKobo: 165_000, runRatePerDayKobo: 5_500 })
      const today = Date.parse(f.asOf)
      const todayIso = lagosDate(today)
      const weekday = (new Date(`${todayIso}T00:00:00Z`).getUTCDay() + 6) % 7 // 0 Monday .. 6 Sunday
      // Week 1: today .. Sunday (7 - weekday days) with 7,000 due today; week 2: the next Monday .. Sunday (7 days) with
      // the 7,000 due in 7 days; week 3: the days left of the 14 (weekday days), nothing due.
      const firstDays = 7 - weekday
      const expectedWeeks = [
        { scheduledKobo: 7_000, projectedKobo: 7_000 + 5_500 * firstDays },
        { scheduledKobo: 7_000, projectedKobo: 7_000 + 5_500 * 7 },
        ...(weekday > 0 ? [{ scheduledKobo: 0, projectedKobo: 5_500 * weekday }] : [])
      ]
      expect(f.weeks.map((w: any) => ({ scheduledKobo: w.scheduledKobo, projectedKobo: w.projectedKobo }))).toEqual(expectedWeeks)
      expect(f.weeks[0].weekStart).toBe(new Date(Date.parse(`${todayIso}T00:00:00Z`) - weekday * DAY_MS).toISOString().slice(0, 10))

      // Customers, most outstanding first, scores by hand (on time 60 / lateness 25 / outstanding 15):
      //   Efe  40,000 of 40,000, nothing counted yet (due in 35 days): 30 + 25 + (15 - 15) = 55 Fair
      //   Ada  25,000 of 100,000, due today, not counted yet:          30 + 25 + (15 - floor(15 x 0.25) = 12) = 67 Good
      //   Bola  7,000 of 57,000: the 50,000 paid today on its due day (on time), the period due today not counted:
      //         60 + 25 + (15 - floor(15 x 7,000 / 57,000) = 14) = 99 Excellent
      //   Chidi 0 of 20,000, paid on its due day: 60 + 25 + 15 = 100 Excellent
      const cs = (yield* call("GET", "/api/v1/insights/customers?take=10", { token: dash })).body
      expect(cs.hasMore).toBe(false)
      expect(cs.data.map((c: any) => [c.customerName, c.accountRefs, c.expectedKobo, c.outstandingKobo, c.score, c.band])).toEqual([
        ["Efe Ukpo", ["ins-e"], 40_000, 40_000, 55, "Fair"],
        ["Ada Obi", ["ins-a"], 100_000, 25_000, 67, "Good"],
        ["Bola Ade", ["ins-b"], 57_000, 7_000, 99, "Excellent"],
        ["Chidi Eke", ["ins-c"], 20_000, 0, 100, "Excellent"]
      ])
      const two = (yield* call("GET", "/api/v1/insights/customers?take=2", { token: dash })).body
      expect(two.data.map((c: any) => c.customerName)).toEqual(["Efe Ukpo", "Ada Obi"])
      expect(two.hasMore).toBe(true)

      // The range: due yesterday and paid yesterday, nothing; today, everything due today (Efe's expiry is later).
      const yesterday = lagosDate(today - DAY_MS)
      const none = (yield* call("GET", `${OVERVIEW}?from=${yesterday}&to=${yesterday}`, { token: dash })).body
      expect(none).toMatchObject({ expectedKobo: 0, collectedKobo: 0, outstandingDeficitKobo: 0, collectionRateBps: 0, from: yesterday, to: yesterday })
      expect(Object.values(none.reconciliation).every((x: any) => x.count === 0)).toBe(true)
      expect(none.risk.pendingReview).toBe(0)
      const todays = (yield* call("GET", `${OVERVIEW}?from=${todayIso}&to=${todayIso}`, { token: dash })).body
      expect(todays).toMatchObject({ expectedKobo: 177_000, collectedKobo: 145_000, outstandingDeficitKobo: 32_000, collectionRateBps: 8192 })
      expect(todays.reconciliation.Exact).toEqual({ count: 1, amountKobo: 50_000 })
      const fromToday = (yield* call("GET", `${OVERVIEW}?from=${todayIso}`, { token: dash })).body
      expect(fromToday.expectedKobo).toBe(217_000)

      // Isolation: the other tenant and this tenant's live mode see nothing of it.
      const empty = { expectedKobo: 0, collectedKobo: 0, outstandingDeficitKobo: 0, collectionRateBps: 0 }
      expect((yield* call("GET", OVERVIEW, { token: other.testOwnerToken })).body).toMatchObject({ ...empty, mode: "test" })
      expect((yield* call("GET", OVERVIEW, { token: t.ownerToken })).body).toMatchObject({ ...empty, mode: "live" })
      for (const token of [other.testOwnerToken, t.ownerToken]) {
        expect((yield* call("GET", "/api/v1/insights/customers", { token })).body).toEqual({ data: [], hasMore: false })
        expect((yield* call("GET", "/api/v1/insights/aging", { token })).body.totalOutstandingKobo).toBe(0)
        const fo = (yield* call("GET", "/api/v1/insights/forecast", { token })).body
        expect(fo.trailing30DayCollectedKobo).toBe(0)
        expect(fo.weeks.every((w: any) => w.scheduledKobo === 0 && w.projectedKobo === 0)).toBe(true)
      }

      // The sandbox clock 45 days on (test mode only): ins-a (due 45 days ago) and ins-b's period 1 (45 days) are
      // 31-60; ins-e (due 35 days after today) is 10 days past due: 8-30. Live mode and the other tenant do not move.
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 45 * 86_400 } }), 200)
      const later = (yield* call("GET", "/api/v1/insights/aging", { token: dash })).body
      expect(later.buckets).toEqual([
        { label: "0-7", count: 0, amountKobo: 0 }, { label: "8-30", count: 1, amountKobo: 40_000 },
        { label: "31-60", count: 2, amountKobo: 32_000 }, { label: "60+", count: 0, amountKobo: 0 }
      ])
      // Scores 45 days on: Ada unpaid 45 days late: 0 + (25 - 25) + 12 = 12 Poor; Efe 10 days late: 0 + 15 + 0 = 15
      // Poor; Bola: base on time, the period 45 days late: round(60 x 1/2) + (25 - floor(45 / 2)) + 14 = 30 + 3 + 14 = 47 Fair.
      const laterCs = (yield* call("GET", "/api/v1/insights/customers", { token: dash })).body
      expect(laterCs.data.map((c: any) => [c.customerName, c.score, c.band])).toEqual([
        ["Efe Ukpo", 15, "Poor"], ["Ada Obi", 12, "Poor"], ["Bola Ade", 47, "Fair"], ["Chidi Eke", 100, "Excellent"]
      ])
      yield* assertLedgerInvariant
    }))

  it.effect("the dashboard plane only, and 400 for every bad parameter (never a 500)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      for (const path of [OVERVIEW, "/api/v1/insights/aging", "/api/v1/insights/forecast", "/api/v1/insights/customers"]) {
        expectProblem(yield* call("GET", path, { token: t.token }), 403, "wrong_plane")
        expectStatus(yield* call("GET", path, { token: t.testOwnerToken }), 200)
        expect((yield* call("GET", path)).status).toBe(401)
      }
      for (const days of ["6", "181", "7.5", "abc", "-1", ""]) {
        const r = yield* call("GET", `/api/v1/insights/forecast?days=${days}`, { token: t.testOwnerToken })
        expect(r.status, days).toBe(400)
      }
      for (const days of [7, 180]) expect((yield* call("GET", `/api/v1/insights/forecast?days=${days}`, { token: t.testOwnerToken })).body.days).toBe(days)
      expect((yield* call("GET", "/api/v1/insights/forecast", { token: t.testOwnerToken })).body.days).toBe(30)
      for (const q of ["from=2026-02-30", "to=yesterday", "from=2026-01-02&to=2026-01-01", "from=2000-01-01&to=2026-01-01", "from=2026-1-1"]) {
        expectProblem(yield* call("GET", `${OVERVIEW}?${q}`, { token: t.testOwnerToken }), 400, "invalid_date_range")
      }
      for (const take of ["0", "-3", "x", "1.5"]) expect((yield* call("GET", `/api/v1/insights/customers?take=${take}`, { token: t.testOwnerToken })).status).toBe(400)
      expectStatus(yield* call("GET", "/api/v1/insights/customers?take=100000", { token: t.testOwnerToken }), 200)
    }))
})
