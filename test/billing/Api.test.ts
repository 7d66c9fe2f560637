import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Billing } from "../../services/billing/Billing.js"
import { approve, dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { type Answer, apiToken, call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

// Recurring billing over real HTTP (issue 20; DESIGN.md "Recurring billing" and its wire shapes): create and its
// refusals, idempotent references, one live schedule per account, lists and pages, tenant and mode isolation, who may
// change a schedule, and the sandbox clock (one tenant's test-mode billing time only; live mode never moves).

const SCHEDULES = "/api/v1/billing/schedules"
const DAY_S = 86_400
const DAY_MS = DAY_S * 1000
const LAGOS_MS = 3_600_000

type Tenant = Effect.Effect.Success<typeof testTenant>

const createSchedule = (token: string, json: unknown) => call("POST", SCHEDULES, { token, json })
const periodsOf = (token: string, id: string, query = "") => call("GET", `${SCHEDULES}/${id}/periods${query}`, { token })
const account = (token: string, ref: string) =>
  Effect.map(call("GET", `/api/v1/virtual-accounts/${ref}`, { token }), (r) => {
    expectStatus(r, 200)
    return r.body as { expectedAmountKobo: number | null; amountPaidKobo: number; paymentState: string; nuban: string }
  })

/** The Lagos calendar date (YYYY-MM-DD) of an instant, and the instant of a Lagos date's midnight. */
const lagosDate = (ms: number) => new Date(ms + LAGOS_MS).toISOString().slice(0, 10)
const lagosMidnight = (date: string) => Date.parse(`${date}T00:00:00+01:00`)
const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)

/** The outbox's billing events of a tenant, oldest first, with the period index each names. */
const billingEvents = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ eventType: string; mode: string; data: any }>`SELECT event_type, mode, envelope->'data' AS data FROM outbox
      WHERE tenant_id = ${tenantId} AND event_type LIKE 'billing.period.%' ORDER BY id`).pipe(
    Effect.orDie,
    Effect.map((rows) => rows.map((r) => ({ type: r.eventType, mode: r.mode, index: r.data.period.index as number, data: r.data })))
  )

/** A deposit into the account, waited for until reconciled (`count` transactions of the tenant in all). */
const deposit = (t: Tenant, nuban: string, amountKobo: number, count: number) =>
  Effect.gen(function* () {
    const r = yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName: "EZE AMAKA" })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    yield* waitForTransactions(t.tenantId, count)
  })

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("billing schedules over HTTP", (it) => {
  it.effect("create: 201 with the wire shape, the first period opened at once, the account's expected amount raised by it", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "c-open", "Amaka Eze")
      const r = yield* createSchedule(t.token, {
        accountRef: "c-open", interval: "monthly", amountKobo: 25_000, dueOffsetDays: 5, description: "Tuition, term 1", reference: "sch-c-1"
      })
      expectStatus(r, 201)
      expect(r.contentType).toMatch(/^application\/json/)
      const s = r.body
      // DESIGN.md's schedule fields, and the mode every resource answers.
      expect(Object.keys(s).sort()).toEqual(
        ["id", "accountRef", "interval", "amountKobo", "dueOffsetDays", "description", "reference", "status", "nextPeriodStart", "nextAmountKobo", "createdAt", "mode"].sort()
      )
      expect(s).toMatchObject({
        accountRef: "c-open", interval: "Monthly", amountKobo: 25_000, dueOffsetDays: 5, description: "Tuition, term 1", reference: "sch-c-1",
        status: "Active", nextAmountKobo: 25_000, mode: "test"
      })
      expect(s.id).toMatch(/^bs_/)
      expect(new Date(s.createdAt).toISOString()).toBe(s.createdAt)
      // Period 1 starts at today's Lagos midnight; the next at the same day next month.
      const today = lagosDate(Date.parse(s.createdAt))
      const p = yield* periodsOf(t.token, s.id)
      expectStatus(p, 200)
      expect(p.body.hasMore).toBe(false)
      expect(p.body.data).toHaveLength(1)
      const p1 = p.body.data[0]
      expect(Object.keys(p1).sort()).toEqual(
        ["id", "scheduleId", "index", "periodStart", "periodEnd", "dueDate", "amountKobo", "paidKobo", "outstandingKobo", "status", "paidAt"].sort()
      )
      expect(p1).toMatchObject({
        scheduleId: s.id, index: 1, periodStart: new Date(lagosMidnight(today)).toISOString(), periodEnd: s.nextPeriodStart,
        dueDate: plusDays(today, 5), amountKobo: 25_000, paidKobo: 0, outstandingKobo: 25_000, status: "Open", paidAt: null
      })
      const [y, m, d] = today.split("-").map(Number) as [number, number, number]
      const monthEnd = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
      const nextStart = `${new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 7)}-${String(Math.min(d, monthEnd)).padStart(2, "0")}`
      expect(s.nextPeriodStart).toBe(new Date(lagosMidnight(nextStart)).toISOString())
      // An open account (no expected amount, nothing paid) now expects period 1.
      expect(yield* account(t.token, "c-open")).toMatchObject({ expectedAmountKobo: 25_000, amountPaidKobo: 0, paymentState: "AwaitingPayment" })
      // GET answers the same schedule.
      const got = yield* call("GET", `${SCHEDULES}/${s.id}`, { token: t.token })
      expectStatus(got, 200)
      expect(got.body).toEqual(s)

      // A fully paid account: the period's amount is added to what it already expected.
      const paid = yield* createAccount(t.token, "c-paid", "Bola Ade", 10_000)
      yield* deposit(t, paid.nuban, 10_000, 1)
      expect((yield* account(t.token, "c-paid")).paymentState).toBe("FullyPaid")
      const w = yield* createSchedule(t.token, { accountRef: "c-paid", interval: "WEEKLY", amountKobo: 4_000, reference: "sch-c-2" })
      expectStatus(w, 201)
      expect(w.body).toMatchObject({ interval: "Weekly", dueOffsetDays: 0, description: null, nextAmountKobo: 4_000 })
      const wp = (yield* periodsOf(t.token, w.body.id)).body.data
      expect(wp).toHaveLength(1)
      expect(Date.parse(wp[0].periodEnd) - Date.parse(wp[0].periodStart)).toBe(7 * DAY_MS)
      expect(wp[0].periodEnd).toBe(w.body.nextPeriodStart)
      // Due today (offset 0): the old money paid the old expected amount, not this period.
      expect(wp[0]).toMatchObject({ index: 1, dueDate: today, amountKobo: 4_000, paidKobo: 0, outstandingKobo: 4_000, status: "Due" })
      expect(yield* account(t.token, "c-paid")).toMatchObject({ expectedAmountKobo: 14_000, amountPaidKobo: 10_000, paymentState: "PartiallyPaid" })
      yield* assertLedgerInvariant
    }))

  it.effect("400 for an unknown interval (listing the allowed ones), amounts that are not integer kobo, dueOffsetDays out of 0..365, unknown fields; 404 unknown account", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "v-1", "Amaka Eze")
      const good = { accountRef: "v-1", interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 3, reference: "sch-v" }
      const bad = (patch: Record<string, unknown>) => createSchedule(t.token, { ...good, ...patch })

      const daily = yield* bad({ interval: "daily" })
      expectProblem(daily, 400, daily.body.code)
      for (const word of ["Weekly", "Monthly", "Quarterly", "Yearly"]) expect(daily.body.message).toContain(word)
      for (const amountKobo of [100.5, "10000", 0]) {
        const r = yield* bad({ amountKobo })
        expectProblem(r, 400, r.body.code)
        expect(r.body.message, JSON.stringify(r.body)).toMatch(/integer kobo/)
      }
      for (const dueOffsetDays of [-1, 366, 2.5]) {
        const r = yield* bad({ dueOffsetDays })
        expectProblem(r, 400, r.body.code)
        expect(r.body.message, JSON.stringify(r.body)).toMatch(/dueOffsetDays/)
      }
      expectProblem(yield* bad({ amount: 10_000 }), 400, "unknown_field")
      expectProblem(yield* bad({ accountRef: "nobody" }), 404, "virtual_account_not_found")
      // Another tenant's account is unknown here.
      const other = yield* testTenant
      yield* createAccount(other.token, "theirs", "Bola Ade")
      expectProblem(yield* bad({ accountRef: "theirs" }), 404, "virtual_account_not_found")
      // Nothing was made, and the account expects nothing.
      expect((yield* call("GET", SCHEDULES, { token: t.token })).body.data).toEqual([])
      expect((yield* account(t.token, "v-1")).expectedAmountKobo).toBeNull()
      // The edges are accepted.
      expectStatus(yield* bad({ dueOffsetDays: 365, amountKobo: 1 }), 201)
      yield* assertLedgerInvariant
    }))

  it.effect("reference is idempotent (same body 200, same schedule; different body 409 reference_reused); one live schedule per account (409 schedule_exists, allowed again after cancel)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const body = { accountRef: "i-1", interval: "Quarterly", amountKobo: 30_000, dueOffsetDays: 10, description: "Rent", reference: "sch-i" }
      yield* createAccount(t.token, "i-1", "Amaka Eze")
      yield* createAccount(t.token, "i-2", "Bola Ade")
      const first = yield* createSchedule(t.token, body)
      expectStatus(first, 201)
      const again = yield* createSchedule(t.token, { ...body, interval: "QUARTERLY" })
      expectStatus(again, 200)
      expect(again.body).toEqual(first.body)
      // Once: one period, the amount added once.
      expect((yield* periodsOf(t.token, first.body.id)).body.data).toHaveLength(1)
      expect((yield* account(t.token, "i-1")).expectedAmountKobo).toBe(30_000)
      for (const patch of [{ amountKobo: 30_001 }, { interval: "Monthly" }, { dueOffsetDays: 11 }, { description: "Other" }, { accountRef: "i-2" }]) {
        expectProblem(yield* createSchedule(t.token, { ...body, ...patch }), 409, "reference_reused")
      }
      expect((yield* account(t.token, "i-2")).expectedAmountKobo).toBeNull()

      // A second schedule on the same account, under another reference.
      const second = { ...body, reference: "sch-i-2" }
      expectProblem(yield* createSchedule(t.token, second), 409, "schedule_exists")
      // Paused still counts.
      expectStatus(yield* call("POST", `${SCHEDULES}/${first.body.id}/pause`, { token: t.token }), 200)
      expectProblem(yield* createSchedule(t.token, second), 409, "schedule_exists")
      const cancelled = yield* call("POST", `${SCHEDULES}/${first.body.id}/cancel`, { token: t.token })
      expectStatus(cancelled, 200)
      expect(cancelled.body).toMatchObject({ status: "Cancelled", nextPeriodStart: null })
      // The cancelled period's amount left the account: it is open again, as it was, and takes deposits.
      expect(yield* account(t.token, "i-1")).toMatchObject({ expectedAmountKobo: null, amountPaidKobo: 0, paymentState: "Open" })
      // ... and it may be billed again.
      const after = yield* createSchedule(t.token, second)
      expectStatus(after, 201)
      expect(after.body.id).not.toBe(first.body.id)
      expect((yield* account(t.token, "i-1")).expectedAmountKobo).toBe(30_000)
      // The first reference still answers the cancelled schedule.
      const replay = yield* createSchedule(t.token, body)
      expectStatus(replay, 200)
      expect(replay.body).toMatchObject({ id: first.body.id, status: "Cancelled" })
      yield* assertLedgerInvariant
    }))

  it.effect("409 account_not_billable for an account AwaitingPayment or PartiallyPaid; an Open account's earlier money does not pay period 1", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const owing = yield* createAccount(t.token, "nb-1", "Amaka Eze", 50_000)
      const make = (accountRef: string, reference: string) =>
        createSchedule(t.token, { accountRef, interval: "Monthly", amountKobo: 10_000, dueOffsetDays: 7, reference })
      expectProblem(yield* make("nb-1", "sch-nb-1"), 409, "account_not_billable")
      yield* deposit(t, owing.nuban, 20_000, 1)
      expect((yield* account(t.token, "nb-1")).paymentState).toBe("PartiallyPaid")
      expectProblem(yield* make("nb-1", "sch-nb-1"), 409, "account_not_billable")
      expect(yield* account(t.token, "nb-1")).toMatchObject({ expectedAmountKobo: 50_000, amountPaidKobo: 20_000 })

      // An open account that was paid before: the earlier 7,500 is not period 1's.
      const open = yield* createAccount(t.token, "nb-open", "Bola Ade")
      yield* deposit(t, open.nuban, 7_500, 2)
      expect(yield* account(t.token, "nb-open")).toMatchObject({ expectedAmountKobo: null, amountPaidKobo: 7_500, paymentState: "Open" })
      const s = yield* make("nb-open", "sch-nb-open")
      expectStatus(s, 201)
      const p1 = (yield* periodsOf(t.token, s.body.id)).body.data
      expect(p1).toHaveLength(1)
      expect(p1[0]).toMatchObject({ index: 1, amountKobo: 10_000, paidKobo: 0, outstandingKobo: 10_000, status: "Open" })
      expect(yield* account(t.token, "nb-open")).toMatchObject({ expectedAmountKobo: 17_500, amountPaidKobo: 7_500 })
      // Money paid after the schedule began pays it.
      yield* deposit(t, open.nuban, 6_000, 3)
      expect((yield* periodsOf(t.token, s.body.id)).body.data[0]).toMatchObject({ paidKobo: 6_000, outstandingKobo: 4_000, status: "Open" })
      yield* deposit(t, open.nuban, 4_000, 4)
      expect((yield* periodsOf(t.token, s.body.id)).body.data[0]).toMatchObject({ paidKobo: 10_000, outstandingKobo: 0, status: "Paid" })
      yield* assertLedgerInvariant
    }))

  it.effect("list: most recent first, take and startingAfter; get: 404 for unknown, another tenant's and another mode's", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const ids: Array<string> = []
      for (const n of [1, 2, 3]) {
        yield* createAccount(t.token, `l-${n}`, `Customer ${n}`)
        const r = yield* createSchedule(t.token, { accountRef: `l-${n}`, interval: "Weekly", amountKobo: 1_000 * n, reference: `sch-l-${n}` })
        expectStatus(r, 201)
        ids.push(r.body.id)
      }
      const all = yield* call("GET", SCHEDULES, { token: t.token })
      expectStatus(all, 200)
      expect(all.body.data.map((s: any) => s.id)).toEqual([...ids].reverse())
      expect(all.body.hasMore).toBe(false)
      const page1 = yield* call("GET", `${SCHEDULES}?take=2`, { token: t.token })
      expect(page1.body.data.map((s: any) => s.id)).toEqual([ids[2], ids[1]])
      expect(page1.body.hasMore).toBe(true)
      const page2 = yield* call("GET", `${SCHEDULES}?take=2&startingAfter=${ids[1]}`, { token: t.token })
      expect(page2.body.data.map((s: any) => s.id)).toEqual([ids[0]])
      expect(page2.body.hasMore).toBe(false)
      expectProblem(yield* call("GET", `${SCHEDULES}?startingAfter=bs_nope`, { token: t.token }), 400, "unknown_starting_after")

      expectProblem(yield* call("GET", `${SCHEDULES}/bs_nope`, { token: t.token }), 404, "schedule_not_found")
      expectProblem(yield* periodsOf(t.token, "bs_nope"), 404, "schedule_not_found")
      // Another tenant sees none of it and cannot change it.
      const other = yield* testTenant
      expect((yield* call("GET", SCHEDULES, { token: other.token })).body.data).toEqual([])
      expectProblem(yield* call("GET", `${SCHEDULES}/${ids[0]}`, { token: other.token }), 404, "schedule_not_found")
      expectProblem(yield* periodsOf(other.token, ids[0]!), 404, "schedule_not_found")
      for (const action of ["pause", "resume", "cancel"]) {
        expectProblem(yield* call("POST", `${SCHEDULES}/${ids[0]}/${action}`, { token: other.token }), 404, "schedule_not_found")
      }
      expectProblem(yield* call("PUT", `${SCHEDULES}/${ids[0]}/next-amount`, { token: other.token, json: { amountKobo: 5 } }), 404, "schedule_not_found")
      // Live mode (the Owner's live dashboard token, then a live key) sees none of the test schedules.
      yield* approve(t.tenantId)
      const live = yield* apiToken(t.ownerToken, "live")
      for (const token of [t.ownerToken, live.token]) {
        expect((yield* call("GET", SCHEDULES, { token })).body.data).toEqual([])
        expectProblem(yield* call("GET", `${SCHEDULES}/${ids[0]}`, { token }), 404, "schedule_not_found")
        expectProblem(yield* periodsOf(token, ids[0]!), 404, "schedule_not_found")
      }
      expectProblem(yield* call("POST", `${SCHEDULES}/${ids[0]}/cancel`, { token: live.token }), 404, "schedule_not_found")
      // ... and the test account's ref is unknown in live mode.
      expectProblem(yield* createSchedule(live.token, { accountRef: "l-1", interval: "Weekly", amountKobo: 1_000, reference: "sch-live" }), 404, "virtual_account_not_found")
      // Still Active in test mode.
      expect((yield* call("GET", `${SCHEDULES}/${ids[0]}`, { token: t.token })).body.status).toBe("Active")
      yield* assertLedgerInvariant
    }))

  it.effect("periods: most recent first, take and startingAfter", () =>
    Effect.gen(function* () {
      const billing = yield* Billing
      const t = yield* testTenant
      yield* createAccount(t.token, "p-1", "Amaka Eze")
      const s = yield* createSchedule(t.token, { accountRef: "p-1", interval: "Weekly", amountKobo: 2_000, dueOffsetDays: 2, reference: "sch-p" })
      expectStatus(s, 201)
      // 3 weeks and a day later: periods 1 to 4 have started.
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 22 * DAY_S } }), 200)
      yield* billing.tick()
      const all = (yield* periodsOf(t.token, s.body.id)).body
      expect(all.data.map((p: any) => p.index)).toEqual([4, 3, 2, 1])
      expect(all.data.map((p: any) => p.status)).toEqual(["Open", "Overdue", "Overdue", "Overdue"])
      expect(all.hasMore).toBe(false)
      const first = (yield* periodsOf(t.token, s.body.id, "?take=3")).body
      expect(first.data.map((p: any) => p.index)).toEqual([4, 3, 2])
      expect(first.hasMore).toBe(true)
      const rest = (yield* periodsOf(t.token, s.body.id, `?take=3&startingAfter=${first.data[2].id}`)).body
      expect(rest.data.map((p: any) => p.index)).toEqual([1])
      expect(rest.hasMore).toBe(false)
      for (let i = 0; i < 3; i++) expect(all.data[i].periodStart).toBe(all.data[i + 1].periodEnd)
      expect((yield* account(t.token, "p-1")).expectedAmountKobo).toBe(8_000)
      yield* assertLedgerInvariant
    }))

  it.effect("roles: an API key and a dashboard Owner or Admin change schedules; a Member reads them and gets 403 on every change", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const admin = yield* dashboardUser(t, "Admin")
      const member = yield* dashboardUser(t, "Member")
      const changers = [["api key", t.token], ["Owner", t.testOwnerToken], ["Admin", admin.token]] as const
      for (const [who, token] of changers) {
        const ref = `r-${who.replace(" ", "-")}`
        yield* createAccount(t.token, ref, `Customer ${who}`)
        const s = yield* createSchedule(token, { accountRef: ref, interval: "Monthly", amountKobo: 5_000, reference: `sch-${ref}` })
        expectStatus(s, 201)
        expect(s.body.mode).toBe("test")
        const path = `${SCHEDULES}/${s.body.id}`
        const next = yield* call("PUT", `${path}/next-amount`, { token, json: { amountKobo: 6_000 } })
        expectStatus(next, 200)
        expect(next.body).toMatchObject({ amountKobo: 5_000, nextAmountKobo: 6_000 })
        expect((yield* call("POST", `${path}/pause`, { token })).body.status).toBe("Paused")
        expect((yield* call("POST", `${path}/resume`, { token })).body.status).toBe("Active")
        expect((yield* call("POST", `${path}/cancel`, { token })).body.status).toBe("Cancelled")
      }

      yield* createAccount(t.token, "r-member", "Member's Customer")
      const forbidden = (r: Answer) => expectProblem(r, 403, "insufficient_role")
      forbidden(yield* createSchedule(member.token, { accountRef: "r-member", interval: "Monthly", amountKobo: 5_000, reference: "sch-r-member" }))
      const s = yield* createSchedule(t.token, { accountRef: "r-member", interval: "Monthly", amountKobo: 5_000, reference: "sch-r-member" })
      expectStatus(s, 201)
      const path = `${SCHEDULES}/${s.body.id}`
      for (const action of ["pause", "resume", "cancel"]) forbidden(yield* call("POST", `${path}/${action}`, { token: member.token }))
      forbidden(yield* call("PUT", `${path}/next-amount`, { token: member.token, json: { amountKobo: 6_000 } }))
      // The Member reads all of it.
      const got = yield* call("GET", path, { token: member.token })
      expectStatus(got, 200)
      expect(got.body).toEqual(s.body)
      expect((yield* call("GET", SCHEDULES, { token: member.token })).body.data.map((x: any) => x.id)).toContain(s.body.id)
      expectStatus(yield* periodsOf(member.token, s.body.id), 200)
      // Nothing a Member tried took effect.
      expect((yield* call("GET", path, { token: t.token })).body).toMatchObject({ status: "Active", nextAmountKobo: 5_000 })
      // The Member reads the sandbox clock but may not move it.
      expectStatus(yield* call("GET", "/api/v1/sandbox/clock", { token: member.token }), 200)
      forbidden(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: member.token, json: { seconds: 60 } }))
      expect((yield* call("GET", "/api/v1/sandbox/clock", { token: t.token })).body.offsetSeconds).toBe(0)
      yield* assertLedgerInvariant
    }))

  it.effect("the sandbox clock moves only this tenant's test-mode billing time: periods fall due and overdue with their events; other tenants and live mode stay", () =>
    Effect.gen(function* () {
      const billing = yield* Billing
      const a = yield* testTenant
      const b = yield* testTenant
      const clockOf = (token: string) =>
        Effect.map(call("GET", "/api/v1/sandbox/clock", { token }), (r) => {
          expectStatus(r, 200)
          return r.body as { now: string; offsetSeconds: number; mode: string }
        })
      const before = Date.now()
      const fresh = yield* clockOf(a.token)
      expect(fresh).toMatchObject({ offsetSeconds: 0, mode: "test" })
      expect(Date.parse(fresh.now)).toBeGreaterThanOrEqual(before)
      expect(Date.parse(fresh.now)).toBeLessThanOrEqual(Date.now())

      const schedules: Record<string, string> = {}
      for (const [name, t] of [["a", a], ["b", b]] as const) {
        yield* createAccount(t.token, "sc-1", `Customer ${name}`)
        const s = yield* createSchedule(t.token, { accountRef: "sc-1", interval: "Monthly", amountKobo: 12_000, dueOffsetDays: 15, reference: "sch-sc" })
        expectStatus(s, 201)
        schedules[name] = s.body.id
      }
      // Tenant A's live mode has a monthly schedule too: it must not move.
      yield* approve(a.tenantId)
      const aLive = yield* apiToken(a.ownerToken, "live")
      expectStatus(yield* call("POST", "/api/v1/virtual-accounts", { token: aLive.token, json: { accountRef: "sc-1", name: "Live Customer" } }), 201)
      const live = yield* createSchedule(aLive.token, { accountRef: "sc-1", interval: "Monthly", amountKobo: 12_000, dueOffsetDays: 15, reference: "sch-sc" })
      expectStatus(live, 201)
      expect(live.body.mode).toBe("live")

      // Advance tenant A by 40 days.
      const t0 = Date.now()
      const moved = yield* call("POST", "/api/v1/sandbox/clock/advance", { token: a.token, json: { seconds: 40 * DAY_S } })
      expectStatus(moved, 200)
      expect(moved.body).toMatchObject({ offsetSeconds: 40 * DAY_S, mode: "test" })
      expect(Date.parse(moved.body.now)).toBeGreaterThanOrEqual(t0 + 40 * DAY_MS)
      expect((yield* clockOf(a.token)).offsetSeconds).toBe(40 * DAY_S)
      expect((yield* clockOf(b.token)).offsetSeconds).toBe(0)
      // A dashboard test-mode token reads the same clock.
      expect((yield* clockOf(a.testOwnerToken)).offsetSeconds).toBe(40 * DAY_S)

      yield* billing.tick()
      const aPeriods = (yield* periodsOf(a.token, schedules.a!)).body.data
      expect(aPeriods.map((p: any) => [p.index, p.status])).toEqual([[2, "Open"], [1, "Overdue"]])
      expect(aPeriods[0].periodStart).toBe(aPeriods[1].periodEnd)
      expect((yield* account(a.token, "sc-1")).expectedAmountKobo).toBe(24_000)
      const aEvents = yield* billingEvents(a.tenantId)
      expect(aEvents.map((e) => [e.type, e.mode, e.index])).toEqual([["billing.period.due", "test", 1], ["billing.period.overdue", "test", 1]])
      expect(aEvents[1]!.data).toMatchObject({ scheduleId: schedules.a, reference: "sch-sc", accountRef: "sc-1", period: { index: 1, status: "Overdue", outstandingKobo: 12_000 } })
      expect(aEvents[0]!.data.period).toMatchObject({ id: aPeriods[1].id, dueDate: aPeriods[1].dueDate, amountKobo: 12_000 })
      // Tenant B and tenant A's live mode: still period 1, Open, no events.
      const bPeriods = (yield* periodsOf(b.token, schedules.b!)).body.data
      expect(bPeriods.map((p: any) => [p.index, p.status])).toEqual([[1, "Open"]])
      expect((yield* account(b.token, "sc-1")).expectedAmountKobo).toBe(12_000)
      expect(yield* billingEvents(b.tenantId)).toEqual([])
      const livePeriods = (yield* periodsOf(aLive.token, live.body.id)).body.data
      expect(livePeriods.map((p: any) => [p.index, p.status])).toEqual([[1, "Open"]])
      expect((yield* account(aLive.token, "sc-1")).expectedAmountKobo).toBe(12_000)
      // Another pass sends nothing again.
      yield* billing.tick()
      expect(yield* billingEvents(a.tenantId)).toHaveLength(2)

      // Live mode has no sandbox clock: 403 on both, whether the live dashboard token or a live key.
      for (const token of [a.ownerToken, aLive.token]) {
        expectProblem(yield* call("GET", "/api/v1/sandbox/clock", { token }), 403, "live_key_not_allowed")
        expectProblem(yield* call("POST", "/api/v1/sandbox/clock/advance", { token, json: { seconds: 60 } }), 403, "live_key_not_allowed")
      }
      // Out of bounds: 0, not an integer, over a year.
      for (const seconds of [0, -60, 1.5, "60", 31_622_401]) {
        const r = yield* call("POST", "/api/v1/sandbox/clock/advance", { token: a.token, json: { seconds } })
        expectProblem(r, 400, r.body.code)
        expect(r.body.message, JSON.stringify(r.body)).toMatch(/seconds/)
      }
      expectProblem(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: a.token, json: { seconds: 60, tenantId: b.tenantId } }), 400, "unknown_field")
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: a.token, json: { seconds: 31_622_400 } }), 200)
      expect((yield* clockOf(a.token)).offsetSeconds).toBe(40 * DAY_S + 31_622_400)
      expect((yield* clockOf(b.token)).offsetSeconds).toBe(0)
      yield* assertLedgerInvariant
    }))
})

layer(makeTestApp({ billing: { worker: true, intervalMs: 200 } }), { timeout: 120_000, excludeTestServices: true })("the app's own billing clock", (it) => {
  it.effect("after a sandbox advance, periods open and fall due without the test calling tick", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "w-1", "Amaka Eze")
      const s = yield* createSchedule(t.token, { accountRef: "w-1", interval: "Weekly", amountKobo: 3_000, dueOffsetDays: 2, reference: "sch-w" })
      expectStatus(s, 201)
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 15 * DAY_S } }), 200)
      // Weeks 1 to 3 have started: the worker opens 2 and 3 on its own (polled, bounded).
      const periods = yield* waitFor("3 periods open", Effect.map(periodsOf(t.token, s.body.id), (r) => r.body.data as Array<any>), {
        until: (d) => d.length >= 3,
        timeoutMs: 30_000
      })
      expect(periods.map((p) => [p.index, p.status])).toEqual([[3, "Open"], [2, "Overdue"], [1, "Overdue"]])
      expect((yield* account(t.token, "w-1")).expectedAmountKobo).toBe(9_000)
      // Its events too, once each.
      const events = yield* waitFor("4 billing events", billingEvents(t.tenantId), { until: (e) => e.length >= 4, timeoutMs: 30_000 })
      expect(events.map((e) => `${e.type} ${e.index}`).sort()).toEqual([
        "billing.period.due 1", "billing.period.due 2", "billing.period.overdue 1", "billing.period.overdue 2"
      ])
      yield* assertLedgerInvariant
    }))
})
