import { SqlClient } from "@effect/sql"
import { wakeEverywhere } from "../../services/outbox/CrossProcessWakeups.js"
import { describe, expect, it as plainIt, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import { AutomationHooks, type FiredStep } from "../../services/automation/AutomationHooks.js"
import { runnerOptionsOf, TEST_AUTOMATION } from "../../services/automation/AutomationSettings.js"
import { ACTOR_OPTIONS, actorConsumer } from "../../services/automation/Actor.js"
import { AUTOMATION } from "../../services/outbox/Registry.js"
import { makeConsumerRunner } from "../../services/outbox/Runner.js"
import { replayReconciled } from "../../services/deposits/Replay.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { createAccount } from "../support/Pipeline.js"
import { freePort, type Service, startService, tempDir } from "../support/Processes.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase, TestDatabaseUrl } from "../support/TestDatabase.js"
import { assertLedgerInvariant, balanceOf, type MoneyTenant, testTenant } from "../transfers/support.js"
import { createFlow, createRule, waitForAutomation } from "./support.js"
import { atProcess, holdLock, lockWaiters } from "../support/Crash.js"

// ---------------------------------------------------------------- helpers

/** Polls `query` (one row, column n) until it equals `n` (bounded: 20 s). */
const until = (what: string, query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>, n: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => waitFor(`${what} to be ${n}`, Effect.map(query(sql), (r) => r[0]!.n), { until: (got) => got === n, timeoutMs: 20_000 }))

/** A deposit through the sandbox simulator (the live receiver and reconciler); waits until it is reconciled. */
const simulate = (t: MoneyTenant, accountRef: string, amountKobo: number) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef, amountKobo, senderName: "Adaeze Okafor" } })
    expectStatus(r, 200)
    expect(r.body.result).toBe("processed")
    const reference = r.body.reference as string
    yield* until(`deposit ${reference} reconciled`, (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId} AND reference = ${reference}`, 1)
    return reference
  })

/** Rows of the tenant's events still pending for a consumer. */
const pendingFor = (sql: SqlClient.SqlClient, tenantId: string, consumer: string) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
    WHERE o.tenant_id = ${tenantId} AND p.consumer = ${consumer}`

/** Waits until the planner has written `runs` runs for the tenant and has nothing pending (the actor may be paused). */
const waitForPlanned = (tenantId: string, runs: number) =>
  Effect.zipRight(
    until("runs planned", (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM automation_runs WHERE tenant_id = ${tenantId}`, runs),
    until("planner pending", (sql) => pendingFor(sql, tenantId, "automation"), 0)
  )

/**
 * Everything rules and flows may have done for the tenant: active holds and what they hold, the escrow the balance
 * reports, its events by type, its runs (with their steps), its ledger entries and its deposits' flags.
 */
const snapshot = (t: MoneyTenant, options: { serviceDown?: boolean } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [holds] = yield* sql<{ n: number; heldKobo: number }>`
      SELECT count(*)::int AS n, COALESCE(sum(held_kobo), 0)::int AS held_kobo FROM holds WHERE tenant_id = ${t.tenantId} AND status = 'Held'`
    const events = yield* sql<{ eventType: string; n: number }>`
      SELECT event_type, count(*)::int AS n FROM outbox WHERE tenant_id = ${t.tenantId} GROUP BY 1 ORDER BY 1`
    const runs = yield* sql<{ id: string; source: string; sourceId: string; transactionReference: string; steps: unknown; completed: boolean }>`
      SELECT id, source, source_id, transaction_reference, steps, completed_at IS NOT NULL AS completed
      FROM automation_runs WHERE tenant_id = ${t.tenantId} ORDER BY seq`
    const [ledger] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger_entries WHERE tenant_id = ${t.tenantId}`
    const deposits = yield* sql<{ reference: string; status: string; flagged: boolean; flagReasons: ReadonlyArray<string> }>`
      SELECT reference, status, flagged, flag_reasons FROM transactions WHERE tenant_id = ${t.tenantId} ORDER BY id`
    // While the service is down, the ledger's own escrow figure stands in for its answer.
    const balance = options.serviceDown
      ? (yield* sql<{ heldKobo: number; availableKobo: number }>`
          SELECT -COALESCE(sum(amount_kobo) FILTER (WHERE account LIKE 'escrow:%'), 0)::int AS held_kobo,
            -COALESCE(sum(amount_kobo) FILTER (WHERE account LIKE 'customer_funds:%'), 0)::int AS available_kobo
          FROM ledger_entries WHERE tenant_id = ${t.tenantId}`)[0]!
      : yield* balanceOf(t.token)
    return {
      holds: holds!, escrowKobo: balance.heldKobo as number, availableKobo: balance.availableKobo as number,
      events: Object.fromEntries(events.map((e) => [e.eventType, e.n])), runs, ledgerEntries: ledger!.n, deposits
    }
  }).pipe(Effect.orDie)

/** The runner's per-consumer turn (services/outbox/Runner.ts): whoever holds it, the consumer's passes skip. */
const turnOf = (consumer: string) => `SELECT pg_advisory_lock(hashtextextended('consumer:${consumer}', 0))`

/** Runs `effect` while the consumer cannot take a turn (no pass of it runs anywhere), then lets it go again. */
const pausing = (dbUrl: string, consumer: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(holdLock(dbUrl, turnOf(consumer)), () => effect, (lock) => lock.release)

/** Waits until no pass of the consumer is under way (its turn is free: a pass's transaction has ended). */
const noPassOf = (consumer: string) =>
  until(`a pass of ${consumer} under way`, (sql) =>
    sql.withTransaction(sql<{ n: number }>`
      SELECT (NOT pg_try_advisory_xact_lock(hashtextextended(${`consumer:${consumer}`}, 0)))::int AS n`), 0)

const testDbUrl = Effect.map(TestDatabaseUrl, ({ url }) => Redacted.value(url))

/** The rules and flow of the exactly-once scenarios: every deposit is held, noted, noted again and flagged (4 steps, 3 runs). */
const configure = (t: MoneyTenant) =>
  Effect.gen(function* () {
    const hold = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Hold", priority: 1 })
    const note = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Notify", priority: 2 })
    const flow = yield* createFlow(t.testOwnerToken, { name: "Tell and flag", trigger: "deposit", actions: ["notify", "flag"] })
    return [hold.id, note.id, flow.id] as const
  })

/** What `configure`'s rules and flow leave after `amounts` deposits, each applied exactly once. */
const assertAppliedOnce = (t: MoneyTenant, amounts: ReadonlyArray<number>, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const s = yield* snapshot(t)
    const total = amounts.reduce((a, b) => a + b, 0)
    const n = amounts.length
    expect(s.holds).toEqual({ n, heldKobo: total })
    expect(s.escrowKobo).toBe(total)
    expect(s.availableKobo).toBe(0)
    expect(s.events).toMatchObject({ "deposit.reconciled": n, "rule.notify": n, "flow.notify": n, "transaction.flagged": n, "internal.automation.fired": 3 * n })
    expect(s.runs).toHaveLength(3 * n)
    expect(s.runs.every((r) => r.completed)).toBe(true)
    for (const d of s.deposits) {
      expect(d).toMatchObject({ status: "Completed", flagged: true })
      expect(d.flagReasons).toHaveLength(1)
      // One run per rule and flow for the deposit, with one outcome per action.
      const runs = s.runs.filter((r) => r.transactionReference === d.reference)
      expect(runs.map((r) => r.sourceId)).toEqual(ids)
      expect(runs.map((r) => (r.steps as Array<{ action: string }>).map((x) => x.action))).toEqual([["hold"], ["notify"], ["notify", "flag"]])
      expect((runs[0]!.steps as Array<{ outcome: string }>)[0]!.outcome).toMatch(/^held .* in escrow$/)
    }
    return s
  })

// ---------------------------------------------------------------- replay and isolation

/** The one flow whose every step fails (the isolation test sets it). */
let failingFlowId: string | undefined
const failingHooks = Layer.succeed(AutomationHooks, {
  beforeStep: (s: FiredStep) => (s.source === "flow" && s.sourceId === failingFlowId ? Effect.fail(new Error(`flow ${s.sourceId} is broken`)) : Effect.void)
})

layer(makeTestApp().pipe(Layer.provideMerge(failingHooks)), { timeout: 60_000, excludeTestServices: true })("rules and flows: exactly once", (it) => {
  it.effect("replays of the deposits to the planner (re-fed rows, the RECONCILED stream) and of the firings to the actor change nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const dbUrl = yield* testDbUrl
      const t = yield* testTenant
      const ids = yield* configure(t)
      yield* createAccount(t.token, "once-1", "Adaeze Okafor")
      const amounts = [10_000, 20_000, 30_000]
      for (const a of amounts) yield* simulate(t, "once-1", a)
      yield* waitForAutomation(t.tenantId)
      const before = yield* assertAppliedOnce(t, amounts, ids)
      yield* assertLedgerInvariant

      // (a) The deposits' events put back among the planner's pending rows, as a redelivery would.
      const refed = yield* pausing(dbUrl, "automation")(Effect.gen(function* () {
        const rows = yield* sql<{ outboxId: number }>`
          INSERT INTO outbox_pending (consumer, outbox_id)
          SELECT 'automation', id FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'deposit.reconciled'
          ON CONFLICT DO NOTHING RETURNING outbox_id`
        expect((yield* pendingFor(sql, t.tenantId, "automation"))[0]!.n).toBe(3)
        return rows.length
      }))
      expect(refed).toBe(3)
      // Rows put back by hand wake nobody: wake the runners (here, and in any other process), as the operator replays do.
      yield* wakeEverywhere(sql, ["deposit.reconciled"])
      yield* waitForAutomation(t.tenantId)
      expect(yield* snapshot(t)).toEqual(before)
      yield* assertLedgerInvariant

      // (b) The operator's replay of the RECONCILED stream to the planner, from JetStream (once the relay has published them).
      yield* until("relay pending", (sql) => pendingFor(sql, t.tenantId, "relay"), 0)
      const report = yield* pausing(dbUrl, "automation")(Effect.gen(function* () {
        const r = yield* replayReconciled({ seq: 1 }, AUTOMATION)
        expect((yield* pendingFor(sql, t.tenantId, "automation"))[0]!.n).toBe(3)
        return r
      }))
      expect(report).toMatchObject({ stream: "reconciled", source: "jetstream", consumer: "automation" })
      expect(report.alreadyDone).toBeGreaterThanOrEqual(3)
      yield* waitForAutomation(t.tenantId)
      expect(yield* snapshot(t)).toEqual(before)
      yield* assertLedgerInvariant

      // (c) The firings themselves redelivered to the actor: completed runs are skipped.
      const refired = yield* pausing(dbUrl, "automation-actions")(
        sql<{ outboxId: number }>`
          INSERT INTO outbox_pending (consumer, outbox_id)
          SELECT 'automation-actions', id FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'internal.automation.fired'
          ON CONFLICT DO NOTHING RETURNING outbox_id`)
      expect(refired).toHaveLength(9)
      yield* wakeEverywhere(sql, ["internal.automation.fired"])
      yield* waitForAutomation(t.tenantId)
      expect(yield* snapshot(t)).toEqual(before)
      yield* assertLedgerInvariant
    }))

  it.scoped("a flow whose steps always fail is dead-lettered alone: the rule, the other flow, the webhooks and later deposits go on", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // A webhook receiver that takes everything.
      const received: Array<string> = []
      const server = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const s = http.createServer((req, res) => {
            let body = ""
            req.on("data", (d: Buffer) => (body += d.toString()))
            req.on("end", () => {
              received.push(body)
              res.writeHead(200).end()
            })
          })
          s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) => Effect.async<void>((resume) => void s.close(() => resume(Effect.void)))
      )
      const port = (server.address() as net.AddressInfo).port

      const t = yield* testTenant
      const rule = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Notify", priority: 1 })
      const broken = yield* createFlow(t.testOwnerToken, { name: "Broken", trigger: "deposit", actions: ["notify"], priority: 1 })
      failingFlowId = broken.id
      yield* Effect.addFinalizer(() => Effect.sync(() => void (failingFlowId = undefined)))
      const good = yield* createFlow(t.testOwnerToken, { name: "Hold and tell", trigger: "deposit", actions: ["hold", "notify"], priority: 2 })
      expectStatus(yield* call("POST", "/api/v1/webhook-endpoints", { token: t.token, json: { url: `http://127.0.0.1:${port}/hooks` } }), 201)
      yield* createAccount(t.token, "iso-1", "Adaeze Okafor")

      const runs = sql<{ sourceId: string; transactionReference: string; completed: boolean; steps: Array<{ action: string; outcome: string }> | null }>`
        SELECT source_id, transaction_reference, completed_at IS NOT NULL AS completed, steps FROM automation_runs WHERE tenant_id = ${t.tenantId} ORDER BY seq`
      const deadLetters = sql<{ runId: string; attempts: number; lastError: string }>`
        SELECT o.envelope->'data'->>'runId' AS run_id, d.attempts, d.last_error FROM consumer_dead_letters d JOIN outbox o ON o.id = d.outbox_id
        WHERE o.tenant_id = ${t.tenantId} AND d.consumer = 'automation-actions' ORDER BY d.outbox_id`
      const runIdsOf = (flowId: string) => sql<{ id: string }>`
        SELECT id FROM automation_runs WHERE tenant_id = ${t.tenantId} AND source_id = ${flowId} ORDER BY seq`.pipe(Effect.map((r) => r.map((x) => x.id)))
      const notesOf = (type: string) => sql<{ data: any }>`
        SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = ${type} ORDER BY id`.pipe(
        Effect.map((rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))))

      /** After each deposit: the broken flow's firing dead-lettered after its 3 attempts, everything else applied. */
      const afterDeposit = (reference: string, n: number) =>
        Effect.gen(function* () {
          yield* waitForAutomation(t.tenantId)
          yield* until("dead letters", () => Effect.map(deadLetters, (d) => [{ n: d.length }]), n)
          const dead = yield* deadLetters
          expect(dead.map((d) => d.runId)).toEqual(yield* runIdsOf(broken.id))
          for (const d of dead) {
            expect(d.attempts).toBe(TEST_AUTOMATION.maxAttempts)
            expect(d.lastError).toContain(`flow ${broken.id} is broken`)
          }
          const mine = (yield* runs).filter((r) => r.transactionReference === reference)
          expect(mine.map((r) => [r.sourceId, r.completed])).toEqual([[rule.id, true], [broken.id, false], [good.id, true]])
          expect(mine[1]!.steps).toBeNull()
          // Applied in the first pass, before the broken firing ran out of attempts: it held back neither (each
          // firing is its own account-and-source key).
          const order = yield* sql<{ sourceId: string; before: boolean }>`
            SELECT r.source_id, r.completed_at < d.dead_lettered_at AS before
            FROM automation_runs r, consumer_dead_letters d JOIN outbox o ON o.id = d.outbox_id
            WHERE r.tenant_id = ${t.tenantId} AND r.transaction_reference = ${reference} AND r.source_id IN (${rule.id}, ${good.id})
              AND d.consumer = 'automation-actions' AND o.envelope->'data'->>'runId' = (
                SELECT id FROM automation_runs WHERE tenant_id = ${t.tenantId} AND transaction_reference = ${reference} AND source_id = ${broken.id})
            ORDER BY r.seq`
          expect(order).toEqual([{ sourceId: rule.id, before: true }, { sourceId: good.id, before: true }])
          expect(mine[2]!.steps!.map((s) => s.action)).toEqual(["hold", "notify"])
          // The deposit itself is the reconciler's: Completed, its classification and flags untouched.
          expect((yield* call("GET", `/api/v1/transactions/${reference}`, { token: t.token })).body).toMatchObject({
            reference, status: "Completed", reconciliationStatus: "Credited", flagged: false
          })
        })

      const first = yield* simulate(t, "iso-1", 25_000)
      yield* afterDeposit(first, 1)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 25_000, availableKobo: 0 })
      expect((yield* notesOf("rule.notify")).map((d) => [d.ruleId, d.transaction.reference])).toEqual([[rule.id, first]])
      expect((yield* notesOf("flow.notify")).map((d) => [d.flowId, d.transaction.reference])).toEqual([[good.id, first]])

      // The same account again: the broken flow's dead letter holds back neither its account nor the others.
      const second = yield* simulate(t, "iso-1", 15_000)
      yield* afterDeposit(second, 2)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 40_000, availableKobo: 0 })
      expect((yield* notesOf("rule.notify")).map((d) => [d.ruleId, d.transaction.reference])).toEqual([[rule.id, first], [rule.id, second]])
      expect((yield* notesOf("flow.notify")).map((d) => [d.flowId, d.transaction.reference])).toEqual([[good.id, first], [good.id, second]])
      const flowRuns = (yield* call("GET", "/api/v1/flows/runs", { token: t.testOwnerToken })).body.data as Array<{ flowId: string; transactionReference: string }>
      expect(flowRuns.map((r) => [r.flowId, r.transactionReference])).toEqual([[good.id, second], [good.id, first]])

      // Webhooks: staged and delivered for every public event; the internal firings never leave the service.
      yield* until("webhook staging", (sql) => pendingFor(sql, t.tenantId, "webhooks"), 0)
      const deliveries = sql<{ eventType: string; status: string }>`
        SELECT event_type, status FROM webhook_deliveries WHERE tenant_id = ${t.tenantId} ORDER BY seq`
      yield* until("webhook deliveries", () => Effect.map(deliveries, (d) => [{ n: d.filter((x) => x.status === "Succeeded").length }]), 6)
      expect((yield* deliveries).map((d) => d.eventType).sort()).toEqual(
        ["deposit.reconciled", "deposit.reconciled", "flow.notify", "flow.notify", "rule.notify", "rule.notify"])
      expect(received.some((b) => b.includes("internal."))).toBe(false)
      yield* assertLedgerInvariant
    }))
})

// ---------------------------------------------------------------- a worker dying in the middle of a batch

/** The probe of the crash tests: counts the steps of `ids`, and at the `at`-th (once) dies or is interrupted. */
const crash = { ids: new Set<string>(), at: 0, kind: "die" as "die" | "interrupt", seen: 0, fired: false }
const crashHooks = Layer.succeed(AutomationHooks, {
  beforeStep: (s: FiredStep) =>
    Effect.suspend(() => {
      if (!crash.ids.has(s.sourceId)) return Effect.void
      crash.seen++
      if (crash.seen !== crash.at || crash.fired) return Effect.void
      crash.fired = true
      return crash.kind === "die" ? Effect.die(new Error("the worker died in the middle of a batch")) : Effect.interrupt
    })
})

/**
 * Three deposits planned while the actor is paused, so its next pass takes all nine firings in one batch; the probe
 * stops it at the 5th step (the second deposit's hold, after the first deposit's four steps).
 */
const armedBatch = (kind: "die" | "interrupt", accountRef: string) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const ids = yield* configure(t)
    Object.assign(crash, { ids: new Set(ids), at: 5, kind, seen: 0, fired: false })
    yield* createAccount(t.token, accountRef, "Adaeze Okafor")
    const amounts = [10_000, 20_000, 30_000]
    yield* pausing(yield* testDbUrl, "automation-actions")(Effect.gen(function* () {
      for (const a of amounts) yield* simulate(t, accountRef, a)
      yield* waitForPlanned(t.tenantId, 9)
    }))
    return { t, ids, amounts }
  })

layer(makeTestApp().pipe(Layer.provideMerge(crashHooks)), { timeout: 60_000, excludeTestServices: true })("rules and flows: a worker dying mid-batch", (it) => {
  it.effect("a step dies after four succeeded in the batch: the batch rolls back, each firing is applied once one by one", () =>
    Effect.gen(function* () {
      const { t, ids, amounts } = yield* armedBatch("die", "die-1")
      yield* waitForAutomation(t.tenantId)
      expect(crash.fired).toBe(true)
      // 5 steps in the failed batch (rolled back), then all 12 again: had the first four stayed, their runs would be skipped.
      expect(crash.seen).toBe(5 + 12)
      yield* assertAppliedOnce(t, amounts, ids)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM consumer_dead_letters d JOIN outbox o ON o.id = d.outbox_id WHERE o.tenant_id = ${t.tenantId}`).toEqual([])
      yield* assertLedgerInvariant
    }))

  // Last in this app: the interrupt ends the app's own actor loop, as a killed worker's would end.
  it.effect("the worker is interrupted after four steps of the batch: nothing of it stays; a restarted worker applies each firing once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { t, ids, amounts } = yield* armedBatch("interrupt", "kill-1")
      yield* waitFor("the crash hook to fire", Effect.sync(() => crash.fired), { timeoutMs: 20_000 })
      yield* noPassOf("automation-actions")
      // Rolled back whole: no hold, no event, no completed run; all nine firings still pending, no attempt spent.
      const s = yield* snapshot(t)
      expect(s.holds).toEqual({ n: 0, heldKobo: 0 })
      expect(s.escrowKobo).toBe(0)
      expect(s.events["rule.notify"] ?? 0).toBe(0)
      expect(s.events["flow.notify"] ?? 0).toBe(0)
      expect(s.events["transaction.flagged"] ?? 0).toBe(0)
      expect(s.runs.filter((r) => r.completed)).toEqual([])
      expect(s.deposits.every((d) => !d.flagged)).toBe(true)
      expect(yield* sql<{ attempts: number }>`SELECT p.attempts FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
        WHERE o.tenant_id = ${t.tenantId} AND p.consumer = 'automation-actions'`).toEqual(Array.from({ length: 9 }, () => ({ attempts: 0 })))
      yield* assertLedgerInvariant

      // The restarted worker.
      yield* Effect.scoped(Effect.gen(function* () {
        const runner = yield* makeConsumerRunner(actorConsumer, { ...ACTOR_OPTIONS, ...runnerOptionsOf(TEST_AUTOMATION) })
        yield* runner.start
        yield* waitForAutomation(t.tenantId)
      }))
      expect(crash.seen).toBe(5 + 12)
      yield* assertAppliedOnce(t, amounts, ids)
      yield* assertLedgerInvariant
    }))
})

// ---------------------------------------------------------------- the service process killed mid-batch

describe("rules and flows: the service process killed in the middle of the actor's batch", () => {
  plainIt.live("SIGKILL while the actor's transaction has applied some firings and waits on the next; restarted: each applied once", () =>
    Effect.scoped(Effect.gen(function* () {
      const name = yield* Effect.promise(() => createScratchDatabase("autocrash"))
      yield* Effect.addFinalizer(() => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined)))
      const dbUrl = databaseUrl(name)
      const vars = { PORT: String(yield* Effect.promise(freePort)), DATABASE_URL: dbUrl, DATA_DIR: tempDir("autocrash-"), LOG_LEVEL: "Error" }
      const start = Effect.acquireRelease(Effect.promise(() => startService(vars)), (s: Service) => Effect.sync(() => s.child.kill("SIGKILL")))
      const first = yield* start
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const t = yield* testTenant
        const ids = yield* configure(t)
        yield* createAccount(t.token, "proc-1", "Adaeze Okafor")
        const amounts = [10_000, 20_000, 30_000]
        const refs: Array<string> = []
        yield* pausing(dbUrl, "automation-actions")(Effect.gen(function* () {
          for (const a of amounts) refs.push(yield* simulate(t, "proc-1", a))
          yield* waitForPlanned(t.tenantId, 9)
        }))
        // The second deposit's row locked: the actor's pass (all nine firings) applies the first deposit's rule and
        // flow, the second's hold and notes, and waits at its flag, inside its one transaction.
        const row = yield* holdLock(dbUrl, `SELECT 1 FROM transactions WHERE reference = '${refs[1]}' FOR UPDATE`)
        yield* lockWaiters(name, "%UPDATE transactions SET flagged%", 1)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)
        yield* row.release
        yield* lockWaiters(name, "%", 0)
        yield* until("the killed service's sessions", (sql) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND state LIKE 'idle in transaction%'`, 0)
        const left = yield* snapshot(t, { serviceDown: true })
        expect(left.holds).toEqual({ n: 0, heldKobo: 0 })
        expect(left).toMatchObject({ escrowKobo: 0, availableKobo: 60_000 })
        expect(left.deposits.every((d) => !d.flagged)).toBe(true)
        expect(left.events["rule.notify"] ?? 0).toBe(0)
        expect(left.events["flow.notify"] ?? 0).toBe(0)
        expect(left.runs.filter((r) => r.completed)).toEqual([])
        expect((yield* pendingFor(sql, t.tenantId, "automation-actions"))[0]!.n).toBe(9)

        yield* Effect.gen(function* () {
          yield* start
          yield* waitForAutomation(t.tenantId)
          yield* assertAppliedOnce(t, amounts, ids)
          yield* assertLedgerInvariant
        }).pipe(Effect.scoped)
      }).pipe(Effect.provide(atProcess(first.baseUrl, dbUrl)))
    })), 120_000)
})
