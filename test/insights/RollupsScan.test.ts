import { HttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import * as fc from "fast-check"
import { Billing } from "../../services/billing/Billing.js"
import { NOT_COUNTED_YET } from "../../services/insights/InsightsCursor.js"
import type { BillingInterval } from "../../src/domain/Billing.js"
import {
  collectedContribution, dayOf, dayStartMs, receivablesOf, scheduleDues
} from "../../src/domain/InsightRollups.js"
import {
  AGING_BUCKETS, agingOf, collectionRateBps, forecastWeeks, RISK_BANDS, riskBandOf, RUN_RATE_WINDOW_DAYS
} from "../../src/domain/Insights.js"
import { RECONCILIATION_STATUSES } from "../../src/contract/Insights.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

// The roll-ups against a full scan (issue 21, must show 1): random tenants built through the real pipeline (accounts
// with and without expected amounts and expiry dates, customers sharing an e-mail, deposits over the last five weeks,
// unmatched ones, risky ones held and then approved or rejected, reversals, billing schedules, the sandbox clock moved
// and periods opened), then every insight the API answers from the roll-ups equals the same figure computed here
// from the source tables alone (every account, period, schedule and transaction of the tenant), with the pure
// definitions of src/domain. The customer score's on-time part uses when each receivable was paid, which only the
// roll-ups record; the fixture test (Insights.test.ts) checks scores by hand.

type Tenant = Effect.Effect.Success<typeof testTenant>
const NAMES = ["Ngozi Okafor", "Tunde Bakare", "Aisha Bello", "Emeka Nwosu", "Funke Adeyemi", "Ibrahim Musa"]

const scenario = fc.record({
  accounts: fc.array(fc.record({
    expected: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
    expiryDays: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
    email: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    name: fc.integer({ min: 0, max: NAMES.length - 1 })
  }), { minLength: 1, maxLength: 5 }),
  deposits: fc.array(fc.record({
    account: fc.integer({ min: 0, max: 6 }), // 5: the billed account; past the last account otherwise: an unknown NUBAN
    amount: fc.integer({ min: 1, max: 120_000 }),
    daysAgo: fc.integer({ min: 0, max: 35 }),
    stranger: fc.boolean(), // a payer whose name is not the customer's: a risk signal
    reverse: fc.boolean()
  }), { maxLength: 8 }),
  approve: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  schedule: fc.option(fc.record({
    interval: fc.constantFrom<BillingInterval>("Weekly", "Monthly", "Quarterly", "Yearly"),
    amount: fc.integer({ min: 1, max: 50_000 }),
    dueOffsetDays: fc.integer({ min: 0, max: 10 }),
    expected: fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: undefined })
  }), { nil: undefined, freq: 4 }),
  advanceDays: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined, freq: 3 }),
  range: fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 50 })),
  days: fc.integer({ min: 7, max: 180 })
})
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

const build = (t: Tenant, s: Scenario, runId: string) =>
  Effect.gen(function* () {
    // A low review threshold (an operator setting), so a payer who is not the customer is held for review and then
    // approved (its money collected) or rejected (its credit taken back).
    yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE tenants SET risk_threshold = 30 WHERE id = ${t.tenantId}`)
    const nubans: Array<string> = []
    for (const [i, a] of s.accounts.entries()) {
      const r = yield* call("POST", "/api/v1/virtual-accounts", {
        token: t.token,
        json: {
          accountRef: `scan-${runId}-${i}`, name: NAMES[a.name],
          ...(a.expected === undefined ? {} : { expectedAmountKobo: a.expected }),
          ...(a.expiryDays === undefined ? {} : { expiryDateUtc: new Date(Date.now() + a.expiryDays * 86_400_000).toISOString() }),
          ...(a.email === undefined ? {} : { email: `payer${a.email}-${runId}@example.ng` })
        }
      })
      expectStatus(r, 201)
      nubans.push(r.body.nuban)
    }
    // A billed account: an open account with its schedule, created before any deposit (so it is billable).
    let billed: string | undefined
    if (s.schedule) {
      const r = yield* call("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: `scan-${runId}-billed`, name: "Zainab Billed" } })
      expectStatus(r, 201)
      billed = r.body.nuban
      expectStatus(yield* call("POST", "/api/v1/billing/schedules", {
        token: t.token,
        json: { accountRef: `scan-${runId}-billed`, interval: s.schedule.interval, amountKobo: s.schedule.amount, dueOffsetDays: s.schedule.dueOffsetDays, reference: `sch-${runId}` }
      }), 201)
    }
    const sent: Array<{ sessionId: string; nuban: string; amount: number; reverse: boolean }> = []
    for (const d of s.deposits) {
      const nuban = nubans[d.account] ?? (d.account === 5 && billed !== undefined ? billed : "0000014579")
      const who = d.account < s.accounts.length ? NAMES[s.accounts[d.account]!.name]!.toUpperCase() : nuban === billed ? "ZAINAB BILLED" : "SOMEONE"
      const r = yield* sendSigned(t, {
        accountNumber: nuban, amountKobo: d.amount, senderName: d.stranger ? "ZZ UNRELATED VENTURES" : who,
        paidAt: new Date(Date.now() - d.daysAgo * 86_400_000).toISOString()
      })
      expect(r.status).toBe(200)
      sent.push({ sessionId: r.sessionId, nuban, amount: d.amount, reverse: d.reverse })
    }
    yield* waitForTransactions(t.tenantId, sent.length)
    let count = sent.length
    for (const d of sent.filter((x) => x.reverse && x.nuban !== "0000014579").slice(0, 2)) {
      const r = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: d.nuban, amountKobo: Math.max(1, Math.floor(d.amount / 2)), reversedSessionId: d.sessionId })
      expect(r.status).toBe(200)
      count += 1
    }
    yield* waitForTransactions(t.tenantId, count)
    const held = (yield* call("GET", "/api/v1/transactions?status=PendingReview&take=100", { token: t.token })).body.data as Array<{ reference: string }>
    for (const [i, x] of held.entries()) {
      const r = yield* call("POST", `/api/v1/transactions/${x.reference}/review`, {
        token: t.testOwnerToken, json: { decision: s.approve[i % s.approve.length] ? "approve" : "reject" }
      })
      expect([200, 400, 409]).toContain(r.status)
    }
    if (s.schedule?.expected !== undefined) {
      // The next period's amount changed (its dues projected again).
      const list = (yield* call("GET", "/api/v1/billing/schedules", { token: t.token })).body.data as Array<{ id: string }>
      expectStatus(yield* call("PUT", `/api/v1/billing/schedules/${list[0]!.id}/next-amount`, { token: t.token, json: { amountKobo: s.schedule.expected } }), 200)
    }
    if (s.advanceDays !== undefined) {
      expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: s.advanceDays * 86_400 } }), 200)
      yield* Effect.flatMap(Billing, (b) => b.tick())
    }
  })

/** Until the insights consumer has nothing pending for the tenant (bounded). */
const settled = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      "the insights consumer to have nothing pending: no event, and no transaction past its cursor",
      sql<{ n: number }>`SELECT (SELECT count(*) FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
          WHERE p.consumer = 'insights' AND o.tenant_id = ${tenantId})
        + (SELECT count(*) FROM transactions t WHERE t.tenant_id = ${tenantId} AND ${sql.literal(NOT_COUNTED_YET)})::int AS n`.pipe(Effect.map((r) => Number(r[0]!.n))),
      { until: (n) => n === 0, timeoutMs: 30_000 }
    ))

/** Every figure, computed from the source tables alone. */
const scan = (tenantId: string, nowMs: number, days: number, range: { lo: number; hi: number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* sql<{ id: string; customerId: string; accountRef: string; expectedAmountKobo: number | null; amountPaidKobo: number; createdAt: Date; expiryDateUtc: Date | null }>`
      SELECT id, customer_id, account_ref, expected_amount_kobo, amount_paid_kobo, created_at, expiry_date_utc FROM virtual_accounts
      WHERE tenant_id = ${tenantId} AND mode = 'test' AND status = 'Active' ORDER BY created_at, id`
    const periods = yield* sql<{ accountId: string; amountKobo: number; dueAt: Date }>`
      SELECT s.virtual_account_id AS account_id, p.amount_kobo, p.due_at FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id
      WHERE s.tenant_id = ${tenantId} AND p.amount_kobo > 0 ORDER BY s.created_at, s.id, p.index`
    const schedules = yield* sql<{ id: string; status: "Active" | "Paused" | "Cancelled"; interval: BillingInterval; anchorDate: string; dueOffsetDays: number; amountKobo: number; nextAmountKobo: number | null; nextK: number }>`
      SELECT id, status, interval, anchor_date::text AS anchor_date, due_offset_days, amount_kobo, next_amount_kobo, next_k FROM billing_schedules WHERE tenant_id = ${tenantId}`
    const opened = yield* sql<{ scheduleId: string; amountKobo: number; dueAt: Date }>`
      SELECT p.schedule_id, p.amount_kobo, p.due_at FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id
      WHERE s.tenant_id = ${tenantId} AND NOT p.cancelled AND p.amount_kobo > 0`
    const txs = yield* sql<{ kind: "inflow" | "reversal"; status: "Completed" | "PendingReview" | "Rejected" | "Reversed"; virtualAccountId: string | null; amountKobo: number; reconciliationStatus: string; riskScore: number; paidAt: Date }>`
      SELECT kind, status, virtual_account_id, amount_kobo, reconciliation_status, risk_score, paid_at FROM transactions WHERE tenant_id = ${tenantId} AND mode = 'test'`
    const customers = yield* sql<{ id: string; name: string; email: string | null }>`SELECT id, name, email FROM customers WHERE tenant_id = ${tenantId} AND mode = 'test'`

    const receivables = accounts.flatMap((a) => receivablesOf({
      expectedKobo: a.expectedAmountKobo === null ? null : Number(a.expectedAmountKobo), amountPaidKobo: Number(a.amountPaidKobo),
      createdAtMs: a.createdAt.getTime(), expiryMs: a.expiryDateUtc?.getTime() ?? null
    }, periods.filter((p) => p.accountId === a.id).map((p) => ({ amountKobo: Number(p.amountKobo), dueAtMs: p.dueAt.getTime() })))
      .map((r) => ({ ...r, account: a })))
    const overviewOf = (lo: number, hi: number) => {
      const due = receivables.filter((r) => r.dueDay >= lo && r.dueDay <= hi)
      const expectedKobo = due.reduce((s, r) => s + r.amountKobo, 0)
      const collectedKobo = due.reduce((s, r) => s + r.collectedKobo, 0)
      const inRange = txs.filter((x) => dayOf(x.paidAt.getTime()) >= lo && dayOf(x.paidAt.getTime()) <= hi)
      const bands = Object.fromEntries(RISK_BANDS.map((b) => [b, inRange.filter((x) => riskBandOf(x.riskScore) === b).length]))
      return {
        collectionRateBps: collectionRateBps(collectedKobo, expectedKobo), expectedKobo, collectedKobo, outstandingDeficitKobo: expectedKobo - collectedKobo,
        reconciliation: Object.fromEntries(RECONCILIATION_STATUSES.map((s) => {
          const of = inRange.filter((x) => x.reconciliationStatus === s)
          return [s, { count: of.length, amountKobo: of.reduce((sum, x) => sum + Number(x.amountKobo), 0) }]
        })),
        risk: { pendingReview: inRange.filter((x) => x.status === "PendingReview").length, highRisk: bands.high, bands }
      }
    }
    const today = dayOf(nowMs)
    const aging = agingOf(receivables.map((r) => ({ outstandingKobo: r.amountKobo - r.collectedKobo, dueMs: dayStartMs(r.dueDay) })), nowMs)
    const scheduled = schedules.flatMap((s) => {
      const [y, m, d] = s.anchorDate.split("-").map(Number) as [number, number, number]
      return scheduleDues({
        status: s.status, interval: s.interval, anchor: { y, m, d }, dueOffsetDays: s.dueOffsetDays, amountKobo: Number(s.amountKobo),
        nextAmountKobo: s.nextAmountKobo === null ? null : Number(s.nextAmountKobo), nextK: s.nextK,
        opened: opened.filter((p) => p.scheduleId === s.id).map((p) => ({ amountKobo: Number(p.amountKobo), dueAtMs: p.dueAt.getTime() }))
      }, today)
    })
    const trailing = txs.filter((x) => dayOf(x.paidAt.getTime()) > today - RUN_RATE_WINDOW_DAYS && dayOf(x.paidAt.getTime()) <= today)
      .reduce((s, x) => s + collectedContribution({ kind: x.kind, status: x.status, matched: x.virtualAccountId !== null, amountKobo: Number(x.amountKobo) }), 0)
    const weeks = forecastWeeks(days, nowMs, scheduled.map((d) => ({ dueMs: dayStartMs(d.day), amountKobo: d.amountKobo })), Math.max(0, trailing))
    const byCustomer = new Map<string, { expectedKobo: number; outstandingKobo: number }>()
    for (const r of receivables) {
      const c = byCustomer.get(r.account.customerId) ?? { expectedKobo: 0, outstandingKobo: 0 }
      c.expectedKobo += r.amountKobo
      c.outstandingKobo += r.amountKobo - r.collectedKobo
      byCustomer.set(r.account.customerId, c)
    }
    const customerRows = [...byCustomer.entries()].filter(([, c]) => c.expectedKobo > 0)
      .sort((a, b) => b[1].outstandingKobo - a[1].outstandingKobo || (a[0] < b[0] ? -1 : 1))
      .map(([id, c]) => {
        const cu = customers.find((x) => x.id === id)!
        return {
          customerName: cu.name, email: cu.email, accountRefs: accounts.filter((a) => a.customerId === id).map((a) => a.accountRef),
          expectedKobo: c.expectedKobo, outstandingKobo: c.outstandingKobo
        }
      })
    return {
      overview: overviewOf(-1_000_000, 1_000_000), ranged: overviewOf(range.lo, range.hi),
      aging: { buckets: aging, totalOutstandingKobo: aging.reduce((s, b) => s + b.amountKobo, 0) },
      forecast: { days, trailing30DayCollectedKobo: Math.max(0, trailing), weeks },
      customers: customerRows
    }
  })

const pick = <T extends object>(o: any, keys: ReadonlyArray<keyof T & string>) => Object.fromEntries(keys.map((k) => [k, o[k]]))

layer(makeTestApp(), { timeout: 600_000, excludeTestServices: true })("insight roll-ups against a full scan", (it) => {
  it.effect("random tenants: every figure from the roll-ups equals the scan of the source tables", () =>
    Effect.gen(function* () {
      let run = 0
      const check = (s: Scenario) =>
        Effect.gen(function* () {
          run += 1
          const runId = `${run}${Math.random().toString(36).slice(2, 6)}`
          const t = yield* testTenant
          yield* build(t, s, runId)
          yield* settled(t.tenantId)
          const ov = (yield* call("GET", "/api/v1/insights", { token: t.testOwnerToken })).body
          const nowMs = Date.parse(ov.asOf)
          const today = dayOf(nowMs)
          const lo = today - Math.max(...s.range)
          const hi = today - Math.min(...s.range) + 10
          const iso = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10)
          const ranged = (yield* call("GET", `/api/v1/insights?from=${iso(lo)}&to=${iso(hi)}`, { token: t.testOwnerToken })).body
          const aging = (yield* call("GET", "/api/v1/insights/aging", { token: t.testOwnerToken })).body
          const forecast = (yield* call("GET", `/api/v1/insights/forecast?days=${s.days}`, { token: t.testOwnerToken })).body
          const customers = (yield* call("GET", "/api/v1/insights/customers?take=500", { token: t.testOwnerToken })).body
          const want = yield* scan(t.tenantId, nowMs, s.days, { lo, hi })
          const keys = ["collectionRateBps", "expectedKobo", "collectedKobo", "outstandingDeficitKobo", "reconciliation", "risk"] as const
          expect(pick(ov, keys)).toEqual(want.overview)
          expect(pick(ranged, keys)).toEqual(want.ranged)
          expect(aging.buckets.map((b: any) => b.label)).toEqual([...AGING_BUCKETS])
          expect(pick(aging, ["buckets", "totalOutstandingKobo"])).toEqual(want.aging)
          expect(pick(forecast, ["days", "trailing30DayCollectedKobo", "weeks"])).toEqual(want.forecast)
          expect(customers.data.map((c: any) => pick(c, ["customerName", "email", "accountRefs", "expectedKobo", "outstandingKobo"]))).toEqual(want.customers)
        })
      const runtime = yield* Effect.runtime<SqlClient.SqlClient | Billing | HttpClient.HttpClient>()
      yield* Effect.promise(() =>
        fc.assert(fc.asyncProperty(scenario, (s) => Runtime.runPromise(runtime)(check(s))), { numRuns: 14, endOnFailure: true })
      )
      yield* assertLedgerInvariant
    }), 300_000) // 14 tenants through the real pipeline: ~35 s on a quiet machine, several times that beside other suites
})
