import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { lagosDateOf, periodCalendar } from "../../src/domain/Billing.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { atProcess } from "../support/Crash.js"
import { assertLedgerInvariant, createAccount, testTenant } from "../support/Pipeline.js"
import { freePort, type Service, startService, tempDir } from "../support/Processes.js"
import { call } from "../support/TestApp.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { waitFor } from "../support/Wait.js"

// Two service processes, each running the billing clock every 200 ms, on one database and one NATS prefix (issue 20:
// "a second worker process ... opens each period exactly once and emits each event exactly once"). A tenant with 30
// monthly schedules; its sandbox clock jumps six months at once (seven periods started), then past the seventh's due
// date; both processes race to bring every schedule up to time. Each period opens once (indices 1..7), each period's
// due and overdue event is in the outbox once, due first, and each account expects exactly the sum of its periods.

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const SCHEDULES = "/api/v1/billing/schedules"

const stop = async (s: Service) => {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return
  s.child.kill("SIGTERM")
  const done = await Promise.race([s.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))])
  if (!done) s.child.kill("SIGKILL")
}

/** Enough schedules that the two clocks' passes overlap. */
const SCHEDULE_COUNT = 30
const DUE_OFFSET = 20

describe("billing clock in two service processes", () => {
  it.live("clock jumps of six months, then past a due date, with two workers: each period opened once, each event sent once, expected = the sum of the periods", () =>
    Effect.scoped(Effect.gen(function* () {
      const name = yield* Effect.promise(() => createScratchDatabase("billtwo"))
      yield* Effect.addFinalizer(() => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined)))
      const prefix = `t${crypto.randomBytes(5).toString("hex")}.`
      yield* Effect.addFinalizer(() => deleteTopology({ prefix }).pipe(Effect.provide(NatsLive(NATS_URL)), Effect.timeout("10 seconds"), Effect.ignore))
      const dbUrl = databaseUrl(name)
      const shared = {
        DATABASE_URL: dbUrl, NATS_URL, NATS_PREFIX: prefix, BILLING_INTERVAL_MS: "200", LOG_LEVEL: "Warn",
        // One tenant's tokens and secrets must read the same in both processes.
        TOKEN_SIGNING_KEY: crypto.randomBytes(32).toString("base64url"), DATA_ENCRYPTION_KEY: crypto.randomBytes(32).toString("base64url")
      }
      const start = (i: number) =>
        Effect.acquireRelease(
          Effect.promise(async () => startService({ ...shared, PORT: String(await freePort()), DATA_DIR: tempDir(`billtwo-${i}-`) })),
          (s) => Effect.promise(() => stop(s))
        )
      // One after the other: the first migrates the scratch database.
      const first = yield* start(1)
      const second = yield* start(2)

      const setUp = Effect.gen(function* () {
        const t = yield* testTenant
        const ids: Array<string> = []
        for (let i = 1; i <= SCHEDULE_COUNT; i++) {
          yield* createAccount(t.token, `two-${i}`, `Customer ${i}`)
          const s = yield* call("POST", SCHEDULES, { token: t.token, json: { accountRef: `two-${i}`, interval: "Monthly", amountKobo: 10_000, dueOffsetDays: DUE_OFFSET, reference: `sch-two-${i}` } })
          expectStatus(s, 201)
          // Period 2 expects 7,000; the rest the schedule's 10,000.
          expectStatus(yield* call("PUT", `${SCHEDULES}/${s.body.id}/next-amount`, { token: t.token, json: { amountKobo: 7_000 } }), 200)
          ids.push(s.body.id)
        }
        const p1 = (yield* call("GET", `${SCHEDULES}/${ids[0]}/periods`, { token: t.token })).body.data[0]
        return { t, ids, anchor: lagosDateOf(Date.parse(p1.periodStart)) }
      })
      const { t, ids, anchor } = yield* setUp.pipe(Effect.provide(atProcess(first.baseUrl, dbUrl)))
      const seventh = periodCalendar(anchor, "Monthly", 7, DUE_OFFSET)
      // The seventh period is still open when it goes overdue (due 20 days after its start, the next starts 28+ on).
      expect(seventh.overdueAtMs).toBeLessThan(seventh.endMs)

      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        /** Moves the tenant's sandbox time to just after `targetMs` (through the second process). */
        const advanceTo = (targetMs: number) =>
          Effect.gen(function* () {
            const clock = yield* call("GET", "/api/v1/sandbox/clock", { token: t.token })
            const seconds = Math.ceil((targetMs + 3_600_000 - Date.parse(clock.body.now)) / 1000)
            const r = yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds } })
            expectStatus(r, 200)
            expect(Date.parse(r.body.now)).toBeGreaterThan(targetMs)
          })
        const periodCount = sql<{ n: number }>`SELECT count(*)::int AS n FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id
          WHERE s.tenant_id = ${t.tenantId}`.pipe(Effect.map((r) => r[0]!.n))
        const events = sql<{ id: number; eventType: string; index: number; scheduleId: string }>`SELECT id, event_type,
            (envelope->'data'->'period'->>'index')::int AS index, envelope->'data'->>'scheduleId' AS schedule_id
          FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type LIKE 'billing.period.%' ORDER BY id`
        const atLeast = (n: number) => ({ until: (got: number) => got >= n, timeoutMs: 60_000, intervalMs: 100 })

        // Jump 1: six months and an hour on (periods 1 to 7 have started). Both clocks race to open them.
        yield* advanceTo(seventh.startMs)
        yield* waitFor("periods", periodCount, atLeast(SCHEDULE_COUNT * 7))
        yield* waitFor("due and overdue of periods 1 to 6", Effect.map(events, (e) => e.length), atLeast(SCHEDULE_COUNT * 6 * 2))
        const open = yield* call("GET", `${SCHEDULES}/${ids[0]}/periods?take=100`, { token: t.token })
        expect(open.body.data.map((p: any) => p.status)).toEqual(["Open", ...Array<string>(6).fill("Overdue")])
        // Jump 2: past the seventh period's due date (due and overdue at once; no period opens). Only the row locks keep
        // the two clocks from both sending these: no unique index stands behind an event.
        yield* advanceTo(seventh.overdueAtMs)
        yield* waitFor("due and overdue of periods 1 to 7", Effect.map(events, (e) => e.length), atLeast(SCHEDULE_COUNT * 7 * 2))
        // Several more passes of both clocks (200 ms each) before the counts: still nothing twice.
        yield* Effect.sleep("1500 millis")

        // Each period exactly once per schedule: indices 1..7, their amounts 10,000, 7,000, then 10,000.
        const rows = yield* sql<{ scheduleId: string; indices: Array<number>; amounts: Array<number> }>`SELECT p.schedule_id,
            array_agg(p.index ORDER BY p.index) AS indices, array_agg(p.amount_kobo::int ORDER BY p.index) AS amounts
          FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id WHERE s.tenant_id = ${t.tenantId} GROUP BY p.schedule_id`
        expect(rows.map((r) => r.scheduleId).sort()).toEqual([...ids].sort())
        for (const r of rows) {
          expect(r.indices, r.scheduleId).toEqual([1, 2, 3, 4, 5, 6, 7])
          expect(r.amounts, r.scheduleId).toEqual([10_000, 7_000, 10_000, 10_000, 10_000, 10_000, 10_000])
        }
        const schedules = yield* sql<{ periodsOpened: number; nextK: number }>`SELECT periods_opened, next_k FROM billing_schedules WHERE tenant_id = ${t.tenantId}`
        expect(schedules.every((s) => s.periodsOpened === 7 && s.nextK === 7)).toBe(true)

        // Each period's due and overdue exactly once, due first; nothing else.
        const sent = yield* events
        expect(sent).toHaveLength(SCHEDULE_COUNT * 7 * 2)
        for (const id of ids) {
          for (let i = 1; i <= 7; i++) {
            const mine = sent.filter((e) => e.scheduleId === id && e.index === i).map((e) => e.eventType)
            expect(mine, `${id} period ${i}`).toEqual(["billing.period.due", "billing.period.overdue"])
          }
        }

        // Each account expects exactly what its periods expect (it expected nothing before: an open account).
        const accounts = yield* sql<{ expected: number; periods: number }>`SELECT va.expected_amount_kobo AS expected,
            (SELECT sum(p.amount_kobo) FROM billing_periods p WHERE p.schedule_id = s.id)::bigint AS periods
          FROM billing_schedules s JOIN virtual_accounts va ON va.id = s.virtual_account_id WHERE s.tenant_id = ${t.tenantId}`
        expect(accounts).toHaveLength(SCHEDULE_COUNT)
        for (const a of accounts) expect(a).toEqual({ expected: 67_000, periods: 67_000 })
        const va = yield* call("GET", "/api/v1/virtual-accounts/two-1", { token: t.token })
        expectStatus(va, 200)
        expect(va.body).toMatchObject({ expectedAmountKobo: 67_000, amountPaidKobo: 0 })
        yield* assertLedgerInvariant
      }).pipe(Effect.provide(atProcess(second.baseUrl, dbUrl)))

      // Both processes ran their billing clock and are still up.
      for (const s of [first, second]) expect(s.child.exitCode, s.output()).toBeNull()
    })), 240_000)
})
