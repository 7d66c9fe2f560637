import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Billing } from "../../services/billing/Billing.js"
import { BillingWorkerSettings } from "../../services/billing/BillingPasses.js"
import { ConsumerRegistry } from "../../services/outbox/Registry.js"
import { BUILT_IN } from "../../services/Capabilities.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, createAccount, sendSigned, type Tenant, testTenant } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { webhookReceiver } from "../support/Webhooks.js"
import { rowLock } from "../support/RowLocks.js"
import { waitFor } from "../support/Wait.js"

/**
 * Issue 31, parts 1-3: billing happens when things happen, not at the next pass of the billing clock. The billing clock
 * is OFF in these apps (makeTestApp's default: `worker: false`; asserted below), so its 30 s pass can be what did none
 * of this.
 * - A deposit that pays a period: `Paid` with `paidAt` on the first read that says so, and `billing.period.paid`
 *   delivered to the tenant's webhook endpoint within 5 s (the billing consumer, downstream of the reconciler).
 * - With no billing consumer at all (its subscription taken out of the registry), a read that finds a period paid sets
 *   `paidAt` itself, and the paid event a later pass sends carries that same `paidAt`.
 * - `POST /api/v1/sandbox/clock/advance` by 35, 65 and 95 days: a read straight after it (no wait, no pass) shows the
 *   periods opened, `Due` and `Overdue` on the Lagos calendar, and their events are in the outbox in transition order,
 *   each carrying its period as it was at that transition (`.due` says `Due` though the same advance made it `Overdue`).
 */

const SCHEDULES = "/api/v1/billing/schedules"
const DAY_S = 86_400
const DAY_MS = DAY_S * 1000
const LAGOS_MS = 3_600_000

// ---------------------------------------------------------------------------------------------------------------
// The Lagos calendar, written out again here (not src/domain/Billing.ts): dates as YYYY-MM-DD
// ---------------------------------------------------------------------------------------------------------------

const pad = (n: number) => String(n).padStart(2, "0")
/** The Lagos calendar date (UTC+1 all year) of an instant. */
const lagosDate = (ms: number) => new Date(ms + LAGOS_MS).toISOString().slice(0, 10)
/** The instant of 00:00 in Lagos on a date. */
const lagosMidnight = (date: string) => Date.parse(`${date}T00:00:00+01:00`)
const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
const daysFrom = (a: string, b: string) => Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS)
/** The start date of the k-th (0-based) Monthly period anchored on `anchor`: the anchor's day, clamped to the month. */
const monthlyStart = (anchor: string, k: number) => {
  const [y, m, d] = anchor.split("-").map(Number) as [number, number, number]
  const months = m - 1 + k
  const year = y + Math.floor(months / 12)
  const month = (months % 12) + 1
  return `${year}-${pad(month)}-${pad(Math.min(d, new Date(Date.UTC(year, month, 0)).getUTCDate()))}`
}

interface Expected {
  readonly index: number
  readonly periodStart: string
  readonly periodEnd: string
  readonly dueDate: string
  readonly status: "Open" | "Due" | "Overdue"
}

/** An unpaid Monthly schedule's periods on Lagos date `today`: Open before the due date, Due on it, Overdue after. */
const monthlyPeriods = (anchor: string, dueOffsetDays: number, today: string): ReadonlyArray<Expected> => {
  const out: Array<Expected> = []
  for (let k = 0; monthlyStart(anchor, k) <= today; k++) {
    const start = monthlyStart(anchor, k)
    const dueDate = plusDays(start, dueOffsetDays)
    out.push({
      index: k + 1,
      periodStart: new Date(lagosMidnight(start)).toISOString(),
      periodEnd: new Date(lagosMidnight(monthlyStart(anchor, k + 1))).toISOString(),
      dueDate,
      status: today < dueDate ? "Open" : today === dueDate ? "Due" : "Overdue"
    })
  }
  return out
}

/** The events those periods have had, in the order of their transitions: "due:1", "overdue:1", "due:2", ... */
const transitionsOf = (periods: ReadonlyArray<Expected>) =>
  periods
    .flatMap((p) => [
      ...(p.status !== "Open" ? [{ at: lagosMidnight(p.dueDate), e: `due:${p.index}` }] : []),
      ...(p.status === "Overdue" ? [{ at: lagosMidnight(p.dueDate) + DAY_MS, e: `overdue:${p.index}` }] : [])
    ])
    .sort((a, b) => a.at - b.at)
    .map((t) => t.e)

// ---------------------------------------------------------------------------------------------------------------
// The API and the outbox
// ---------------------------------------------------------------------------------------------------------------

interface WirePeriod {
  readonly id: string
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

const createSchedule = (t: Tenant, body: Record<string, unknown>) =>
  Effect.map(call("POST", SCHEDULES, { token: t.token, json: body }), (r) => {
    expectStatus(r, 201)
    return r.body as { id: string }
  })

/** The schedule's periods, oldest first. */
const periodsOf = (t: Tenant, id: string) =>
  Effect.map(call("GET", `${SCHEDULES}/${id}/periods?take=100`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    return [...(r.body.data as ReadonlyArray<WirePeriod>)].reverse()
  })

const accountOf = (t: Tenant, ref: string) =>
  Effect.map(call("GET", `/api/v1/virtual-accounts/${ref}`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    return r.body as { expectedAmountKobo: number | null; amountPaidKobo: number }
  })

/** The schedule's billing events in the outbox, in the order they were staged. */
const eventsOf = (scheduleId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ eventType: string; envelope: any }>`SELECT event_type, envelope FROM outbox
      WHERE event_type LIKE 'billing.period.%' AND envelope->'data'->>'scheduleId' = ${scheduleId} ORDER BY id`).pipe(
    Effect.orDie,
    Effect.map((rows) =>
      rows.map((r) => {
        const envelope = typeof r.envelope === "string" ? JSON.parse(r.envelope) : r.envelope
        const period = envelope.data.period as WirePeriod
        return { short: `${r.eventType.slice("billing.period.".length)}:${period.index}`, type: r.eventType as string, period, envelope }
      })
    )
  )

const STATUS_OF_EVENT: Record<string, string> = { "billing.period.due": "Due", "billing.period.overdue": "Overdue", "billing.period.paid": "Paid" }

/** The billing clock's worker is off in this app: nothing here waits for, or is done by, its pass. */
const clockIsOff = Effect.map(BillingWorkerSettings, (s) => expect(s.worker, "the billing clock worker must be off").toBe(false))

const advance = (t: Tenant, seconds: number) =>
  Effect.map(call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds } }), (r) => {
    expectStatus(r, 200)
    return r.body as { now: string; offsetSeconds: number }
  })

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("billing at once (the billing clock off)", (it) => {
  it.scoped("a deposit that pays a period: Paid with paidAt on every read that says Paid, billing.period.paid at the endpoint within 5 s; a reversal clears it", () =>
    Effect.gen(function* () {
      yield* clockIsOff
      const receiver = yield* webhookReceiver
      const t = yield* testTenant
      const endpoint = yield* call("POST", "/api/v1/webhook-endpoints", { token: t.token, json: { url: receiver.url("/billing") } })
      expectStatus(endpoint, 201)
      receiver.register("/billing", endpoint.body.secret)
      const acc = yield* createAccount(t.token, "now-1", "Amaka Eze")
      const s = yield* createSchedule(t, { accountRef: "now-1", interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "now-1" })
      expect((yield* periodsOf(t, s.id)).map((p) => [p.index, p.status, p.paidAt])).toEqual([[1, "Open", null]])

      const paidEvents = () =>
        receiver.requests.filter((r) => r.path === "/billing" && JSON.parse(r.body).type === "billing.period.paid").map((r) => ({ ...r, envelope: JSON.parse(r.body) }))
      const sent = Date.now()
      const deposit = yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 10_000, senderName: "EZE AMAKA" })
      expect(deposit.status, JSON.stringify(deposit.body)).toBe(200)
      // Read as fast as we can until the endpoint has the event: every read that says Paid has its paidAt, and it never
      // changes once it is there.
      const reads: Array<WirePeriod> = []
      yield* waitFor(
        "billing.period.paid to reach the endpoint within 5 s of the deposit",
        Effect.map(periodsOf(t, s.id), ([p1]) => {
          reads.push(p1!)
          return paidEvents().length
        }),
        { until: (n) => n > 0, timeoutMs: Math.max(0, 5_000 - (Date.now() - sent)), intervalMs: 10 }
      )
      for (const p1 of reads) {
        if (p1.status === "Paid") expect(p1.paidAt, `a read said Paid with paidAt null: ${JSON.stringify(p1)}`).not.toBeNull()
        else expect(p1).toMatchObject({ status: "Open", paidKobo: 0, paidAt: null })
      }
      const deliveredMs = Date.now() - sent
      expect(deliveredMs).toBeLessThan(5_000)
      const [delivered] = paidEvents()
      expect(delivered!.verified).toBe(true)
      expect(delivered!.envelope).toMatchObject({
        type: "billing.period.paid", mode: "test",
        data: { scheduleId: s.id, reference: "now-1", accountRef: "now-1", period: { index: 1, status: "Paid", paidKobo: 10_000, outstandingKobo: 0 } }
      })
      const paidAt = delivered!.envelope.data.period.paidAt as string
      // Billing time is real time here (no sandbox offset): paid between the deposit and its delivery.
      expect(Date.parse(paidAt)).toBeGreaterThanOrEqual(sent - 1_000)
      expect(Date.parse(paidAt)).toBeLessThanOrEqual(Date.now())
      // The first read that said Paid, and every one after, said the same paidAt as the event.
      const now = (yield* periodsOf(t, s.id))[0]!
      expect(now).toMatchObject({ index: 1, status: "Paid", paidKobo: 10_000, outstandingKobo: 0, paidAt })
      for (const r of reads.filter((r) => r.status === "Paid")) expect(r.paidAt).toBe(paidAt)
      expect((yield* eventsOf(s.id)).map((e) => e.short)).toEqual(["paid:1"])

      // The deposit reversed: the period is unpaid at once (derived) with no paidAt, and the consumer clears the
      // stored paidAt too (a later payment stamps its own); the paid event went out once and is not taken back.
      const reversal = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: acc.nuban, amountKobo: 10_000, senderName: null, reversedSessionId: deposit.sessionId })
      expect(reversal.status, JSON.stringify(reversal.body)).toBe(200)
      yield* waitFor("the reversal reconciled", accountOf(t, "now-1"), { until: (a) => a.amountPaidKobo === 0, timeoutMs: 10_000 })
      expect((yield* periodsOf(t, s.id))[0]).toMatchObject({ status: "Open", paidKobo: 0, outstandingKobo: 10_000, paidAt: null })
      const sql = yield* SqlClient.SqlClient
      yield* waitFor(
        "the billing consumer cleared paid_at",
        sql<{ paidAt: Date | null }>`SELECT paid_at FROM billing_periods WHERE schedule_id = ${s.id}`,
        { until: (r) => r[0]!.paidAt === null, timeoutMs: 5_000 }
      )
      expect((yield* eventsOf(s.id)).map((e) => e.short)).toEqual(["paid:1"])
      yield* assertLedgerInvariant
    }))

  it.effect("the sandbox clock answers after it has moved: 35, 65 and 95 days in one advance each, read back at once; events in transition order, each as it was then", () =>
    Effect.gen(function* () {
      yield* clockIsOff
      for (const days of [35, 65, 95]) {
        const t = yield* testTenant
        yield* createAccount(t.token, `jump-${days}`, "Bola Ade")
        // The schedule's anchor is today in Lagos; its due offset is picked so that the advance lands on the last
        // period's due date: that one is Due, every earlier one Overdue (each through Due on the way).
        const anchor = lagosDate(Date.now())
        const target = plusDays(anchor, days)
        let last = 0
        while (monthlyStart(anchor, last + 1) <= target) last++
        const dueOffsetDays = daysFrom(monthlyStart(anchor, last), target)
        const s = yield* createSchedule(t, { accountRef: `jump-${days}`, interval: "Monthly", amountKobo: 10_000, dueOffsetDays, reference: `jump-${days}` })
        const before = yield* periodsOf(t, s.id)
        expect(before.map((p) => p.periodStart), "created on the Lagos day the test read (not across midnight)").toEqual([new Date(lagosMidnight(anchor)).toISOString()])

        const moved = yield* advance(t, days * DAY_S)
        expect(moved.offsetSeconds).toBe(days * DAY_S)
        const today = lagosDate(Date.parse(moved.now))
        expect(today).toBe(target)
        // Straight after the answer: no pass, no wait.
        const want = monthlyPeriods(anchor, dueOffsetDays, today)
        expect(want.length).toBe(last + 1)
        expect(want.map((p) => p.status)).toEqual([...Array<string>(last).fill("Overdue"), "Due"])
        const periods = yield* periodsOf(t, s.id)
        expect(periods.map(({ index, periodStart, periodEnd, dueDate, status }) => ({ index, periodStart, periodEnd, dueDate, status })), `${days} days`).toEqual(want)
        for (const p of periods) expect(p).toMatchObject({ amountKobo: 10_000, paidKobo: 0, outstandingKobo: 10_000, paidAt: null })
        expect((yield* accountOf(t, `jump-${days}`)).expectedAmountKobo).toBe(want.length * 10_000)

        // One advance took period 1 from opened to Due to Overdue: "due:1" then "overdue:1", then the next period's.
        const events = yield* eventsOf(s.id)
        expect(events.map((e) => e.short), `${days} days`).toEqual(transitionsOf(want))
        expect(events.map((e) => e.short).slice(0, 2)).toEqual(["due:1", "overdue:1"])
        for (const e of events) {
          // Each event carries its period as it was at its own transition, though it reads Overdue now.
          expect(e.period.status, `${days} days: ${e.short}`).toBe(STATUS_OF_EVENT[e.type])
          expect(e.period).toMatchObject({ id: periods[e.period.index - 1]!.id, dueDate: periods[e.period.index - 1]!.dueDate, outstandingKobo: 10_000, paidAt: null })
          expect(e.envelope.data).toMatchObject({ scheduleId: s.id, reference: `jump-${days}`, accountRef: `jump-${days}` })
        }
        // A pass afterwards finds nothing left to do for it and sends nothing again.
        yield* Effect.flatMap(Billing, (b) => b.tick())
        expect((yield* eventsOf(s.id)).map((e) => e.short)).toEqual(transitionsOf(want))
      }
      yield* assertLedgerInvariant
    }))

  it.effect("the sandbox clock step by step to 35, 65 and 95 days: each read at once matches the Lagos calendar, each advance adds its own events in order", () =>
    Effect.gen(function* () {
      yield* clockIsOff
      const t = yield* testTenant
      yield* createAccount(t.token, "steps", "Chinedu Okoro")
      const anchor = lagosDate(Date.now())
      const s = yield* createSchedule(t, { accountRef: "steps", interval: "Monthly", amountKobo: 12_500, dueOffsetDays: 5, reference: "steps" })
      expect((yield* periodsOf(t, s.id)).map((p) => p.periodStart)).toEqual([new Date(lagosMidnight(anchor)).toISOString()])
      let seen: ReadonlyArray<string> = []
      for (const [total, step] of [[35, 35], [65, 30], [95, 30]] as const) {
        const moved = yield* advance(t, step * DAY_S)
        expect(moved.offsetSeconds).toBe(total * DAY_S)
        const today = lagosDate(Date.parse(moved.now))
        expect(today).toBe(plusDays(anchor, total))
        const want = monthlyPeriods(anchor, 5, today)
        // 35 days: two periods; 65: three; 95: four (a month is 28 to 31 days). All but the last are Overdue.
        expect(want.length, `${total} days`).toBe(total === 35 ? 2 : total === 65 ? 3 : 4)
        const periods = yield* periodsOf(t, s.id)
        expect(periods.map(({ index, periodStart, periodEnd, dueDate, status }) => ({ index, periodStart, periodEnd, dueDate, status })), `${total} days`).toEqual(want)
        expect(periods.slice(0, -1).every((p) => p.status === "Overdue")).toBe(true)
        expect((yield* accountOf(t, "steps")).expectedAmountKobo).toBe(want.length * 12_500)
        // Exactly the transitions this advance made, after the earlier ones, in order, each with its own status.
        const all = transitionsOf(want)
        expect(all.slice(0, seen.length)).toEqual(seen)
        const events = yield* eventsOf(s.id)
        expect(events.map((e) => e.short), `${total} days`).toEqual(all)
        for (const e of events) expect(e.period.status, `${total} days: ${e.short}`).toBe(STATUS_OF_EVENT[e.type])
        seen = all
      }
      yield* assertLedgerInvariant
    }))
})

// No billing consumer at all (its subscription out of the registry, so deposits stage nothing for it) and no clock: only
// a read can find the period paid, and it must not say Paid without a paidAt.
const withoutBillingConsumer = makeTestApp().pipe(Layer.provide(Layer.succeed(ConsumerRegistry, BUILT_IN.filter((c) => c.name !== "billing"))))

layer(withoutBillingConsumer, { timeout: 120_000, excludeTestServices: true })("the read path alone", (it) => {
  it.effect("the first read that finds a period paid sets its paidAt; later reads and the paid event a later pass sends say the same", () =>
    Effect.gen(function* () {
      yield* clockIsOff
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "read-1", "Ngozi Eze")
      const s = yield* createSchedule(t, { accountRef: "read-1", interval: "Weekly", amountKobo: 4_000, dueOffsetDays: 2, reference: "read-1" })
      const before = Date.now()
      expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 4_000, senderName: "EZE NGOZI" })).status).toBe(200)
      yield* waitFor("the deposit reconciled", accountOf(t, "read-1"), { until: (a) => a.amountPaidKobo === 4_000, timeoutMs: 10_000 })
      const stored = sql<{ paidAt: Date | null; paidNotified: boolean }>`SELECT paid_at, paid_notified FROM billing_periods WHERE schedule_id = ${s.id}`.pipe(
        Effect.orDie,
        Effect.map((r) => r[0]!)
      )
      // Nobody has looked yet.
      expect(yield* stored).toEqual({ paidAt: null, paidNotified: false })

      const first = (yield* periodsOf(t, s.id))[0]!
      expect(first).toMatchObject({ status: "Paid", paidKobo: 4_000, outstandingKobo: 0 })
      expect(first.paidAt).not.toBeNull()
      expect(Date.parse(first.paidAt!)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(first.paidAt!)).toBeLessThanOrEqual(Date.now())
      expect((yield* stored).paidAt?.toISOString()).toBe(first.paidAt)
      expect((yield* periodsOf(t, s.id))[0]!.paidAt).toBe(first.paidAt)
      expect(yield* eventsOf(s.id)).toEqual([])

      // The safety net's pass sends the paid event, with the paidAt the read set.
      yield* Effect.flatMap(Billing, (b) => b.tick())
      const events = yield* eventsOf(s.id)
      expect(events.map((e) => e.short)).toEqual(["paid:1"])
      expect(events[0]!.period).toMatchObject({ status: "Paid", paidAt: first.paidAt })
      expect(yield* stored).toMatchObject({ paidNotified: true })
      expect((yield* periodsOf(t, s.id))[0]!.paidAt).toBe(first.paidAt)
      yield* assertLedgerInvariant
    }))

  it.effect("billing at payment time holds the schedules' rows, not the accounts': a reconcile batch on the account never waits for it; several schedules in one pass, set-wise (issue 33)", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const billing = yield* Billing
      const t = yield* testTenant
      // Three billed accounts that a deposit pays, and a fourth billed account with nothing to do.
      const refs = ["lock-1", "lock-2", "lock-3", "lock-4"]
      const accounts: Array<{ nuban: string }> = []
      const schedules: Array<{ id: string }> = []
      for (const [i, ref] of refs.entries()) {
        accounts.push(yield* createAccount(t.token, ref, `Bola Ade ${"ABCD"[i]}`))
        schedules.push(yield* createSchedule(t, { accountRef: ref, interval: "Weekly", amountKobo: 4_000, dueOffsetDays: 2, reference: ref }))
      }
      for (const acc of accounts.slice(0, 3)) expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 4_000, senderName: "ADE BOLA" })).status).toBe(200)
      for (const ref of refs.slice(0, 3)) yield* waitFor(`${ref} reconciled`, accountOf(t, ref), { until: (a) => a.amountPaidKobo === 4_000, timeoutMs: 10_000 })
      const ids = yield* sql<{ id: string; accountRef: string }>`SELECT id, account_ref FROM virtual_accounts WHERE tenant_id = ${t.tenantId} ORDER BY account_ref`
      // Another connection (outside the pass's transaction) tries each row lock without waiting: "free" or "held".
      const tryLock = (table: "virtual_accounts" | "billing_schedules", id: string) => rowLock(table, "id", id)
      const seen = yield* sql.withTransaction(Effect.gen(function* () {
        // What the billing consumer's pass does for these deposits (the consumer is out of this app's registry).
        expect(yield* billing.syncAccounts(refs.map((accountRef) => ({ tenantId: t.tenantId, mode: "test" as const, accountRef })))).toBe(3)
        const held: Array<string> = []
        for (const [i, s] of schedules.entries()) held.push(`${yield* tryLock("virtual_accounts", ids[i]!.id)}/${yield* tryLock("billing_schedules", s.id)}`)
        return held
      }))
      expect(seen).toEqual(["free/held", "free/held", "free/held", "free/free"])
      for (const s of schedules.slice(0, 3)) expect((yield* eventsOf(s.id)).map((e) => e.short)).toEqual(["paid:1"])
      expect(yield* eventsOf(schedules[3]!.id)).toEqual([])
      // Each paid period says so, with its paidAt, on a read.
      for (const s of schedules.slice(0, 3)) expect((yield* periodsOf(t, s.id))[0]).toMatchObject({ status: "Paid", paidKobo: 4_000 })
      // A second pass finds nothing more to do and sends nothing twice.
      expect(yield* sql.withTransaction(billing.syncAccounts(refs.map((accountRef) => ({ tenantId: t.tenantId, mode: "test" as const, accountRef }))))).toBe(0)
      for (const s of schedules.slice(0, 3)) expect((yield* eventsOf(s.id)).map((e) => e.short)).toEqual(["paid:1"])
      yield* assertLedgerInvariant
    }))
})
