import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Deferred, Effect, Queue, TestClock, TestContext } from "effect"
import { Billing, BillingClock } from "../../services/billing/Billing.js"
import { billingPassesLoop, BillingWorkerSettings } from "../../services/billing/BillingPasses.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, createAccount, sendSigned, type Tenant, testTenant } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

/**
 * Recurring billing through the real service (issue 20, "Must show": the TestClock tests). Billing time is a TestClock
 * (`BillingClock.use`), started at 2027-01-31 10:00 in Lagos so every Monthly schedule here is anchored on Jan 31 (Feb 28,
 * Mar 31, Apr 30, ...). Each test moves that clock with `adjust` and then runs the billing clock's pass (`Billing.tick()`),
 * except the pause/resume test, which forks the loop itself (`billingPassesLoop`) on the TestClock. The API is called over
 * HTTP; deposits and reversals go through the signed sandbox webhook and the real reconciler.
 *
 * All tests share the app (and its database and BillingClock): each test has a tenant of its own and looks only at its
 * own schedules and events; a pass covers every schedule in the database, so a later test's clock also moves an earlier
 * test's schedules, which no assertion here reads.
 */

const DAY_MS = 86_400_000
const PAGE = "?take=100"

/** An instant in Lagos (WAT, UTC+1 all year). */
const lagos = (date: string, time = "10:00") => Date.parse(`${date}T${time}:00+01:00`)
/** A period boundary on the wire: 00:00 in Lagos on `date`. */
const boundary = (date: string) => new Date(lagos(date, "00:00")).toISOString()

const START = lagos("2027-01-31")

// ---------------------------------------------------------------------------------------------------------------
// Billing time on a TestClock
// ---------------------------------------------------------------------------------------------------------------

/**
 * A TestClock set to `startMs`, made the billing clock. It is taken in a forked fiber that lives until the test's scope
 * closes (test/settlement/AutoSettle.test.ts's `startWorker`): the test fiber itself stays on the live clock, so its
 * bounded waits run on real time. `run`, if given, runs in that fiber after the clock is in place (on the TestClock).
 */
const billingTestClock = <A>(startMs: number, run?: Effect.Effect<A, never, any>) =>
  Effect.gen(function* () {
    const billingClock = yield* BillingClock
    const ready = yield* Deferred.make<TestClock.TestClock>()
    yield* Effect.forkScoped(
      Effect.provide(
        Effect.gen(function* () {
          const clock = yield* TestClock.testClock()
          yield* clock.setTime(startMs)
          yield* billingClock.use(clock)
          yield* Deferred.succeed(ready, clock)
          return yield* (run ?? Effect.never)
        }),
        TestContext.TestContext
      )
    )
    return yield* Deferred.await(ready)
  })

/** Moves the TestClock forward to `ms` in one `adjust`. */
const moveTo = (clock: TestClock.TestClock, ms: number) =>
  Effect.gen(function* () {
    const now = yield* clock.currentTimeMillis
    expect(ms, `the clock only moves forward (${new Date(now).toISOString()} -> ${new Date(ms).toISOString()})`).toBeGreaterThan(now)
    yield* clock.adjust(ms - now)
  })

const tick = Effect.flatMap(Billing, (b) => b.tick())

// ---------------------------------------------------------------------------------------------------------------
// The API and the database
// ---------------------------------------------------------------------------------------------------------------

const createSchedule = (t: Tenant, body: Record<string, unknown>) =>
  Effect.map(call("POST", "/api/v1/billing/schedules", { token: t.token, json: body }), (r) => {
    expectStatus(r, 201)
    return r.body as { id: string; reference: string; accountRef: string; status: string; nextPeriodStart: string | null; nextAmountKobo: number; amountKobo: number }
  })

const getSchedule = (t: Tenant, id: string) =>
  Effect.map(call("GET", `/api/v1/billing/schedules/${id}`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    return r.body
  })

interface WirePeriod {
  readonly id: string
  readonly scheduleId: string
  readonly index: number
  readonly periodStart: string
  readonly periodEnd: string
  readonly dueDate: string
  readonly amountKobo: number
  readonly paidKobo: number
  readonly outstandingKobo: number
  readonly status: string
  readonly paidAt: string | null
}

/** The schedule's periods, oldest first (the API answers most recent first). */
const periodsOf = (t: Tenant, id: string) =>
  Effect.map(call("GET", `/api/v1/billing/schedules/${id}/periods${PAGE}`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    expect(r.body.hasMore).toBe(false)
    const newestFirst = r.body.data as ReadonlyArray<WirePeriod>
    expect(newestFirst.map((p) => p.index)).toEqual([...newestFirst].map((p) => p.index).sort((a, b) => b - a))
    return [...newestFirst].reverse()
  })

const accountOf = (t: Tenant, ref: string) =>
  Effect.map(call("GET", `/api/v1/virtual-accounts/${ref}`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    return r.body as { expectedAmountKobo: number | null; amountPaidKobo: number; paymentState: string }
  })

/** The schedule's billing events in the outbox, in the order they were staged, as "due:3", "paid:1", ... */
const eventsOf = (t: Tenant, scheduleId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ eventType: string; envelope: any }>`SELECT event_type, envelope FROM outbox
      WHERE tenant_id = ${t.tenantId} AND event_type LIKE 'billing.period.%' AND envelope->'data'->>'scheduleId' = ${scheduleId} ORDER BY id`.pipe(Effect.orDie)
    return rows.map((r) => {
      const data = typeof r.envelope === "string" ? JSON.parse(r.envelope).data : r.envelope.data
      expect(r.eventType).toMatch(/^billing\.period\.(due|paid|overdue)$/)
      expect(data.scheduleId).toBe(scheduleId)
      return { short: `${r.eventType.slice("billing.period.".length)}:${data.period.index}`, type: r.eventType, data }
    })
  })

const shortEvents = (t: Tenant, scheduleId: string) => Effect.map(eventsOf(t, scheduleId), (es) => es.map((e) => e.short))

/** Rows in the database for the schedule: how many periods and how many distinct indices. */
const periodRows = (scheduleId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [r] = yield* sql<{ n: number; distinctIndices: number }>`SELECT count(*)::int AS n, count(DISTINCT index)::int AS distinct_indices
      FROM billing_periods WHERE schedule_id = ${scheduleId}`.pipe(Effect.orDie)
    return r!
  })

let payer = 0
/** A deposit from the customer (a payer account number of its own each time, so no two are duplicates of each other). */
const deposit = (t: Tenant, nuban: string, amountKobo: number, senderName: string) =>
  Effect.gen(function* () {
    payer += 1
    const r = yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName, senderAccountNumber: `31${String(payer).padStart(8, "0")}` })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.sessionId
  })

const reverse = (t: Tenant, nuban: string, amountKobo: number, reversedSessionId: string) =>
  Effect.gen(function* () {
    const r = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: nuban, amountKobo, senderName: null, reversedSessionId })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  })

/** Waits (30 s at most) until the reconciler has brought the account's amount paid to `kobo`. */
const waitPaid = (t: Tenant, ref: string, kobo: number) =>
  waitFor(`account ${ref} to have ${kobo} paid`, accountOf(t, ref), { until: (a) => a.amountPaidKobo === kobo, timeoutMs: 30_000 })

// ---------------------------------------------------------------------------------------------------------------
// The 13 monthly periods: a model to check every period against
// ---------------------------------------------------------------------------------------------------------------

/** Jan 31 anchored, due 5 days after each start, in Lagos; the 14th start (leap year: Feb 29) ends the 13th. */
const CALENDAR: ReadonlyArray<readonly [start: string, due: string]> = [
  ["2027-01-31", "2027-02-05"], ["2027-02-28", "2027-03-05"], ["2027-03-31", "2027-04-05"], ["2027-04-30", "2027-05-05"],
  ["2027-05-31", "2027-06-05"], ["2027-06-30", "2027-07-05"], ["2027-07-31", "2027-08-05"], ["2027-08-31", "2027-09-05"],
  ["2027-09-30", "2027-10-05"], ["2027-10-31", "2027-11-05"], ["2027-11-30", "2027-12-05"], ["2027-12-31", "2028-01-05"],
  ["2028-01-31", "2028-02-05"]
]
const END_OF_13 = "2028-02-29"

interface ModelPeriod {
  readonly index: number
  readonly start: string
  readonly end: string
  readonly due: string
  readonly amount: number
  paidAtMs: number | null
}

/**
 * What the periods should say: what the account was paid pays the oldest period first; an unpaid period is Open before
 * its due date (Lagos), Due on it, Overdue from the next day; `paidAt` is the billing time of the pass that first saw
 * it paid (and is cleared when a reversal un-pays it).
 */
class Model {
  periods: Array<ModelPeriod> = []
  paid = 0

  openStarted(nowMs: number) {
    while (this.periods.length < CALENDAR.length && lagos(CALENDAR[this.periods.length]![0], "00:00") <= nowMs) {
      const i = this.periods.length
      this.periods.push({ index: i + 1, start: CALENDAR[i]![0], due: CALENDAR[i]![1], end: CALENDAR[i + 1]?.[0] ?? END_OF_13, amount: 10_000, paidAtMs: null })
    }
  }

  view(nowMs: number) {
    let left = this.paid
    return this.periods.map((p) => {
      const paidKobo = Math.min(left, p.amount)
      left -= paidKobo
      const outstandingKobo = p.amount - paidKobo
      const status = outstandingKobo === 0 ? "Paid" : nowMs >= lagos(p.due, "00:00") + DAY_MS ? "Overdue" : nowMs >= lagos(p.due, "00:00") ? "Due" : "Open"
      return { p, paidKobo, outstandingKobo, status }
    })
  }

  /** A pass of the billing clock at `nowMs`. */
  tick(nowMs: number) {
    this.openStarted(nowMs)
    for (const v of this.view(nowMs)) {
      if (v.status === "Paid") v.p.paidAtMs ??= nowMs
      else v.p.paidAtMs = null
    }
  }

  expected(nowMs: number) {
    return this.view(nowMs).map(({ p, paidKobo, outstandingKobo, status }) => ({
      index: p.index,
      periodStart: boundary(p.start),
      periodEnd: boundary(p.end),
      dueDate: p.due,
      amountKobo: p.amount,
      paidKobo,
      outstandingKobo,
      status,
      paidAt: p.paidAtMs === null ? null : new Date(p.paidAtMs).toISOString()
    }))
  }
}

type Action =
  | { readonly at: string; readonly events: ReadonlyArray<string>; readonly invariant?: true }
  | { readonly deposit: number; readonly name?: string; readonly events: ReadonlyArray<string>; readonly invariant?: true }
  | { readonly reverse: string; readonly amount: number; readonly events: ReadonlyArray<string>; readonly invariant?: true }

/**
 * The year: `at` moves the clock to 10:00 in Lagos on that date and runs a pass; `deposit` pays (and runs a pass);
 * `reverse` reverses the deposit named so. `events` are the billing events that step must add, in order.
 */
const YEAR: ReadonlyArray<Action> = [
  // P1 on time: paid before its due date, so it is never due.
  { at: "2027-02-03", events: [] },
  { deposit: 10_000, events: ["paid:1"] },
  // P2 late: due, overdue, then paid.
  { at: "2027-02-28", events: [] },
  { at: "2027-03-05", events: ["due:2"] },
  { at: "2027-03-06", events: ["overdue:2"] },
  { at: "2027-03-08", events: [] },
  { deposit: 10_000, events: ["paid:2"], invariant: true },
  // P3 partial: 4,000 on its due date, overdue with 6,000 outstanding, then the rest.
  { at: "2027-03-31", events: [] },
  { at: "2027-04-05", events: ["due:3"] },
  { deposit: 4_000, events: [] },
  { at: "2027-04-06", events: ["overdue:3"] },
  { at: "2027-04-10", events: [] },
  { deposit: 6_000, events: ["paid:3"] },
  // P4 overpaid by 15,000: P5 opens paid, P6 opens with 5,000 paid.
  { at: "2027-04-30", events: [] },
  { at: "2027-05-02", events: [] },
  { deposit: 25_000, events: ["paid:4"], invariant: true },
  { at: "2027-05-31", events: ["paid:5"] },
  { at: "2027-06-30", events: [] },
  { at: "2027-07-05", events: ["due:6"] },
  { deposit: 5_000, events: ["paid:6"] },
  // P7 missing: due, overdue; a deposit in P8's time pays P7 (the oldest) first, P8 falls due and overdue.
  { at: "2027-07-31", events: [] },
  { at: "2027-08-05", events: ["due:7"] },
  { at: "2027-08-06", events: ["overdue:7"] },
  { at: "2027-08-31", events: [] },
  { at: "2027-09-02", events: [] },
  { deposit: 10_000, name: "late7", events: ["paid:7"] },
  { at: "2027-09-05", events: ["due:8"] },
  { at: "2027-09-06", events: ["overdue:8"] },
  // The reversal of that deposit re-opens P7 (Overdue again, no paidAt); paying again sends no second paid for P7.
  { at: "2027-09-07", events: [] },
  { reverse: "late7", amount: 10_000, events: [], invariant: true },
  { at: "2027-09-30", events: [] },
  { at: "2027-10-03", events: [] },
  { deposit: 30_000, events: ["paid:8", "paid:9"] },
  // P10 missing, then 5,000 towards it in P11's time; P11 and P12 missing.
  { at: "2027-10-31", events: [] },
  { at: "2027-11-05", events: ["due:10"] },
  { at: "2027-11-06", events: ["overdue:10"] },
  { at: "2027-11-30", events: [] },
  { at: "2027-12-01", events: [] },
  { deposit: 5_000, events: [] },
  { at: "2027-12-05", events: ["due:11"] },
  { at: "2027-12-06", events: ["overdue:11"] },
  { at: "2027-12-31", events: [] },
  { at: "2028-01-05", events: ["due:12"] },
  { at: "2028-01-06", events: ["overdue:12"], invariant: true },
  // P13 opens; 32,000 pays P10 to P12 and 7,000 of P13, which then falls due and overdue.
  { at: "2028-01-31", events: [] },
  { at: "2028-02-01", events: [] },
  { deposit: 32_000, events: ["paid:10", "paid:11", "paid:12"] },
  { at: "2028-02-05", events: ["due:13"] },
  { at: "2028-02-06", events: ["overdue:13"], invariant: true }
]

const STATUS_OF_EVENT: Record<string, string> = { "billing.period.due": "Due", "billing.period.overdue": "Overdue", "billing.period.paid": "Paid" }

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("recurring billing on a TestClock", (it) => {
  it.scoped("13 monthly periods: on-time, late, partial, over- and missing payments, a reversal; every period, event and amount", () =>
    Effect.gen(function* () {
      const clock = yield* billingTestClock(START)
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "m-13", "Chiamaka Obi")
      const s = yield* createSchedule(t, { accountRef: "m-13", interval: "monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "year-1" })
      expect(s).toMatchObject({ status: "Active", nextPeriodStart: boundary("2027-02-28"), amountKobo: 10_000 })

      const model = new Model()
      model.tick(START)
      const sessions = new Map<string, string>()
      const events: Array<string> = []

      const check = (what: string) =>
        Effect.gen(function* () {
          const now = yield* clock.currentTimeMillis
          const periods = yield* periodsOf(t, s.id)
          const want = model.expected(now)
          expect(periods.map(({ id: _id, scheduleId: _s, ...p }) => p), what).toEqual(want)
          expect(periods.every((p) => p.scheduleId === s.id), what).toBe(true)
          // The account expects exactly what the opened periods bill (it had no expected amount of its own).
          const account = yield* accountOf(t, "m-13")
          expect(account.expectedAmountKobo, what).toBe(want.reduce((sum, p) => sum + p.amountKobo, 0))
          expect(account.amountPaidKobo, what).toBe(model.paid)
          const schedule = yield* getSchedule(t, s.id)
          const next = CALENDAR[model.periods.length]?.[0] ?? END_OF_13
          expect(schedule.nextPeriodStart, what).toBe(boundary(next))
          // Each event once, in order, carrying its period as it stood.
          const staged = yield* eventsOf(t, s.id)
          expect(staged.map((e) => e.short), what).toEqual(events)
          for (const e of staged) {
            expect(e.data.period.status, `${what}: ${e.short}`).toBe(STATUS_OF_EVENT[e.type])
            expect(e.data).toMatchObject({ reference: "year-1", accountRef: "m-13", period: { scheduleId: s.id } })
          }
        })

      yield* check("after create")
      for (const [n, action] of YEAR.entries()) {
        const what = `step ${n}: ${JSON.stringify(action)}`
        if ("at" in action) {
          const at = lagos(action.at)
          yield* moveTo(clock, at)
          yield* tick
          model.tick(at)
        } else if ("deposit" in action) {
          const session = yield* deposit(t, acc.nuban, action.deposit, "OBI CHIAMAKA")
          if (action.name) sessions.set(action.name, session)
          model.paid += action.deposit
          yield* waitPaid(t, "m-13", model.paid)
          yield* tick
          model.tick(yield* clock.currentTimeMillis)
        } else {
          yield* reverse(t, acc.nuban, action.amount, sessions.get(action.reverse)!)
          model.paid -= action.amount
          yield* waitPaid(t, "m-13", model.paid)
          yield* tick
          model.tick(yield* clock.currentTimeMillis)
        }
        events.push(...action.events)
        yield* check(what)
        if (action.invariant) yield* assertLedgerInvariant
      }

      // The end of the year as plain figures (the model agrees with this by the last check).
      const last = yield* periodsOf(t, s.id)
      expect(last.map((p) => p.status)).toEqual([...Array(12).fill("Paid"), "Overdue"])
      expect(last.map((p) => p.periodStart)).toEqual(CALENDAR.map(([start]) => boundary(start)))
      expect(last[12]).toMatchObject({ amountKobo: 10_000, paidKobo: 7_000, outstandingKobo: 3_000, dueDate: "2028-02-05" })
      expect(yield* accountOf(t, "m-13")).toMatchObject({ expectedAmountKobo: 130_000, amountPaidKobo: 127_000 })
      // Every period's events exactly once: due before overdue before paid.
      const all = yield* shortEvents(t, s.id)
      expect(new Set(all).size).toBe(all.length)
      for (let i = 1; i <= 13; i++) {
        const mine = all.filter((e) => e.endsWith(`:${i}`)).map((e) => e.split(":")[0])
        expect(mine, `period ${i}`).toEqual(["due", "overdue", "paid"].filter((k) => mine.includes(k)))
      }
      // A second pass at the same time changes nothing.
      yield* tick
      expect(yield* shortEvents(t, s.id)).toEqual(all)
      expect(yield* periodRows(s.id)).toEqual({ n: 13, distinctIndices: 13 })
      yield* assertLedgerInvariant
    }))

  it.scoped("pause opens nothing across two boundaries; resume opens the next period at the next boundary, no back-fill (the loop on the TestClock)", () =>
    Effect.gen(function* () {
      const passes = yield* Queue.unbounded<number>()
      const loop = billingPassesLoop((n) => Queue.offer(passes, n)).pipe(
        Effect.provideService(BillingWorkerSettings, { intervalMs: DAY_MS, worker: false })
      )
      const clock = yield* billingTestClock(START, loop)
      const asleep = waitFor("the billing clock loop to go back to sleep", Effect.map(clock.sleeps, Chunk.size), {
        until: (n) => n > 0,
        timeoutMs: 30_000,
        intervalMs: 50
      })
      // One day on: the loop's next pass is due exactly then, so it runs at the new billing time.
      const day = Effect.gen(function* () {
        yield* asleep
        yield* clock.adjust(DAY_MS)
        yield* Queue.take(passes).pipe(
          Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("no billing clock pass within 30 s") }),
          Effect.orDie
        )
      })
      yield* asleep
      yield* Queue.takeAll(passes)

      const t = yield* testTenant
      yield* createAccount(t.token, "p-1", "Emeka Nwosu")
      const s = yield* createSchedule(t, { accountRef: "p-1", interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "pause-1" })
      const count = Effect.map(periodRows(s.id), (r) => r.n)

      // Ten days on the loop: P1 falls due (Feb 5) and overdue (Feb 6).
      for (let i = 0; i < 10; i++) yield* day
      expect(yield* clock.currentTimeMillis).toBe(lagos("2027-02-10"))
      expect(yield* shortEvents(t, s.id)).toEqual(["due:1", "overdue:1"])
      expect(yield* count).toBe(1)

      const paused = yield* call("POST", `/api/v1/billing/schedules/${s.id}/pause`, { token: t.token })
      expectStatus(paused, 200)
      expect(paused.body.status).toBe("Paused")
      // Sixty days paused: Feb 28 and Mar 31 pass and nothing opens.
      for (let i = 0; i < 60; i++) {
        yield* day
        expect(yield* count).toBe(1)
      }
      expect(yield* clock.currentTimeMillis).toBe(lagos("2027-04-11"))
      expect((yield* periodsOf(t, s.id)).map((p) => p.index)).toEqual([1])
      expect((yield* accountOf(t, "p-1")).expectedAmountKobo).toBe(10_000)
      expect((yield* getSchedule(t, s.id)).status).toBe("Paused")

      const resumed = yield* call("POST", `/api/v1/billing/schedules/${s.id}/resume`, { token: t.token })
      expectStatus(resumed, 200)
      expect(resumed.body).toMatchObject({ status: "Active", nextPeriodStart: boundary("2027-04-30") })
      // Day by day to May 31: the next period opens on Apr 30 (not Feb 28 or Mar 31), then May 31.
      while ((yield* clock.currentTimeMillis) < lagos("2027-05-31")) {
        yield* day
        const now = yield* clock.currentTimeMillis
        expect(yield* count, new Date(now).toISOString()).toBe(now < lagos("2027-04-30", "00:00") ? 1 : now < lagos("2027-05-31", "00:00") ? 2 : 3)
      }
      const periods = yield* periodsOf(t, s.id)
      expect(periods.map((p) => [p.index, p.periodStart, p.periodEnd, p.dueDate, p.amountKobo, p.status])).toEqual([
        [1, boundary("2027-01-31"), boundary("2027-02-28"), "2027-02-05", 10_000, "Overdue"],
        [2, boundary("2027-04-30"), boundary("2027-05-31"), "2027-05-05", 10_000, "Overdue"],
        [3, boundary("2027-05-31"), boundary("2027-06-30"), "2027-06-05", 10_000, "Open"]
      ])
      expect((yield* accountOf(t, "p-1")).expectedAmountKobo).toBe(30_000)
      expect(yield* shortEvents(t, s.id)).toEqual(["due:1", "overdue:1", "due:2", "overdue:2"])
      expect(yield* getSchedule(t, s.id)).toMatchObject({ status: "Active", nextPeriodStart: boundary("2027-06-30") })
      yield* assertLedgerInvariant
    }))

  it.scoped("cancel: unpaid periods cancelled, their outstanding leaves the expected amount, paid stays paid; nothing opens after", () =>
    Effect.gen(function* () {
      const clock = yield* billingTestClock(START)
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "c-1", "Ngozi Eze")
      const s = yield* createSchedule(t, { accountRef: "c-1", interval: "MONTHLY", amountKobo: 10_000, dueOffsetDays: 5, reference: "cancel-1" })
      const step = (date: string) => Effect.zipRight(moveTo(clock, lagos(date)), tick)

      yield* step("2027-02-03")
      yield* deposit(t, acc.nuban, 10_000, "EZE NGOZI")
      yield* waitPaid(t, "c-1", 10_000)
      yield* tick
      yield* step("2027-02-28")
      yield* step("2027-03-01")
      yield* deposit(t, acc.nuban, 4_000, "EZE NGOZI")
      yield* waitPaid(t, "c-1", 14_000)
      yield* tick
      yield* step("2027-03-31")
      yield* step("2027-04-06")
      const before = yield* periodsOf(t, s.id)
      expect(before.map((p) => [p.index, p.amountKobo, p.paidKobo, p.outstandingKobo, p.status])).toEqual([
        [1, 10_000, 10_000, 0, "Paid"],
        [2, 10_000, 4_000, 6_000, "Overdue"],
        [3, 10_000, 0, 10_000, "Overdue"]
      ])
      expect(yield* accountOf(t, "c-1")).toMatchObject({ expectedAmountKobo: 30_000, amountPaidKobo: 14_000 })
      const eventsBefore = yield* shortEvents(t, s.id)
      expect(eventsBefore).toEqual(["paid:1", "due:2", "overdue:2", "due:3", "overdue:3"])
      yield* assertLedgerInvariant

      const cancelled = yield* call("POST", `/api/v1/billing/schedules/${s.id}/cancel`, { token: t.token })
      expectStatus(cancelled, 200)
      expect(cancelled.body).toMatchObject({ status: "Cancelled", nextPeriodStart: null })
      const after = yield* periodsOf(t, s.id)
      // P2 keeps what it was paid (4,000) and owes nothing more; P3 expected nothing paid and owes nothing.
      expect(after.map((p) => [p.index, p.amountKobo, p.paidKobo, p.outstandingKobo, p.status, p.paidAt === null])).toEqual([
        [1, 10_000, 10_000, 0, "Paid", false],
        [2, 4_000, 4_000, 0, "Cancelled", true],
        [3, 0, 0, 0, "Cancelled", true]
      ])
      expect(yield* accountOf(t, "c-1")).toMatchObject({ expectedAmountKobo: 14_000, amountPaidKobo: 14_000, paymentState: "FullyPaid" })

      // Two months on, passes open nothing and send nothing.
      yield* step("2027-05-06")
      yield* step("2027-06-06")
      expect(yield* periodsOf(t, s.id)).toEqual(after)
      expect(yield* shortEvents(t, s.id)).toEqual(eventsBefore)
      expect((yield* accountOf(t, "c-1")).expectedAmountKobo).toBe(14_000)

      // A cancelled schedule cannot be paused, resumed or re-priced; cancelling again is a no-op.
      expectProblem(yield* call("POST", `/api/v1/billing/schedules/${s.id}/pause`, { token: t.token }), 409, "schedule_cancelled")
      expectProblem(yield* call("POST", `/api/v1/billing/schedules/${s.id}/resume`, { token: t.token }), 409, "schedule_cancelled")
      expectProblem(yield* call("PUT", `/api/v1/billing/schedules/${s.id}/next-amount`, { token: t.token, json: { amountKobo: 5_000 } }), 409, "schedule_cancelled")
      const again = yield* call("POST", `/api/v1/billing/schedules/${s.id}/cancel`, { token: t.token })
      expectStatus(again, 200)
      expect(again.body.status).toBe("Cancelled")
      yield* tick
      expect(yield* periodsOf(t, s.id)).toEqual(after)
      expect((yield* accountOf(t, "c-1")).expectedAmountKobo).toBe(14_000)

      // The account is free for a new schedule (cancel is what frees it); cancelling that one at once takes its
      // unpaid first period back out.
      const next = yield* createSchedule(t, { accountRef: "c-1", interval: "Monthly", amountKobo: 10_000, reference: "cancel-2" })
      expect((yield* accountOf(t, "c-1")).expectedAmountKobo).toBe(24_000)
      expectStatus(yield* call("POST", `/api/v1/billing/schedules/${next.id}/cancel`, { token: t.token }), 200)
      expect((yield* periodsOf(t, next.id)).map((p) => [p.index, p.amountKobo, p.status])).toEqual([[1, 0, "Cancelled"]])
      expect((yield* accountOf(t, "c-1")).expectedAmountKobo).toBe(14_000)
      yield* assertLedgerInvariant
    }))

  it.scoped("next-amount: only the next period gets it, the one after is back to the schedule's amount", () =>
    Effect.gen(function* () {
      const clock = yield* billingTestClock(START)
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "n-1", "Tunde Bakare")
      const s = yield* createSchedule(t, { accountRef: "n-1", interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "next-1" })
      const setNext = (amountKobo: number) =>
        Effect.map(call("PUT", `/api/v1/billing/schedules/${s.id}/next-amount`, { token: t.token, json: { amountKobo } }), (r) => {
          expectStatus(r, 200)
          expect(r.body).toMatchObject({ amountKobo: 10_000, nextAmountKobo: amountKobo })
        })
      const amounts = Effect.map(periodsOf(t, s.id), (ps) => ps.map((p) => p.amountKobo))

      yield* setNext(25_000)
      expect(yield* amounts).toEqual([10_000])
      yield* moveTo(clock, lagos("2027-02-28"))
      yield* tick
      expect(yield* amounts).toEqual([10_000, 25_000])
      expect((yield* getSchedule(t, s.id)).nextAmountKobo).toBe(10_000)
      yield* moveTo(clock, lagos("2027-03-31"))
      yield* tick
      expect(yield* amounts).toEqual([10_000, 25_000, 10_000])

      // Two periods open in one pass: the first of them takes the next amount, the second the schedule's.
      yield* setNext(7_500)
      yield* moveTo(clock, lagos("2027-05-31"))
      yield* tick
      expect(yield* amounts).toEqual([10_000, 25_000, 10_000, 7_500, 10_000])
      expect((yield* getSchedule(t, s.id)).nextAmountKobo).toBe(10_000)
      expect((yield* accountOf(t, "n-1")).expectedAmountKobo).toBe(62_500)

      // Paid oldest first across the different amounts.
      yield* deposit(t, acc.nuban, 40_000, "BAKARE TUNDE")
      yield* waitPaid(t, "n-1", 40_000)
      yield* tick
      expect((yield* periodsOf(t, s.id)).map((p) => [p.amountKobo, p.paidKobo, p.outstandingKobo, p.status])).toEqual([
        [10_000, 10_000, 0, "Paid"],
        [25_000, 25_000, 0, "Paid"],
        [10_000, 5_000, 5_000, "Overdue"],
        [7_500, 0, 7_500, "Overdue"],
        [10_000, 0, 10_000, "Open"]
      ])
      yield* assertLedgerInvariant
    }))

  it.scoped("a clock jump of six periods opens each once and sends each event once; two racing passes do too", () =>
    Effect.gen(function* () {
      const clock = yield* billingTestClock(START)
      const t = yield* testTenant
      yield* createAccount(t.token, "j-1", "Halima Bello")
      yield* createAccount(t.token, "j-2", "Ifeanyi Okafor")
      const a = yield* createSchedule(t, { accountRef: "j-1", interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "jump-a" })
      expect(yield* shortEvents(t, a.id)).toEqual([])

      // Six boundaries (Feb 28 ... Jul 31) in one adjust; until a pass runs nothing opens.
      yield* moveTo(clock, lagos("2027-08-10"))
      expect((yield* periodsOf(t, a.id)).length).toBe(1)
      yield* tick
      const afterJump = yield* periodsOf(t, a.id)
      expect(afterJump.map((p) => [p.index, p.periodStart, p.dueDate, p.status])).toEqual(
        CALENDAR.slice(0, 7).map(([start, due], i) => [i + 1, boundary(start), due, "Overdue"])
      )
      const eventsA1 = [1, 2, 3, 4, 5, 6, 7].flatMap((i) => [`due:${i}`, `overdue:${i}`])
      expect(yield* shortEvents(t, a.id)).toEqual(eventsA1)
      // One pass took each period through Due to Overdue: each event carries the period as it was at its transition.
      for (const e of yield* eventsOf(t, a.id)) {
        expect(e.data.period.status, e.short).toBe(STATUS_OF_EVENT[e.type])
        expect(e.data.period).toMatchObject({ paidAt: null, outstandingKobo: 10_000 })
      }
      expect((yield* accountOf(t, "j-1")).expectedAmountKobo).toBe(70_000)
      // A second pass changes nothing.
      yield* tick
      expect(yield* periodsOf(t, a.id)).toEqual(afterJump)
      expect(yield* shortEvents(t, a.id)).toEqual(eventsA1)
      expect(yield* periodRows(a.id)).toEqual({ n: 7, distinctIndices: 7 })
      expect((yield* accountOf(t, "j-1")).expectedAmountKobo).toBe(70_000)
      yield* assertLedgerInvariant

      // A second schedule (anchored Aug 10, due on the start day: its first period is due at once), then another jump
      // of six periods with two passes racing.
      const b = yield* createSchedule(t, { accountRef: "j-2", interval: "Monthly", amountKobo: 20_000, dueOffsetDays: 0, reference: "jump-b" })
      expect(yield* shortEvents(t, b.id)).toEqual(["due:1"])
      yield* moveTo(clock, lagos("2028-02-10"))
      const [seenByFirst, seenBySecond] = yield* Effect.all([tick, tick], { concurrency: 2 })
      expect(seenByFirst).toBeGreaterThanOrEqual(2)
      expect(seenBySecond).toBeGreaterThanOrEqual(2)

      const periodsA = yield* periodsOf(t, a.id)
      expect(periodsA.map((p) => [p.index, p.periodStart, p.dueDate, p.amountKobo, p.status])).toEqual(
        CALENDAR.map(([start, due], i) => [i + 1, boundary(start), due, 10_000, "Overdue"])
      )
      const eventsA2 = [...eventsA1, ...[8, 9, 10, 11, 12, 13].flatMap((i) => [`due:${i}`, `overdue:${i}`])]
      expect(yield* shortEvents(t, a.id)).toEqual(eventsA2)
      expect(yield* periodRows(a.id)).toEqual({ n: 13, distinctIndices: 13 })
      expect((yield* accountOf(t, "j-1")).expectedAmountKobo).toBe(130_000)

      const bStarts = ["2027-08-10", "2027-09-10", "2027-10-10", "2027-11-10", "2027-12-10", "2028-01-10", "2028-02-10"]
      const periodsB = yield* periodsOf(t, b.id)
      expect(periodsB.map((p) => [p.index, p.periodStart, p.dueDate, p.amountKobo, p.status])).toEqual(
        bStarts.map((start, i) => [i + 1, boundary(start), start, 20_000, i < 6 ? "Overdue" : "Due"])
      )
      const eventsB = ["due:1", "overdue:1", ...[2, 3, 4, 5, 6].flatMap((i) => [`due:${i}`, `overdue:${i}`]), "due:7"]
      expect(yield* shortEvents(t, b.id)).toEqual(eventsB)
      for (const e of [...yield* eventsOf(t, a.id), ...yield* eventsOf(t, b.id)]) expect(e.data.period.status, e.short).toBe(STATUS_OF_EVENT[e.type])
      expect(yield* periodRows(b.id)).toEqual({ n: 7, distinctIndices: 7 })
      expect((yield* accountOf(t, "j-2")).expectedAmountKobo).toBe(140_000)

      // Racing again at the same time, and a pass after: nothing more.
      yield* Effect.all([tick, tick], { concurrency: 2 })
      yield* tick
      expect(yield* periodsOf(t, a.id)).toEqual(periodsA)
      expect(yield* periodsOf(t, b.id)).toEqual(periodsB)
      expect(yield* shortEvents(t, a.id)).toEqual(eventsA2)
      expect(yield* shortEvents(t, b.id)).toEqual(eventsB)

      // Two days on no period starts, only B's seventh falls overdue: racing passes (guarded by the row locks alone
      // here, no new row to collide on) send that event once.
      yield* moveTo(clock, lagos("2028-02-12"))
      yield* Effect.all([tick, tick], { concurrency: 2 })
      expect(yield* shortEvents(t, a.id)).toEqual(eventsA2)
      expect(yield* shortEvents(t, b.id)).toEqual([...eventsB, "overdue:7"])
      expect(yield* periodRows(b.id)).toEqual({ n: 7, distinctIndices: 7 })
      expect((yield* accountOf(t, "j-1")).expectedAmountKobo).toBe(130_000)
      expect((yield* accountOf(t, "j-2")).expectedAmountKobo).toBe(140_000)
      yield* assertLedgerInvariant
    }))
})
