/**
 * Settlement benchmark (issue 18): `npm run bench:settlement -- --accounts 10000`.
 *
 * Against the real Postgres and NATS of this machine it
 *  1. builds the service IN THIS PROCESS (the HTTP API with the receiver's fast path, every worker, the sandbox bank
 *     and its reporter) on a scratch database and its own NATS stream prefix, as the test app does, but with the
 *     production timings: money out (the sandbox bank reports a transfer's outcome SANDBOX_TRANSFER_REPORT_DELAY_MS
 *     after accepting it, 100 reports per pass every SANDBOX_TRANSFER_REPORT_INTERVAL_MS), the settlement run's
 *     bounds (SETTLEMENT_CONCURRENCY accounts at a time) and DB_POOL_SIZE (10) connections; the app's own auto-settle
 *     worker is off (the bench tenant does not auto-settle anyway). Unlike `npm run bench` (which starts `src/main.ts`
 *     as a child process), this one calls the engine directly, so the run's duration is the engine's alone;
 *  2. seeds one test-mode tenant: a sub-merchant with a verified payout account (the sandbox directory's BOLANLE
 *     ADEYEMI), a verified settlement account (NGOZI EZE ENTERPRISES), the split plan [sub-merchant 20%] (the rest is
 *     the tenant's last leg: 2 legs per settlement), and N accounts with an expected amount, each paid exactly by one
 *     deposit: accounts over HTTP (`--setup-concurrency` at a time), the deposits as signed sandbox webhooks through
 *     the deposit pipeline, sent by the deposit bench's sender (test/bench/sender.ts, a separate process);
 *  3. runs ONE settlement run, `Settlements.runFor({ tenantId, mode: "test" }, true)` (what POST /settlements/run
 *     does, without the answer's page), and times it: the candidates query, every account's claim transaction and
 *     every leg's provider call; then times until every settlement is Paid (every leg's transfer Successful: the
 *     sandbox bank reports asynchronously through its signed webhook, into the receiver, then TransferOutcomes);
 *  4. checks: every account settled exactly once (one settlement each, none skipped, held back or short), legs =
 *     settlements x 2, exactly one provider call per leg reference (`sandbox_provider_transfers`: one row per leg
 *     reference, `calls` = 1 on every row), and `assertLedgerInvariant` (test/support/Pipeline.ts);
 *  5. prints progress lines, then ONE JSON line: accounts, settlements, legs, runSeconds, accountsPerSecond (accounts
 *     settled / runSeconds), paidSeconds (run start -> last settlement Paid), allPaidAfterRunSeconds (run end -> all
 *     Paid; both null when not all were Paid within --paid-timeout-seconds), providerCalls, rssMb (this process: the service and the bench's bookkeeping; peak sampled during the
 *     run and the wait, and VmHWM over the whole bench, seeding included), cpuSeconds (this process during the run),
 *     seedSeconds, checksPassed. Exit code 1 when a check fails.
 * Everything it made (database, streams, temp files) is removed at the end, also on failure or Ctrl-C.
 *
 * Flags: --accounts N (1000), --setup-concurrency (16: account creations in flight), --sender-concurrency (64:
 * webhooks in flight), --paid-timeout-seconds (600: how long to wait for every leg's outcome), --amount-kobo (500000:
 * each account's expected amount, paid exactly), --explain (EXPLAIN ANALYZE the run's candidates query before the run),
 * --trace (sum the Effect spans during the run, per name and per SQL statement, and print the 30 largest: where the
 * run's time goes; the statement spans include the wait for a pool connection).
 * The production knobs are environment variables read as the service reads them, e.g.
 * `SETTLEMENT_CONCURRENCY=16 SANDBOX_TRANSFER_REPORT_INTERVAL_MS=50 npm run bench:settlement -- --accounts 10000`.
 * A CPU profile: `node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/settlement.ts --accounts 10000`.
 */
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, type Exit, Layer, Logger, LogLevel, Option, type Context, Tracer } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { SandboxProviderLive } from "../../services/providers/SandboxProvider.js"
import { SettlementRunSettings } from "../../services/settlement/SettlementRunSettings.js"
import { Settlements } from "../../services/settlement/Settlements.js"
import { AppConfigTag } from "../../src/Config.js"
import { MigratorLive, pgClientLayer } from "../../src/db/Database.js"
import { NodeServerTest } from "../../src/http/NodeServer.js"
import { ReceiverFastPathLive } from "../../src/http/ReceiverFastPath.js"
import { HttpLive } from "../../src/http/Server.js"
import { makeServices, WorkersLive } from "../../src/Services.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { assertLedgerInvariant, testTenant } from "../support/Pipeline.js"
import { REPO_ROOT, removeTempDirs, tempDir } from "../support/Processes.js"
import { call, testConfig } from "../support/TestApp.js"
import { TestDatabaseLive, TestDatabaseUrl } from "../support/TestDatabase.js"
import type { SenderPlan, SenderResults } from "./sender.js"
import { customer } from "./customers.js"
import { parseBenchArgs, positiveInteger } from "./args.js"

interface Options {
  readonly accounts: number
  readonly setupConcurrency: number
  readonly senderConcurrency: number
  readonly paidTimeoutSeconds: number
  readonly amountKobo: number
  readonly explain: boolean
  readonly trace: boolean
}

export interface SettlementBenchResult {
  readonly accounts: number
  readonly settlements: number
  readonly legs: number
  readonly runSeconds: number
  readonly accountsPerSecond: number
  /** null when not every settlement was Paid within --paid-timeout-seconds. */
  readonly paidSeconds: number | null
  readonly allPaidAfterRunSeconds: number | null
  readonly providerCalls: number
  readonly rssMb: { readonly runPeak: number; readonly end: number; readonly hwm: number }
  readonly cpuSeconds: number
  readonly seedSeconds: number
  readonly checksPassed: boolean
}

const log = (line: string) => process.stdout.write(`bench:settlement: ${line}\n`)

const parseArgs = (argv: ReadonlyArray<string>): Options => {
  const { flags, num } = parseBenchArgs(argv, {
    values: ["accounts", "setup-concurrency", "sender-concurrency", "paid-timeout-seconds", "amount-kobo"],
    flags: ["explain", "trace"]
  })
  const posInt = (name: string, dflt: number) => num(name, dflt, positiveInteger)
  return {
    accounts: posInt("accounts", 1_000),
    setupConcurrency: posInt("setup-concurrency", 16),
    senderConcurrency: posInt("sender-concurrency", 64),
    paidTimeoutSeconds: posInt("paid-timeout-seconds", 600),
    amountKobo: posInt("amount-kobo", 500_000),
    explain: flags.has("explain"),
    trace: flags.has("trace")
  }
}

/** The sandbox directory's rows the bench pays out to (DESIGN.md; test/transfers/support.ts's DIRECTORY). */
const BOLANLE = { accountNumber: "2000000015", bankCode: "057", bankName: "Zenith" }
const NGOZI = { accountNumber: "3000000032", bankCode: "011", accountName: "Ngozi Eze Enterprises" }

// ---------------------------------------------------------------------------------------------------------------
// Process figures

const procStatusMb = (field: "VmHWM" | "VmRSS") => {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(fs.readFileSync("/proc/self/status", "utf8"))
  return m ? Number(m[1]) / 1024 : 0
}
const cpuNow = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}
const round1 = (n: number) => Math.round(n * 10) / 10
const round2 = (n: number) => Math.round(n * 100) / 100
const seconds = (fromMs: number, toMs = Date.now()) => (toMs - fromMs) / 1000

// ---------------------------------------------------------------------------------------------------------------
// --trace: where the run's time goes, from the Effect spans (Effect.fn names, and @effect/sql's "sql.execute" span
// per statement: pool wait + round trip + execution), summed per name or statement while `recording`.

interface SpanTotals { count: number; totalMs: number; maxMs: number }
const spanTotals = new Map<string, SpanTotals>()
let recording = false

class RecordingSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = crypto.randomBytes(8).toString("hex")
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink>
  status: Tracer.SpanStatus
  constructor(
    readonly name: string, readonly parent: Option.Option<Tracer.AnySpan>, readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>, startTime: bigint, readonly kind: Tracer.SpanKind
  ) {
    this.traceId = Option.match(parent, { onNone: () => crypto.randomBytes(16).toString("hex"), onSome: (p) => p.traceId })
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    if (!recording) return
    const text = this.attributes.get("db.query.text")
    const key = this.name === "sql.execute" && typeof text === "string" ? `sql: ${text.replace(/\s+/g, " ").trim().slice(0, 110)}` : this.name
    const ms = Number(endTime - this.status.startTime) / 1e6
    const t = spanTotals.get(key) ?? { count: 0, totalMs: 0, maxMs: 0 }
    t.count++
    t.totalMs += ms
    t.maxMs = Math.max(t.maxMs, ms)
    spanTotals.set(key, t)
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

const recordingTracer = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => new RecordingSpan(name, parent, context, links, startTime, kind),
  context: (f) => f()
})

const spanReport = (top = 30) =>
  [...spanTotals].sort((a, b) => b[1].totalMs - a[1].totalMs).slice(0, top)
    .map(([k, t]) => `${(t.totalMs / 1000).toFixed(2).padStart(8)} s  ${String(t.count).padStart(7)} x  mean ${(t.totalMs / t.count).toFixed(2).padStart(7)} ms  max ${t.maxMs.toFixed(0).padStart(5)} ms  ${k}`)
    .join("\n")

// ---------------------------------------------------------------------------------------------------------------
// The app, in process

const appLayer = () => {
  const pool = Number(process.env.DB_POOL_SIZE ?? 10)
  const config = testConfig({ logLevel: LogLevel.Warning, dbPoolSize: pool })
  const sqlLayer = Layer.unwrapEffect(
    Effect.map(TestDatabaseUrl, ({ url }) => MigratorLive.pipe(Layer.provideMerge(pgClientLayer(url, pool))))
  ).pipe(Layer.provideMerge(TestDatabaseLive))
  // Built before the app, so its finalizer runs after the workers and the app's NATS connection are gone.
  const streamsCleanup = Layer.scopedDiscard(Effect.addFinalizer(() =>
    deleteTopology({ prefix: config.natsPrefix }).pipe(
      Effect.provide(NatsLive(Option.getOrThrow(config.natsUrl), "bench-settlement-cleanup")),
      Effect.timeout("10 seconds"),
      Effect.ignore
    )))
  return Layer.merge(HttpLive, ReceiverFastPathLive).pipe(
    Layer.merge(WorkersLive),
    Layer.provideMerge(NodeServerTest),
    Layer.provideMerge(makeServices(SandboxProviderLive)),
    Layer.provideMerge(sqlLayer),
    Layer.provideMerge(Layer.succeed(AppConfigTag, config)),
    Layer.provideMerge(streamsCleanup),
    // Production money-out and automation timings are those References' defaults; settlement as in production, but
    // without the app's auto-settle worker.
    Layer.provideMerge(Layer.succeed(SettlementRunSettings, { ...SettlementRunSettings.defaultValue(), worker: false })),
    Layer.provide(Logger.minimumLogLevel(config.logLevel))
  )
}

const expect201 = (what: string, r: { status: number; body: any }, status = 201) =>
  r.status === status ? Effect.succeed(r.body) : Effect.dieMessage(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`)

const runSender = (plan: SenderPlan, work: string) =>
  Effect.async<SenderResults, Error>((resume) => {
    const planFile = path.join(work, "plan.json")
    const resultsFile = path.join(work, "results.json")
    fs.writeFileSync(planFile, JSON.stringify(plan))
    const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "test", "bench", "sender.ts"), planFile, resultsFile], {
      cwd: REPO_ROOT, env: process.env, stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      for (const l of d.toString().split("\n")) if (l.trim() !== "") log(l)
    })
    child.stderr.on("data", (d: Buffer) => (out += d.toString()))
    child.on("close", (code) =>
      code === 0
        ? resume(Effect.sync(() => JSON.parse(fs.readFileSync(resultsFile, "utf8")) as SenderResults))
        : resume(Effect.fail(new Error(`the sender failed (exit ${code}):\n${out.slice(-4000)}`))))
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

// ---------------------------------------------------------------------------------------------------------------

const bench = (opts: Options) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const server = yield* HttpServer.HttpServer
    const settlements = yield* Settlements
    if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("the service is not on TCP")
    const baseUrl = `http://127.0.0.1:${server.address.port}`
    const db = yield* TestDatabaseUrl
    const pool = Number(process.env.DB_POOL_SIZE ?? 10)
    const runSettings = SettlementRunSettings.defaultValue()
    log(`${opts.accounts} accounts; service in process on ${baseUrl}, database ${db.name}, DB pool ${pool}, settlement concurrency ${runSettings.concurrency}`)
    if (opts.accounts > runSettings.maxAccountsPerRun) log(`note: one run settles at most ${runSettings.maxAccountsPerRun} accounts (SETTLEMENT_MAX_ACCOUNTS_PER_RUN)`)

    // 2. The tenant, its sub-merchant, settlement account, split plan and paid accounts.
    const seedStart = Date.now()
    const t = yield* testTenant
    const scope = { tenantId: t.tenantId, mode: "test" as const }
    const sm = yield* expect201("sub-merchant", yield* call("POST", "/api/v1/sub-merchants", { token: t.token, json: { name: "Bolanle Adeyemi", reference: "bench-sm" } }))
    yield* expect201("sub-merchant payout", yield* call("PUT", `/api/v1/sub-merchants/${sm.id}/payout`, {
      token: t.token, json: { ...BOLANLE, platformFeeBps: 0 }
    }), 200)
    yield* expect201("settlement account", yield* call("PUT", "/api/v1/settings/settlement", {
      token: t.token, json: { settlementAccountNumber: NGOZI.accountNumber, settlementBankCode: NGOZI.bankCode, settlementAccountName: NGOZI.accountName, autoSettle: false }
    }), 200)
    yield* expect201("split plan", yield* call("PUT", "/api/v1/settings/splits", {
      token: t.token, json: { splits: [{ subMerchantRef: "bench-sm", bps: 2000, priority: 1 }] }
    }), 200)
    const legsPerPlan = 2

    const accountsStart = Date.now()
    const accounts = yield* Effect.forEach(Array.from({ length: opts.accounts }, (_, i) => i), (i) =>
      Effect.gen(function* () {
        const c = customer(i)
        const body = yield* expect201(`account ${i}`, yield* call("POST", "/api/v1/virtual-accounts", {
          token: t.token, json: { accountRef: `stl-${i}`, name: c.name, expectedAmountKobo: opts.amountKobo }
        }))
        return { nuban: body.nuban as string, ...c }
      }), { concurrency: opts.setupConcurrency })
    const accountsSeconds = seconds(accountsStart)
    log(`tenant ${t.tenantId}: ${accounts.length} accounts in ${accountsSeconds.toFixed(1)} s (${Math.round(accounts.length / accountsSeconds)}/s)`)

    const runTag = String(crypto.randomInt(10_000_000, 100_000_000))
    const now = Date.now()
    const requests = accounts.map((a, i) => {
      const event = {
        event: "transfer.inbound", merchantId: t.merchantId, sessionId: `999999${runTag}${String(i).padStart(16, "0")}`,
        accountNumber: a.nuban, amountKobo: opts.amountKobo, senderName: a.payerName, senderAccountNumber: a.payerAccount,
        senderBankCode: "058", narration: `settlement bench ${i}`,
        paidAt: new Date(now - 3 * 3_600_000 - crypto.randomInt(0, 3_600_000)).toISOString(), reversedSessionId: null
      }
      return { body: JSON.stringify(event), signature: signSandboxEvent(t.webhookSecret, event) }
    })
    const work = tempDir("collections-bench-settlement-")
    const depositsStart = Date.now()
    const results = yield* runSender({ baseUrl, path: "/webhooks/sandbox", concurrency: opts.senderConcurrency, requests }, work)
    const refused = results.status.filter((s) => s !== 200).length
    if (refused > 0) return yield* Effect.dieMessage(`${refused} deposit webhooks were not answered 200`)
    // Every deposit reconciled and every account fully paid with its money free (not held for review).
    for (let lastLog = 0; ;) {
      const [r] = yield* sql<{ paid: number; transactions: number }>`SELECT
          (SELECT count(*)::int FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND amount_paid_kobo = expected_amount_kobo) AS paid,
          (SELECT count(*)::int FROM transactions WHERE tenant_id = ${t.tenantId}) AS transactions`
      if (r!.paid >= opts.accounts) break
      if (seconds(depositsStart) > 300) return yield* Effect.dieMessage(`after 300 s only ${r!.paid} of ${opts.accounts} accounts are fully paid (${r!.transactions} transactions)`)
      if (Date.now() - lastLog > 2_000) {
        lastLog = Date.now()
        log(`fully paid ${r!.paid}/${opts.accounts}`)
      }
      yield* Effect.sleep("200 millis")
    }
    const depositsSeconds = seconds(depositsStart)
    log(`${opts.accounts} deposits reconciled, every account fully paid, in ${depositsSeconds.toFixed(1)} s (${Math.round(opts.accounts / depositsSeconds)}/s)`)
    // The rules and flows, the webhook outbox and the ledger's stripes settle down before the run is timed.
    yield* Effect.sleep("2 seconds")
    const seedSeconds = seconds(seedStart)
    log(`seeded in ${seedSeconds.toFixed(1)} s`)

    if (opts.explain) {
      const plan = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) SELECT va.id, f.free_kobo FROM virtual_accounts va
        CROSS JOIN LATERAL (SELECT -COALESCE(sum(e.amount_kobo), 0)::bigint AS free_kobo FROM ledger_entries e
          WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode AND e.account = 'customer_funds:' || va.id) f
        WHERE va.tenant_id = $1 AND va.mode = 'test'
          AND (va.expected_amount_kobo IS NULL OR va.amount_paid_kobo >= va.expected_amount_kobo)
          AND f.free_kobo > 0 AND f.free_kobo >= 0
        ORDER BY va.created_at, va.id LIMIT ${runSettings.maxAccountsPerRun}`, [t.tenantId])
      log(`candidates query:\n${plan.map((r) => Object.values(r)[0]).join("\n")}`)
    }

    // 3. One run, timed; then the wait for every leg's outcome.
    let runPeakRss = procStatusMb("VmRSS")
    const sampler = setInterval(() => (runPeakRss = Math.max(runPeakRss, procStatusMb("VmRSS"))), 200)
    const cpuAtStart = cpuNow()
    recording = opts.trace
    const runStart = Date.now()
    const summary = yield* settlements.runFor(scope, true).pipe(Effect.orDie)
    const runEnd = Date.now()
    recording = false
    if (opts.trace) log(`where the run's time went (span totals; concurrent spans overlap, nested ones are counted in their parents too):\n${spanReport()}`)
    const cpuSeconds = cpuNow() - cpuAtStart
    const runSeconds = seconds(runStart, runEnd)
    log(`run: ${summary.settlementIds.length} settled (${summary.legsSent} legs), ${summary.skippedIds.length} skipped, ${summary.heldBack} held back, ` +
      `${summary.short} short, in ${runSeconds.toFixed(2)} s (${Math.round(summary.settlementIds.length / runSeconds)} accounts/s; ${cpuSeconds.toFixed(1)} cpu-s in this process)`)

    let allPaid = false
    for (let lastLog = 0; ;) {
      const [r] = yield* sql<{ paid: number; successful: number; open: number }>`SELECT
          (SELECT count(*)::int FROM settlements WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND status = 'Paid') AS paid,
          (SELECT count(*)::int FROM transfers WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND source = 'settlement' AND status = 'Successful') AS successful,
          (SELECT count(*)::int FROM settlements WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND status <> 'Paid') AS open`
      if (r!.open === 0 && r!.paid >= summary.settlementIds.length) {
        allPaid = true
        break
      }
      if (seconds(runEnd) > opts.paidTimeoutSeconds) {
        log(`timeout: ${r!.paid} of ${summary.settlementIds.length} settlements Paid, ${r!.successful} legs Successful after ${opts.paidTimeoutSeconds} s`)
        break
      }
      if (Date.now() - lastLog > 2_000) {
        lastLog = Date.now()
        log(`Paid ${r!.paid}/${summary.settlementIds.length} settlements, ${r!.successful}/${summary.legsSent} legs Successful`)
      }
      yield* Effect.sleep("100 millis")
    }
    // The moment the last settlement became Paid, from its completed_at (only meaningful once all are Paid).
    const [last] = yield* sql<{ ms: number | null }>`SELECT (extract(epoch FROM max(completed_at)) * 1000)::float8 AS ms FROM settlements
      WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND status = 'Paid'`
    const lastPaidAt = allPaid ? (last?.ms ?? Date.now()) : undefined
    clearInterval(sampler)
    runPeakRss = Math.max(runPeakRss, procStatusMb("VmRSS"))
    if (lastPaidAt !== undefined) {
      log(`every settlement Paid ${seconds(runStart, lastPaidAt).toFixed(2)} s after the run started (${seconds(runEnd, lastPaidAt).toFixed(2)} s after it ended)`)
    }

    // 4. Checks.
    const problems: Array<string> = []
    const [s] = yield* sql<{ settlements: number; accounts: number; settledAccounts: number; paid: number; twice: number; legs: number; badLegs: number }>`SELECT
        (SELECT count(*)::int FROM settlements WHERE tenant_id = ${t.tenantId}) AS settlements,
        (SELECT count(*)::int FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND mode = 'test') AS accounts,
        (SELECT count(DISTINCT virtual_account_id)::int FROM settlements WHERE tenant_id = ${t.tenantId}) AS settled_accounts,
        (SELECT count(*)::int FROM settlements WHERE tenant_id = ${t.tenantId} AND status = 'Paid') AS paid,
        (SELECT count(*)::int FROM (SELECT virtual_account_id FROM settlements WHERE tenant_id = ${t.tenantId} GROUP BY 1 HAVING count(*) > 1) x) AS twice,
        (SELECT count(*)::int FROM settlement_legs WHERE tenant_id = ${t.tenantId}) AS legs,
        (SELECT count(*)::int FROM (SELECT settlement_id FROM settlement_legs WHERE tenant_id = ${t.tenantId} GROUP BY 1 HAVING count(*) <> ${legsPerPlan}) x) AS bad_legs`
    const [p] = yield* sql<{ rows: number; calls: number; notOnce: number; legRefs: number }>`SELECT
        (SELECT count(*)::int FROM sandbox_provider_transfers WHERE merchant_id = ${t.merchantId}) AS rows,
        (SELECT COALESCE(sum(calls), 0)::int FROM sandbox_provider_transfers WHERE merchant_id = ${t.merchantId}) AS calls,
        (SELECT count(*)::int FROM sandbox_provider_transfers WHERE merchant_id = ${t.merchantId} AND calls <> 1) AS not_once,
        (SELECT count(*)::int FROM settlement_legs l JOIN sandbox_provider_transfers x ON x.merchant_id = ${t.merchantId} AND x.reference = l.transfer_ref
          WHERE l.tenant_id = ${t.tenantId}) AS leg_refs`
    const expect = (ok: boolean, what: string) => {
      if (!ok) problems.push(what)
    }
    expect(summary.settlementIds.length === opts.accounts, `the run settled ${summary.settlementIds.length} of ${opts.accounts} accounts`)
    expect(s!.settlements === opts.accounts && s!.settledAccounts === opts.accounts && s!.twice === 0,
      `settlements ${s!.settlements}, accounts settled ${s!.settledAccounts} of ${s!.accounts}, settled more than once ${s!.twice}`)
    expect(s!.paid === s!.settlements, `${s!.paid} of ${s!.settlements} settlements Paid`)
    expect(s!.legs === s!.settlements * legsPerPlan && s!.badLegs === 0 && summary.legsSent === s!.legs,
      `legs ${s!.legs} (sent ${summary.legsSent}) for ${s!.settlements} settlements x ${legsPerPlan}; ${s!.badLegs} settlements with another number of legs`)
    expect(p!.rows === s!.legs && p!.legRefs === s!.legs && p!.notOnce === 0 && p!.calls === s!.legs,
      `provider: ${p!.rows} references, ${p!.legRefs} of them leg references, ${p!.calls} calls, ${p!.notOnce} references not called exactly once; legs ${s!.legs}`)
    const invariant = yield* Effect.exit(assertLedgerInvariant)
    expect(invariant._tag === "Success", `assertLedgerInvariant: ${invariant._tag === "Failure" ? String(invariant.cause) : ""}`)
    for (const problem of problems) log(`CHECK FAILED: ${problem}`)
    if (problems.length === 0) log(`checks passed: every account settled once, ${s!.legs} legs = ${s!.settlements} x ${legsPerPlan}, one provider call per leg reference, ledger invariant holds`)

    const result: SettlementBenchResult = {
      accounts: opts.accounts,
      settlements: s!.settlements,
      legs: s!.legs,
      runSeconds: round2(runSeconds),
      accountsPerSecond: round1(summary.settlementIds.length / runSeconds),
      paidSeconds: lastPaidAt === undefined ? null : round2(seconds(runStart, lastPaidAt)),
      allPaidAfterRunSeconds: lastPaidAt === undefined ? null : round2(seconds(runEnd, lastPaidAt)),
      providerCalls: p!.calls,
      rssMb: { runPeak: round1(runPeakRss), end: round1(procStatusMb("VmRSS")), hwm: round1(procStatusMb("VmHWM")) },
      cpuSeconds: round1(cpuSeconds),
      seedSeconds: round1(seedSeconds),
      checksPassed: problems.length === 0
    }
    return result
  })

const main = Effect.gen(function* () {
  const opts = parseArgs(process.argv.slice(2))
  const program = bench(opts).pipe(Effect.provide(appLayer()), Effect.ensuring(Effect.sync(removeTempDirs)))
  const result = yield* (opts.trace ? Effect.withTracer(program, recordingTracer) : program)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  if (!result.checksPassed) return yield* Effect.fail(new Error("a check failed"))
})

NodeRuntime.runMain(main.pipe(Effect.tapErrorCause((cause) => Effect.sync(() => log(`failed: ${String(cause)}`)))), { disableErrorReporting: true })
