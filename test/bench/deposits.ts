/**
 * End-to-end deposit benchmark (issue 5): `npm run bench -- --deposits 20000 --accounts 1000 --concurrency 64 --duplicates 0`.
 *
 * Against the real Postgres and NATS of this machine it
 *  1. runs pgbench on a scratch database with a fixed script (one INSERT into a deposits-like table and one UPDATE of a
 *     balance row per transaction, 8 clients, 2 threads): the reference for one durable commit per deposit here;
 *  2. starts the service as `npm start` does (its node flags and `src/start.mjs`: the bundle, built first if
 *     a source is newer; `--entry sources` runs tsx on src/main.ts instead) on another scratch database and its own NATS prefix;
 *  3. signs up a tenant and creates the accounts over HTTP (bounded parallelism);
 *  4. sends the signed sandbox webhooks from a separate process (test/bench/sender.ts, keep-alive, `concurrency` in
 *     flight), `--duplicates f` of the references twice, recording each webhook's send time;
 *  5. waits for the deposits to reconcile, then reads the outcome from the database.
 *
 * Progress lines first; the LAST line is one JSON object:
 *   depositsPerSecond          unique deposits reconciled / (last transactions.reconciled_at - first webhook sent)
 *   receiverRequestsPerSecond  webhooks answered / (last answer - first webhook sent)
 *   p50Ms, p99Ms               first send of a reference -> its transaction's reconciled_at (epoch ms, same machine)
 *   pgbenchTps                 pgbench's tps (without initial connection time)
 *   lost                       references answered 200 that have no transaction after the drain timeout
 *   doubled                    transactions beyond one per reference
 *   peakRssMb                  the service process's VmHWM (with --split-roles, the sum of both processes')
 *   workloadPerSecond          unique deposits / (the later of the last reconciled_at and the last automation run's
 *                              completed_at - first webhook sent): the whole workload done, the rules and flows the
 *                              deposits fired applied too (the same as depositsPerSecond when nothing was left to apply)
 *   automationLagMs            the last automation run's completed_at - the last reconciled_at, at least 0 (0 with
 *                              --automation none). completed_at is its pass's transaction start, so this is short by
 *                              at most one pass
 * Among the progress lines: CPU per deposit for the whole run (service, Postgres, NATS, sender, other) and for its middle
 * half (from a quarter to three quarters of the deposits reconciled: without the warm-up, when V8 is still compiling
 * the hot code, and without the drain), WAL per deposit with its LSN range, and what the service sent to and received
 * from Postgres and NATS per deposit (the kernel's counters of its TCP connections, `ss -ti`).
 * Everything it made (service, scratch databases, streams, temp files) is removed at the end, also on failure.
 *
 * More flags: --pgbench-seconds (15), --drain-seconds (60: once the sender is done, how long the reconciled count may
 * stand still before the missing deposits count as lost), --setup-concurrency (16), --cpu-prof-dir DIR (run the service under `node --cpu-prof`, profile written there),
 * --service-env K=V (repeatable; e.g. DB_POOL_SIZE=20), --node-flag F (repeatable: a flag for the service's node, e.g.
 * --node-flag=--trace-gc with --service-output), --keep-db (keep the service database for inspection),
 * --service-output (copy the service's log lines to stderr), --split-roles (run the service as two processes,
 * SERVICE_ROLE=api and SERVICE_ROLE=worker; CPU, RSS and profiles then cover both), --processes N (one API process
 * and N worker processes; with N > 1 the log says how many deposits were applied out of stream order per account),
 * --kill-worker-after S (with --processes: SIGKILL the first worker S seconds after the first send), --billing-share F (default 0.1: every tenth account is billed by a Monthly schedule; 0 for none), --automation light|heavy|none (the
 * money rule and payment flow configured on the bench tenant, so their consumers are on the measured path; default
 * light: see setUpTenant).
 */
import { Effect } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { jetstreamManager } from "@nats-io/jetstream"
import { deleteTopology } from "../../streams/JetStream.js"
import { Nats, NatsLive } from "../../streams/Nats.js"
import { RECONCILER_DURABLE, streamNames } from "../../streams/Topology.js"
import { buildServiceBundle, childEnv, freePort, http, parseServiceEntry, REPO_ROOT, SERVICE_NODE_FLAGS, serviceArgs, type ServiceEntry, tempDir } from "../support/Processes.js"
import { ADMIN_URL, createScratchDatabase, databaseUrl, dropScratchDatabase, withAdmin, withClient } from "../support/TestDatabase.js"
import type { SenderPlan, SenderResults } from "./sender.js"
import { customer } from "./customers.js"
import { parseBenchArgs, positiveInteger as posInt } from "./args.js"
import { boundedMap, expectStatus, machineCpu, processCpu, running, socketCounts, socketTraffic, statCpu, stop } from "./shared.js"
import { outOfOrder, streamOrderOf } from "../support/StreamOrder.js"

export interface BenchResult {
  readonly depositsPerSecond: number
  readonly receiverRequestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly pgbenchTps: number
  readonly lost: number
  readonly doubled: number
  readonly peakRssMb: number
  readonly workloadPerSecond: number
  readonly automationLagMs: number
}

interface Options {
  readonly entry: ServiceEntry
  readonly deposits: number
  readonly accounts: number
  readonly concurrency: number
  readonly duplicates: number
  readonly pgbenchSeconds: number
  readonly drainSeconds: number
  readonly setupConcurrency: number
  readonly cpuProfDir: string | undefined
  readonly nodeFlags: ReadonlyArray<string>
  readonly serviceEnv: Record<string, string>
  readonly keepDb: boolean
  readonly serviceOutput: boolean
  readonly splitRoles: boolean
  /** With NATS: one API process and this many worker processes (0: off). */
  readonly processes: number
  /** With --processes: SIGKILL the first worker this many seconds after the first webhook is sent. */
  readonly killWorkerAfter: number | undefined
  readonly automation: "light" | "heavy" | "none"
  /** The share of accounts billed by a Monthly schedule of their expected amount (0 to 1; default 0.1). */
  readonly billingShare: number
}

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const PASSWORD = "correct horse battery staple"
const log = (line: string) => process.stdout.write(`bench: ${line}\n`)

const automationOf = (raw: string | undefined): Options["automation"] => {
  if (raw === undefined) return "light"
  if (raw === "light" || raw === "heavy" || raw === "none") return raw
  throw new Error(`--automation ${raw}: light, heavy or none`)
}

const parseArgs = (argv: ReadonlyArray<string>): Options => {
  const { values, flags, num, env } = parseBenchArgs(argv, {
    values: ["automation", "billing-share", "deposits", "accounts", "concurrency", "duplicates", "pgbench-seconds", "drain-seconds", "setup-concurrency", "cpu-prof-dir", "service-env", "node-flag", "processes", "kill-worker-after", "entry"],
    flags: ["keep-db", "service-output", "split-roles"]
  })
  const serviceEnv = env("service-env")
  const cpuProfDir = values.get("cpu-prof-dir")?.at(-1)
  return {
    deposits: num("deposits", 20_000, posInt),
    accounts: num("accounts", 1_000, posInt),
    concurrency: num("concurrency", 64, posInt),
    duplicates: num("duplicates", 0, (n) => n >= 0 && n <= 1),
    pgbenchSeconds: num("pgbench-seconds", 15, posInt),
    drainSeconds: num("drain-seconds", 60, posInt),
    setupConcurrency: num("setup-concurrency", 16, posInt),
    cpuProfDir: cpuProfDir === undefined ? undefined : path.resolve(cpuProfDir),
    nodeFlags: values.get("node-flag") ?? [],
    serviceEnv,
    keepDb: flags.has("keep-db"),
    serviceOutput: flags.has("service-output"),
    splitRoles: flags.has("split-roles") || values.has("processes"),
    processes: values.has("processes") ? num("processes", 1, (n) => posInt(n) && n <= 16) : flags.has("split-roles") ? 1 : 0,
    killWorkerAfter: values.has("kill-worker-after") ? num("kill-worker-after", 5, (n) => n > 0 && n <= 600) : undefined,
    automation: automationOf(values.get("automation")?.at(-1)),
    billingShare: num("billing-share", 0.1, (n) => n >= 0 && n <= 1),
    entry: parseServiceEntry(values.get("entry")?.at(-1))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Postgres scratch databases

const withDb = <A>(name: string, f: (c: pg.Client) => Promise<A>): Promise<A> => withClient(databaseUrl(name), f)

// ---------------------------------------------------------------------------------------------------------------
// Child processes

interface Child {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const run = (command: string, args: ReadonlyArray<string>, opts: { env?: NodeJS.ProcessEnv; onLine?: (line: string) => void } = {}): Child => {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let pending = ""
  const onData = (d: Buffer) => {
    const s = d.toString()
    out += s
    if (out.length > 200_000) out = out.slice(-100_000)
    if (opts.onLine) {
      pending += s
      const lines = pending.split("\n")
      pending = lines.pop()!
      for (const l of lines) if (l.trim() !== "") opts.onLine(l)
    }
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })))
  child.on("error", (e) => (out += `\nspawn failed: ${e.message}`))
  return { child, output: () => out, exited }
}



/** Peak resident set size (VmHWM) of a live process, in MB; 0 when it cannot be read. */
const peakRssMb = (pid: number | undefined) => {
  if (pid === undefined) return 0
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/** User plus system CPU seconds in a /proc stat line (of a process or a thread). */

/** CPU seconds (user + system) a live process has used so far; 0 when it cannot be read. */
const cpuSeconds = (pid: number | undefined) => {
  if (pid === undefined) return 0
  try {
    return statCpu(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return 0
  }
}

/**
 * The reconciler's consumers on the server, summed (connecting for the one question): one per deposit partition and
 * ownership (`reconciler-p<N>-<epoch>`, streams/PartitionLeases.ts), or the single durable of earlier versions.
 */
const reconcilerConsumers = (natsPrefix: string) =>
  Effect.runPromise(
    Effect.flatMap(Nats, (nc) =>
      Effect.promise(async () => {
        const jsm = await jetstreamManager(nc)
        const stream = streamNames({ prefix: natsPrefix }).deposits
        let deliveries = 0
        let waiting = 0
        const byName = new Map<string, number>()
        for await (const ci of jsm.consumers.list(stream)) {
          if (ci.name !== RECONCILER_DURABLE && !ci.name.startsWith(`${RECONCILER_DURABLE}-p`)) continue
          deliveries += ci.delivered.consumer_seq
          waiting += ci.num_waiting
          byName.set(ci.name, ci.delivered.consumer_seq)
        }
        return { deliveries, waiting, byName, messages: (await jsm.streams.info(stream)).state.messages }
      })
    ).pipe(Effect.provide(NatsLive(NATS_URL, "collections-bench")))
  )

/**
 * The reconciler consumers' deliveries: how many messages, and how many deliveries beyond one per message. A consumer
 * of an ownership that ended (a killed worker's partitions taken over) is deleted with its count, so `seen` keeps each
 * consumer's last count from earlier readings (the run's watch, every 2 s); `atLeast` says one had gone, so deliveries it made
 * after its last reading are missing from the figure.
 */
const consumerDeliveries = (natsPrefix: string, seen: Map<string, number> = new Map()) =>
  reconcilerConsumers(natsPrefix).then((c) => {
    for (const [name, n] of c.byName) seen.set(name, Math.max(n, seen.get(name) ?? 0))
    const deliveries = [...seen.values()].reduce((a, b) => a + b, 0)
    return { messages: c.messages, redeliveries: deliveries - c.messages, atLeast: [...seen.keys()].some((name) => !c.byName.has(name)) }
  })

/** Pull requests the reconciler consumers have waiting: above 0 once a reconciler is pulling. */
const consumerWaiting = (natsPrefix: string) => reconcilerConsumers(natsPrefix).then((c) => c.waiting)

/** CPU seconds used so far by every process on the machine, by pid, with its command name. */

/** The machine's busy and total CPU seconds so far (/proc/stat; idle and iowait count as not busy). */

/** Where the machine's CPU went between two snapshots: the service, Postgres, NATS, the sender, everything else. */
const cpuSplit = (
  before: ReturnType<typeof processCpu>, after: ReturnType<typeof processCpu>, servicePids: ReadonlyArray<number | undefined>, senderCpu: number
) => {
  const split = { service: 0, postgres: 0, nats: 0, sender: senderCpu, other: 0 }
  for (const [pid, now] of after) {
    const used = now.cpu - (before.get(pid)?.cpu ?? 0)
    if (used <= 0) continue
    if (servicePids.includes(pid)) split.service += used
    else if (now.comm === "postgres") split.postgres += used
    else if (now.comm === "nats-server") split.nats += used
    else split.other += used
  }
  // The sender has exited by now; its own CPU came in its results file, and it is not in `other` (it left /proc).
  return split
}

/** CPU seconds of each thread of a process so far, by thread id (/proc/<pid>/task). */
const threadCpu = (pid: number | undefined) => {
  const out = new Map<number, number>()
  if (pid === undefined) return out
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(Number(tid), statCpu(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")))
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // the process ended meanwhile
  }
  return out
}

/**
 * A process's CPU by thread between two snapshots: its main thread (tid = pid), its busiest other thread (with the
 * reconciler on a worker thread of the service, that one), and the rest together (V8's GC and compiler threads,
 * libuv's pool, the module loader).
 */
const threadSplit = (pid: number, before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>) => {
  const used = [...after].map(([tid, cpu]) => [tid, cpu - (before.get(tid) ?? 0)] as const)
  const main = used.find(([tid]) => tid === pid)?.[1] ?? 0
  const others = used.filter(([tid]) => tid !== pid).map(([, cpu]) => cpu).sort((a, b) => b - a)
  return { main, busiest: others[0] ?? 0, rest: others.slice(1).reduce((a, b) => a + b, 0) }
}

/**
 * A worker's CPU read just before the bench kills it (`--kill-worker-after`): once it is gone /proc has nothing, so
 * the figures after the run use this reading for it instead of counting it as 0 (which made its share negative).
 */
interface KillReading {
  readonly cpu: number
  readonly threads: ReadonlyMap<number, number>
}

/**
 * CPU per deposit over the middle half of a run: snapshots (every thread of the service's processes, every process on
 * the machine) when a quarter and when three quarters of the deposits are reconciled, polled every 250 ms. `stop`
 * answers the figures, or undefined when the run never got to three quarters.
 */
const middleHalfSampler = (
  count: () => Promise<number>, roughCount: () => Promise<number>, total: number, pids: ReadonlyArray<number | undefined>,
  killed: ReadonlyMap<number, KillReading>
) => {
  type Snapshot = { readonly n: number; readonly atMs: number; readonly threads: ReadonlyArray<Map<number, number>>; readonly processes: ReturnType<typeof processCpu> }
  // The CPU counters at once, then the exact count: `count()` is a scan of the transactions (about 20 ms of Postgres CPU
  // at 20,000 rows), so it runs only twice; the polling reads the cheap `roughCount()` (a probe of the primary key).
  const snapshot = async (): Promise<Snapshot> => {
    const atMs = Date.now()
    const threads = pids.map(threadCpu)
    const processes = processCpu()
    return { n: await count(), atMs, threads, processes }
  }
  let first: Snapshot | undefined
  let last: Snapshot | undefined
  let busy = false
  const timer = setInterval(() => {
    if (busy || last) return
    busy = true
    roughCount().then(async (n) => {
      if (!first && n >= total / 4) first = await snapshot()
      else if (first && n >= (3 * total) / 4) last = await snapshot()
    }, () => undefined).finally(() => (busy = false))
  }, 250)
  timer.unref()
  return {
    stop: async () => {
      clearInterval(timer)
      if (!first || !last || last.n === first.n) return undefined
      const n = last.n - first.n
      const us = (secs: number) => Math.round((secs * 1e6) / n)
      let main = 0
      let reconciler = 0
      let rest = 0
      // A worker killed before the window contributes nothing (its reading at the kill on both sides), one killed within
      // it what it used until the kill.
      const threadsOf = (snap: Snapshot, i: number) => (snap.threads[i]!.size === 0 ? killed.get(i)?.threads : undefined) ?? snap.threads[i]!
      pids.forEach((pid, i) => {
        if (pid === undefined) return
        const t = threadSplit(pid, threadsOf(first!, i), threadsOf(last!, i))
        main += t.main
        reconciler += t.busiest
        rest += t.rest
      })
      const split = cpuSplit(first.processes, last.processes, pids, 0)
      return {
        // A service process that ended within the window other than by the bench's kill left /proc, and its CPU with it.
        incomplete: last.threads.some((t, i) => t.size === 0 && !killed.has(i)),
        from: first.n, to: last.n, depositsPerSecond: (n * 1000) / Math.max(1, last.atMs - first.atMs),
        serviceUs: us(main + reconciler + rest), mainUs: us(main), reconcilerUs: us(reconciler), restUs: us(rest),
        postgresUs: us(split.postgres), natsUs: us(split.nats)
      }
    }
  }
}

/** The main thread's seconds on a CPU and seconds runnable but waiting for one (/proc/<pid>/schedstat). */
const schedSeconds = (pid: number | undefined) => {
  if (pid === undefined) return { running: 0, waiting: 0 }
  try {
    const [running, waiting] = fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number)
    return { running: (running ?? 0) / 1e9, waiting: (waiting ?? 0) / 1e9 }
  } catch {
    return { running: 0, waiting: 0 }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// pgbench

/** The fixed reference workload: one durable commit holding one INSERT of a deposit and one UPDATE of a balance. */
const PGBENCH_SCRIPT = `\\set aid random(1, 1000)
\\set amount random(100, 1000000)
BEGIN;
INSERT INTO bench_deposits (account_id, reference, amount_kobo) VALUES (:aid, md5(random()::text || :client_id || clock_timestamp()::text), :amount);
UPDATE bench_balances SET balance_kobo = balance_kobo + :amount, updated_at = now() WHERE id = :aid;
COMMIT;
`

const runPgbench = async (seconds: number, work: string, cleanups: Array<() => Promise<void>>) => {
  const db = await createScratchDatabase("bench_pg")
  cleanups.push(() => dropScratchDatabase(db))
  await withDb(db, async (c) => {
    await c.query(`CREATE TABLE bench_deposits (
      id bigserial PRIMARY KEY, account_id integer NOT NULL, reference text NOT NULL UNIQUE,
      amount_kobo bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`)
    await c.query(`CREATE TABLE bench_balances (id integer PRIMARY KEY, balance_kobo bigint NOT NULL DEFAULT 0, updated_at timestamptz)`)
    await c.query(`INSERT INTO bench_balances (id) SELECT g FROM generate_series(1, 1000) g`)
    await c.query(`VACUUM ANALYZE`)
  })
  const script = path.join(work, "pgbench.sql")
  fs.writeFileSync(script, PGBENCH_SCRIPT)
  const url = new URL(ADMIN_URL)
  const args = ["-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username || "postgres"), "-c", "8", "-j", "2", "-T", String(seconds), "-n", "-f", script, db]
  const p = run("pgbench", args)
  const { code } = await p.exited
  const out = p.output()
  const m = /tps = ([0-9.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([0-9.]+)/.exec(out)
  if (code !== 0 || !m) throw new Error(`pgbench failed (exit ${code}):\n${out}`)
  await dropScratchDatabase(db)
  cleanups.splice(cleanups.length - 1, 1)
  return Number(m[1])
}

// ---------------------------------------------------------------------------------------------------------------
// The service

const startService = async (opts: Options, databaseUrl: string, natsPrefix: string, dataDir: string) => {
  const port = await freePort()
  if (opts.entry === "npm-start") buildServiceBundle()
  const spawnService = (role: "all" | "api" | "worker") => {
    const nodeArgs = [...(opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`] : []), ...opts.nodeFlags]
    return run(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, ...serviceArgs(opts.entry)], {
      env: childEnv({
        HOST: "127.0.0.1",
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        NATS_URL,
        NATS_PREFIX: natsPrefix,
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        SERVICE_ROLE: role,
        ...opts.serviceEnv
      }),
      ...(opts.serviceOutput ? { onLine: (l: string) => process.stderr.write(`service ${role}: ${l}\n`) } : {})
    })
  }
  const baseUrl = `http://127.0.0.1:${port}`
  const svc = spawnService(opts.splitRoles ? "api" : "all")
  const deadline = Date.now() + 120_000
  for (;;) {
    if (!running(svc)) throw new Error(`the service exited before it listened:\n${svc.output()}`)
    if (Date.now() > deadline) throw new Error(`the service did not answer within 120 s:\n${svc.output()}`)
    if (await fetch(`${baseUrl}/api/v1/dashboard/me`).then(() => true, () => false)) break
    await new Promise((r) => setTimeout(r, 250))
  }
  if (!opts.splitRoles) return { processes: [svc], baseUrl }
  // The workers, once the API has migrated the database; ready once a reconciler is pulling from the stream, and
  // (with several) once a partition lease beat has let each take its share.
  const workers = Array.from({ length: Math.max(1, opts.processes) }, () => spawnService("worker"))
  for (;;) {
    const gone = workers.find((w) => !running(w))
    if (gone) throw new Error(`a worker exited before it started:\n${gone.output()}`)
    if (Date.now() > deadline) throw new Error(`the workers did not start pulling within 120 s:\n${workers[0]!.output()}`)
    if (await consumerWaiting(natsPrefix).then((n) => n > 0, () => false)) break
    await new Promise((r) => setTimeout(r, 250))
  }
  if (workers.length > 1) await new Promise((r) => setTimeout(r, 4_000))
  return { processes: [svc, ...workers], baseUrl }
}


/** Runs `f` over `items` with at most `limit` in flight. */

/** What each account expects: about what ten deposits bring, so accounts go through Underpaid, Exact and Overpaid. */
const EXPECTED_KOBO = 500_000

const setUpTenant = async (baseUrl: string, opts: Options) => {
  const suffix = crypto.randomBytes(4).toString("hex")
  const email = `bench-${suffix}@example.ng`
  const signup = expectStatus("signup", await http(baseUrl, "POST", "/api/v1/dashboard/signup", { json: { businessName: `Bench ${suffix}`, email, password: PASSWORD } }), 201)
  const login = expectStatus("login", await http(baseUrl, "POST", "/api/v1/dashboard/login", { json: { email, password: PASSWORD, mode: "test" } }), 200)
  const key = expectStatus("api key", await http(baseUrl, "POST", "/api/v1/dashboard/api-keys", { token: signup.accessToken, json: { mode: "test" } }), 201)
  const token = expectStatus("token", await http(baseUrl, "POST", "/api/v1/auth/token", { json: { clientId: key.clientId, clientSecret: key.clientSecret } }), 200)
  const provider = expectStatus("provider", await http(baseUrl, "GET", "/api/v1/dashboard/provider", { token: login.accessToken }), 200)
  const started = Date.now()
  const accounts = await boundedMap(Array.from({ length: opts.accounts }, (_, i) => i), opts.setupConcurrency, async (i) => {
    const c = customer(i)
    // A billed account is opened without an expected amount; its Monthly schedule of the same amount opens the first
    // period at once, so it expects what the others do and its deposits are classified alike.
    const billed = i % Math.round(1 / opts.billingShare) === 0 && opts.billingShare > 0
    const body = expectStatus(
      `account ${i}`,
      await http(baseUrl, "POST", "/api/v1/virtual-accounts", { token: token.accessToken, json: { accountRef: `bench-${i}`, name: c.name, ...(billed ? {} : { expectedAmountKobo: EXPECTED_KOBO }) } }),
      201
    )
    if (billed) {
      expectStatus(`schedule ${i}`, await http(baseUrl, "POST", "/api/v1/billing/schedules", {
        token: token.accessToken, json: { accountRef: `bench-${i}`, interval: "Monthly", amountKobo: EXPECTED_KOBO, dueOffsetDays: 7, reference: `bench-${i}` }
      }), 201)
    }
    return { nuban: body.nuban as string, ...c }
  })
  log(`tenant ${signup.tenantId as string} with ${accounts.length} accounts (${opts.billingShare > 0 ? Math.ceil(accounts.length / Math.round(1 / opts.billingShare)) : 0} billed monthly) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (opts.automation !== "none") {
    // One money rule and one payment flow, so their consumers (planner and actor) are on the measured path.
    // light: they judge every deposit and fire for the risky ones (the bench's payers match their customers, so
    //   almost none): what a tenant's usual safety net costs.
    // heavy: the recommended overpayment pattern (Overpaid -> Hold), which on this bench's traffic holds every deposit
    //   past an account's expected amount (about 60% of them), and a flow telling the tenant an account is fully paid.
    const [rule, flow] = opts.automation === "light"
      ? [{ trigger: "HighRisk", action: "ReviewFlag", minRiskScore: 60 }, { name: "risky", trigger: "high-risk", actions: ["notify"], minRiskScore: 60 }]
      : [{ trigger: "Overpaid", action: "Hold" }, { name: "paid in full", trigger: "fully-paid", actions: ["notify"] }]
    expectStatus("rule", await http(baseUrl, "POST", "/api/v1/rules", { token: token.accessToken, json: rule }), 201)
    expectStatus("flow", await http(baseUrl, "POST", "/api/v1/flows", { token: login.accessToken, json: flow }), 201)
    log(`automation (${opts.automation}): rule ${JSON.stringify(rule)}, flow ${JSON.stringify(flow)}`)
  }

  return { tenantId: signup.tenantId as string, merchantId: provider.merchantId as string, webhookSecret: provider.webhookSecret as string, accounts }
}

// ---------------------------------------------------------------------------------------------------------------
// The plan: unique references, some sent twice

interface Planned {
  readonly reference: string
  readonly body: string
  readonly signature: string
}

const makePlan = (opts: Options, tenant: Awaited<ReturnType<typeof setUpTenant>>) => {
  const runTag = String(crypto.randomInt(10_000_000, 100_000_000)) // 8 digits
  const now = Date.now()
  const perAccount = Math.ceil(opts.deposits / tenant.accounts.length)
  const unique: Array<Planned> = []
  for (let i = 0; i < opts.deposits; i++) {
    const account = tenant.accounts[i % tenant.accounts.length]!
    // An account's deposits were paid over the last days, an hour or more apart: typical traffic, not a burst that
    // the velocity rule would (rightly) hold for review. paidAt is the bank's time; latency is measured from sending.
    const nth = Math.floor(i / tenant.accounts.length)
    const paidAt = new Date(now - (perAccount - nth) * 3 * 3_600_000 - crypto.randomInt(0, 3_600_000)).toISOString()
    // 30 characters: NIP virtual bank 999999, the run's tag, the deposit's index.
    const reference = `999999${runTag}${String(i).padStart(16, "0")}`
    const event = {
      event: "transfer.inbound",
      merchantId: tenant.merchantId,
      sessionId: reference,
      accountNumber: account.nuban,
      amountKobo: 20_000 + crypto.randomInt(0, 80_001),
      senderName: account.payerName,
      senderAccountNumber: account.payerAccount,
      senderBankCode: "058",
      narration: `bench deposit ${i}`,
      paidAt,
      reversedSessionId: null
    }
    unique.push({ reference, body: JSON.stringify(event), signature: signSandboxEvent(tenant.webhookSecret, event) })
  }
  // Send order: the unique references in order; each repeated one again later, a fifth of them right behind the first
  // copy (so both copies are often in flight together), the rest at a random later point.
  const keyed: Array<{ key: number; p: Planned }> = unique.map((p, i) => ({ key: i, p }))
  const repeats = Math.round(opts.deposits * opts.duplicates)
  const chosen = new Set<number>()
  while (chosen.size < repeats) chosen.add(crypto.randomInt(0, opts.deposits))
  for (const i of chosen) {
    const key = Math.random() < 0.2 ? i + 0.5 : i + 1 + Math.random() * (opts.deposits - i)
    keyed.push({ key, p: unique[i]! })
  }
  keyed.sort((a, b) => a.key - b.key)
  return { unique, sends: keyed.map((k) => k.p) }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => {
  if (sorted.length === 0) return 0
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

const round1 = (n: number) => Math.round(n * 10) / 10

// ---------------------------------------------------------------------------------------------------------------

const main = async (): Promise<number> => {
  const opts = parseArgs(process.argv.slice(2))
  const work = tempDir("collections-bench-")
  const cleanups: Array<() => Promise<void>> = [async () => fs.rmSync(work, { recursive: true, force: true })]
  let services: ReadonlyArray<Child> = []
  const cleanUp = async () => {
    for (const svc of services) await stop(svc)
    for (const c of cleanups.reverse()) await c().catch((e: unknown) => log(`cleanup step failed: ${String(e)}`))
    cleanups.length = 0
  }
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping and cleaning up`)
    void cleanUp().finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    log(`${opts.deposits} deposits over ${opts.accounts} accounts, concurrency ${opts.concurrency}, duplicates ${opts.duplicates}`)

    // 1. The reference: one durable commit per deposit on this box.
    log(`pgbench: -c 8 -j 2 -T ${opts.pgbenchSeconds}, one INSERT + one UPDATE per transaction`)
    const pgbenchTps = await runPgbench(opts.pgbenchSeconds, work, cleanups)
    log(`pgbench: ${pgbenchTps.toFixed(1)} tps`)

    // 2. The service on its own database and NATS prefix.
    const db = await createScratchDatabase("bench_svc")
    if (!opts.keepDb) cleanups.push(() => dropScratchDatabase(db))
    else log(`keeping database ${db}`)
    const natsPrefix = `bench${crypto.randomBytes(5).toString("hex")}.`
    cleanups.push(() =>
      Effect.runPromise(deleteTopology({ prefix: natsPrefix }).pipe(Effect.provide(NatsLive(NATS_URL, "collections-bench"))))
    )
    const dataDir = path.join(work, "data")
    fs.mkdirSync(dataDir)
    const started = await startService(opts, databaseUrl(db), natsPrefix, dataDir)
    services = started.processes
    const pids = services.map((p) => p.child.pid)
    const sum = (f: (pid: number | undefined) => number): number => pids.reduce<number>((a, pid) => a + f(pid), 0)
    log(`service pid ${pids.join(" + ")} on ${started.baseUrl}, database ${db}, NATS prefix ${natsPrefix}`)

    // 3. Tenant and accounts.
    const tenant = await setUpTenant(started.baseUrl, opts)
    const plan = makePlan(opts, tenant)
    const planFile = path.join(work, "plan.json")
    const resultsFile = path.join(work, "results.json")
    const senderPlan: SenderPlan = {
      baseUrl: started.baseUrl,
      path: "/webhooks/sandbox",
      concurrency: opts.concurrency,
      requests: plan.sends.map((p) => ({ body: p.body, signature: p.signature }))
    }
    fs.writeFileSync(planFile, JSON.stringify(senderPlan))

    // 4. Send from a separate process, watching the reconciled count meanwhile. Every probe goes over ONE connection,
    //    held for the run: a new connection costs Postgres a backend (about 27 ms of its CPU on a 2-core machine), and
    //    the probes run four times a second, so a connection each cost ~1.6 s of Postgres CPU in a 15 s run, all of it
    //    counted in "postgres CPU per deposit" (docs/performance.md, 2026-11-30). pg.Client queues concurrent queries.
    const probe = new pg.Client({ connectionString: databaseUrl(db) })
    await probe.connect()
    cleanups.push(() => probe.end().catch(() => undefined))
    const count = () => probe.query<{ n: string }>(`SELECT count(*) AS n FROM transactions`).then((r) => Number(r.rows[0]!.n))
    // Transactions' ids come from a sequence: how far it has got is the count, give or take a batch that rolled back.
    const roughCount = () => probe.query<{ n: string | null }>(`SELECT max(id) - min(id) + 1 AS n FROM transactions`).then((r) => Number(r.rows[0]!.n ?? 0))
    let rssMb = 0
    const killed = new Map<number, KillReading>()
    /** A service process's CPU so far: a killed worker's as read at its kill. */
    const cpuOf = (pid: number | undefined) => {
      const i = pids.indexOf(pid)
      return killed.get(i)?.cpu ?? cpuSeconds(pid)
    }
    const cpuAtStart = sum(cpuSeconds)
    const cpuAtStartEach = pids.map(cpuSeconds)
    const threadsAtStart = pids.map(threadCpu)
    const processesAtStart = processCpu()
    const walAt = () => withAdmin((c) => c.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`)).then((r) => r.rows[0]!.lsn)
    const walBytes = (from: string, to: string) => withAdmin((c) => c.query<{ n: string }>(`SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::bigint AS n`, [from, to])).then((r) => Number(r.rows[0]!.n))
    const walAtStart = await walAt()
    const socketsAtStart = socketCounts(pids)
    const machineAtStart = machineCpu()
    const schedOfService = () => pids.map(schedSeconds).reduce((a, b) => ({ running: a.running + b.running, waiting: a.waiting + b.waiting }), { running: 0, waiting: 0 })
    const schedAtStart = schedOfService()
    const wallAtStart = Date.now()
    // With several workers a consumer can go mid-run (consumerDeliveries): its count is read every 2 s while it lasts.
    const deliveriesSeen = new Map<string, number>()
    const watch = setInterval(() => {
      rssMb = Math.max(rssMb, sum(peakRssMb))
      roughCount().then((n) => log(`reconciled ${n}/${plan.unique.length}`), () => undefined)
      if (pids.length > 1) consumerDeliveries(natsPrefix, deliveriesSeen).catch(() => undefined)
    }, 2_000)
    // The middle half: CPU snapshots when a quarter and three quarters of the deposits are reconciled, so the figures
    // leave out the warm-up (V8 compiling the hot code, the first batches) and the drain at the end.
    const middle = middleHalfSampler(count, roughCount, plan.unique.length, pids, killed)
    log(`sending ${plan.sends.length} webhooks (${plan.sends.length - plan.unique.length} repeats)`)
    const killer = opts.killWorkerAfter === undefined || services.length < 3 ? undefined : setTimeout(() => {
      log(`killing worker 1 (pid ${services[1]!.child.pid}) with SIGKILL, ${opts.killWorkerAfter} s after the first send`)
      killed.set(1, { cpu: cpuSeconds(pids[1]), threads: threadCpu(pids[1]) })
      services[1]!.child.kill("SIGKILL")
    }, opts.killWorkerAfter * 1000)
    const sender = run(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "test", "bench", "sender.ts"), planFile, resultsFile], {
      env: process.env,
      onLine: (l) => process.stdout.write(`bench: ${l}\n`)
    })
    const senderExit = await sender.exited
    if (killer) clearTimeout(killer)
    if (senderExit.code !== 0) {
      clearInterval(watch)
      throw new Error(`the sender failed (exit ${senderExit.code}):\n${sender.output()}`)
    }
    const results = JSON.parse(fs.readFileSync(resultsFile, "utf8")) as SenderResults

    // Per reference: first send time, and whether any copy was answered 200.
    const firstSend = new Map<string, number>()
    const accepted = new Set<string>()
    const statuses = new Map<string, number>()
    plan.sends.forEach((p, i) => {
      const sent = results.sendMs[i]!
      const prev = firstSend.get(p.reference)
      if (prev === undefined || sent < prev) firstSend.set(p.reference, sent)
      const st = results.status[i]!
      const key = st === 200 ? `200 ${results.result[i]}` : String(st)
      statuses.set(key, (statuses.get(key) ?? 0) + 1)
      if (st === 200) accepted.add(p.reference)
    })
    log(`answers: ${[...statuses].map(([k, v]) => `${k}: ${v}`).join(", ")}; sender retries ${results.retries}`)
    const firstSentMs = results.sendMs.reduce((a, b) => Math.min(a, b), Infinity)
    const lastAnswerMs = results.doneMs.reduce((a, b) => Math.max(a, b), 0)
    const receiverRequestsPerSecond = results.sendMs.length / ((lastAnswerMs - firstSentMs) / 1000)
    log(`receiver: ${results.sendMs.length} requests in ${((lastAnswerMs - firstSentMs) / 1000).toFixed(2)} s`)

    // 5. Drain: wait until every accepted reference has its transaction, or until the count has not moved for the
    //    drain timeout (the pipeline stalled: what is missing then is lost).
    let lastCount = -1
    let lastProgressAt = Date.now()
    for (;;) {
      // The cheap probe until it says all are in; then the exact count (a batch that rolled back leaves a gap in the ids).
      const rough = await roughCount()
      const n = rough >= accepted.size ? await count() : rough
      if (n >= accepted.size) break
      if (n !== lastCount) {
        lastCount = n
        lastProgressAt = Date.now()
      } else if (Date.now() - lastProgressAt > opts.drainSeconds * 1000) {
        log(`drain timeout: ${n} of ${accepted.size} reconciled, no progress for ${opts.drainSeconds} s`)
        break
      }
      await new Promise((r) => setTimeout(r, 200))
    }
    clearInterval(watch)
    const middleHalf = await middle.stop()
    rssMb = Math.max(rssMb, sum(peakRssMb))
    const serviceCpu = sum(cpuOf) - cpuAtStart
    const machine = machineCpu()
    const split = cpuSplit(processesAtStart, processCpu(), pids, results.cpuSeconds)
    // A killed worker is not in /proc any more: its CPU until the kill.
    for (const [i, k] of killed) split.service += k.cpu - cpuAtStartEach[i]!
    const sockets = socketTraffic(socketsAtStart, socketCounts(pids), new Set([Number(new URL(started.baseUrl).port)]))
    const walAtEnd = await walAt()
    const wal = await walBytes(walAtStart, walAtEnd)
    // The LSNs: `pg_waldump --stats=record -s FROM -e TO` then says what the WAL was made of (docs/performance.md).
    log(`Postgres WAL while sending and draining: ${(wal / 1e6).toFixed(1)} MB, ${Math.round(wal / Math.max(1, plan.unique.length))} bytes per unique deposit ` +
      `(LSN ${walAtStart} to ${walAtEnd})`)
    const busy = machine.busy - machineAtStart.busy
    const perDeposit = (secs: number) => `${((secs * 1000) / Math.max(1, plan.unique.length)).toFixed(2)} ms`
    log(`machine CPU while sending and draining: ${busy.toFixed(1)} of ${(machine.total - machineAtStart.total).toFixed(1)} cpu-s busy ` +
      `(${Math.round((100 * busy) / Math.max(0.01, machine.total - machineAtStart.total))}%); per unique deposit: ` +
      Object.entries(split).map(([k, v]) => `${k} ${perDeposit(v)}`).join(", "))
    if (pids.length > 1) {
      log(`service CPU per process: ${pids.map((pid, i) => `${opts.splitRoles ? (i === 0 ? "api" : `worker ${i}`) : pid}${killed.has(i) ? " (until killed)" : ""} ` +
        perDeposit(cpuOf(pid) - cpuAtStartEach[i]!)).join(", ")} per deposit`)
    }
    pids.forEach((pid, i) => {
      if (pid === undefined) return
      const t = threadSplit(pid, threadsAtStart[i]!, killed.get(i)?.threads ?? threadCpu(pid))
      log(`service${pids.length > 1 ? ` ${opts.splitRoles ? (i === 0 ? "api" : `worker ${i}`) : pid}` : ""}${killed.has(i) ? " (until killed)" : ""} CPU by thread: main ${perDeposit(t.main)}, ` +
        `busiest other (the reconciler's, when it has one) ${perDeposit(t.busiest)}, the rest (V8's GC and compiler threads, libuv) ${perDeposit(t.rest)} per deposit`)
    })
    // What the service said to each side, per deposit (the kernel's counters of its TCP connections, `ss -ti`): a
    // change that makes its statements or its messages longer shows here before it shows in CPU.
    const perUnique = (n: number) => (n / Math.max(1, plan.unique.length)).toFixed(n / Math.max(1, plan.unique.length) < 10 ? 2 : 0)
    log(`service TCP traffic per unique deposit (sent / received bytes, in sent / received segments): ` +
      [...sockets].sort(([a], [b]) => a.localeCompare(b)).map(([side, t]) =>
        `${side} ${perUnique(t.sent)} / ${perUnique(t.received)} B in ${perUnique(t.segsOut)} / ${perUnique(t.segsIn)}`).join("; "))
    if (middleHalf) {
      log(`the middle half (deposits ${middleHalf.from} to ${middleHalf.to}, after the warm-up): ${Math.round(middleHalf.depositsPerSecond)} deposits/s; ` +
        `CPU per deposit: service ${middleHalf.serviceUs} us (main ${middleHalf.mainUs}, reconciler ${middleHalf.reconcilerUs}, the rest ${middleHalf.restUs}), ` +
        `postgres ${middleHalf.postgresUs} us, nats ${middleHalf.natsUs} us` +
        (middleHalf.incomplete ? " (a service process ended within it: its CPU is left out)" : ""))
    } else log("the middle half: not measured (the run ended before three quarters of the deposits were reconciled)")
    const sched = schedOfService()
    const wall = (Date.now() - wallAtStart) / 1000
    await consumerDeliveries(natsPrefix, deliveriesSeen).then(
      (c) => log(`reconciler consumer: ${c.messages} messages delivered, ${c.atLeast ? "at least " : ""}${c.redeliveries} redeliveries` +
        (c.atLeast ? " (a consumer of an ownership that ended was deleted; its deliveries after its last reading, 2 s apart, are not counted)" : "")),
      (e: unknown) => log(`could not read the reconciler consumer: ${String(e)}`)
    )

    const outcome = await withDb(db, async (c) => {
      const rows = await c.query<{ reference: string; ms: number }>(
        `SELECT reference, (extract(epoch FROM reconciled_at) * 1000)::float8 AS ms FROM transactions WHERE tenant_id = $1`,
        [tenant.tenantId]
      )
      const doubled = await c.query<{ n: string }>(`SELECT count(*) - count(DISTINCT reference) AS n FROM transactions`)
      const inbox = await c.query<{ total: string; pending: string }>(`SELECT count(*) AS total, count(*) FILTER (WHERE reconciled_at IS NULL) AS pending FROM inbound_events`)
      return { rows: rows.rows, doubled: Number(doubled.rows[0]!.n), inbox: inbox.rows[0]! }
    })
    log(`service CPU while sending and draining: ${serviceCpu.toFixed(1)} s in ${wall.toFixed(1)} s (${((serviceCpu * 1000) / Math.max(1, plan.sends.length)).toFixed(2)} ms per webhook); ` +
      `its main thread(s) ran ${(sched.running - schedAtStart.running).toFixed(1)} s and waited ${(sched.waiting - schedAtStart.waiting).toFixed(1)} s for a CPU`)
    log(`inbox: ${outcome.inbox.total} rows, ${outcome.inbox.pending} not reconciled; transactions: ${outcome.rows.length}`)
    let lastAppliedMs: number | undefined
    if (opts.automation !== "none") {
      // The rules and flows run behind the reconciler: how far behind it they were, and what they did.
      const caughtUp = Date.now()
      const automation = await withDb(db, async (c) => {
        for (;;) {
          const p = await c.query<{ n: string }>(`SELECT count(*) AS n FROM outbox_pending WHERE consumer IN ('automation', 'automation-actions')`)
          if (Number(p.rows[0]!.n) === 0 || Date.now() - caughtUp > opts.drainSeconds * 1000) break
          await new Promise((r) => setTimeout(r, 100))
        }
        const r = await c.query<{ runs: string; open: string; holds: string; held: string; dead: string; pending: string; lastMs: number | null }>(
          `SELECT (SELECT count(*) FROM automation_runs) AS runs, (SELECT count(*) FROM automation_runs WHERE completed_at IS NULL) AS open,
             (SELECT (extract(epoch FROM max(completed_at)) * 1000)::float8 FROM automation_runs) AS "lastMs",
             (SELECT count(*) FROM holds) AS holds, (SELECT COALESCE(sum(held_kobo), 0) FROM holds WHERE status = 'Held') AS held,
             (SELECT count(*) FROM consumer_dead_letters) AS dead,
             (SELECT count(*) FROM outbox_pending WHERE consumer IN ('automation', 'automation-actions')) AS pending`)
        return r.rows[0]!
      })
      lastAppliedMs = automation.lastMs ?? undefined
      log(`automation: ${automation.runs} runs (${automation.open} not applied), ${automation.holds} holds (${automation.held} kobo held), ` +
        `${automation.dead} dead letters, ${automation.pending} events pending ${((Date.now() - caughtUp) / 1000).toFixed(1)} s after the last deposit was read back`)
    }

    if (opts.processes > 1) {
      const applied = await withDb(db, (c) =>
        c.query<{ reference: string; nuban: string }>(`SELECT reference, nuban FROM transactions WHERE tenant_id = $1 ORDER BY id`, [tenant.tenantId]))
      const order = outOfOrder(await streamOrderOf(NATS_URL, natsPrefix, tenant.tenantId), applied.rows)
      log(`stream order (${opts.processes} workers${opts.killWorkerAfter === undefined ? "" : ", one killed"}): ${order.accounts} accounts, ` +
        `${order.accountsOutOfOrder} with a deposit applied out of stream order, ${order.overtaken} deposits overtaken`)
    }
    const reconciledAt = new Map(outcome.rows.map((r) => [r.reference, r.ms]))
    let lost = 0
    for (const ref of accepted) if (!reconciledAt.has(ref)) lost++
    const latencies: Array<number> = []
    let lastReconciledMs = firstSentMs
    for (const [ref, sent] of firstSend) {
      const at = reconciledAt.get(ref)
      if (at === undefined) continue
      latencies.push(at - sent)
      lastReconciledMs = Math.max(lastReconciledMs, at)
    }
    latencies.sort((a, b) => a - b)
    const reconciledUnique = latencies.length
    if (reconciledUnique < plan.unique.length) log(`only ${reconciledUnique} of ${plan.unique.length} unique deposits reconciled`)

    // The service's peak RSS, read while it is still alive, then stop it (a graceful stop writes a CPU profile).
    for (const svc of services) await stop(svc)
    if (opts.cpuProfDir) log(`CPU profile written under ${opts.cpuProfDir}`)

    const result: BenchResult = {
      depositsPerSecond: reconciledUnique === 0 ? 0 : round1(reconciledUnique / (Math.max(1, lastReconciledMs - firstSentMs) / 1000)),
      receiverRequestsPerSecond: round1(receiverRequestsPerSecond),
      p50Ms: Math.round(percentile(latencies, 50)),
      p99Ms: Math.round(percentile(latencies, 99)),
      pgbenchTps: round1(pgbenchTps),
      lost,
      doubled: outcome.doubled,
      peakRssMb: round1(rssMb),
      workloadPerSecond: reconciledUnique === 0 ? 0 : round1(reconciledUnique / (Math.max(1, Math.max(lastReconciledMs, lastAppliedMs ?? 0) - firstSentMs) / 1000)),
      automationLagMs: Math.max(0, Math.round((lastAppliedMs ?? lastReconciledMs) - lastReconciledMs))
    }
    log(`end to end: ${reconciledUnique} deposits in ${((lastReconciledMs - firstSentMs) / 1000).toFixed(2)} s; ` +
      `${(result.depositsPerSecond / result.pgbenchTps).toFixed(2)} x pgbench`)
    await cleanUp()
    process.stdout.write(`${JSON.stringify(result)}\n`)
    return 0
  } catch (e) {
    log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    for (const svc of services) if (running(svc)) log(`service output (tail):\n${svc.output().slice(-4000)}`)
    await cleanUp()
    return 1
  }
}

main().then((code) => process.exit(code))
