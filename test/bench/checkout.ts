/**
 * Live checkout benchmark (issue 19): `npm run bench:checkout -- --streams 1000`.
 *
 * Against the real Postgres and NATS of this machine it
 *  1. starts the service as `npm start` does (its node flags and `src/start.mjs`, SERVICE_ROLE=all)
 *     on a scratch database and its own NATS prefix;
 *  2. signs up a test tenant, creates N accounts over HTTP (each expecting `--amount` kobo) and one checkout session
 *     per account;
 *  3. opens N concurrent SSE streams (`GET /api/v1/checkout/{token}/stream`) from this process (node:http, an agent
 *     allowing N sockets; events parsed incrementally), in four steps of N/4, reading the service's memory after each:
 *     how its RSS grows per open stream;
 *  4. measures the service's CPU for `--idle-seconds` with no stream open (before step 3: its own background work) and with
 *     every stream open and nothing happening (what the streams cost: each heartbeat re-reads its snapshot);
 *  5. once every stream has its `snapshot`, sends one signed sandbox deposit per account (the exact expected amount)
 *     at a steady `--rate` per second over keep-alive connections, and records for each account when its `update`
 *     (status paid) reaches the client; meanwhile a core NATS subscription of its own on the tenant's reconciled
 *     subjects records when the outbox relay's publish of each account's event arrives;
 *  6. reads each deposit's `transactions.reconciled_at` (the reconciling transaction's now(), on the database clock
 *     of this same machine: a little BEFORE its commit, so the figures are upper bounds) and reports, per account,
 *     reconciled_at -> update received (Date.now()), split into reconciled_at -> relay publish seen on NATS, and
 *     NATS -> update received (the service's subscribe fan-out, its snapshot re-read and the SSE write).
 *
 * Progress lines first; the LAST line is one JSON object:
 *   streams, snapshots, updates    streams asked for, streams that got their snapshot, streams that got their update
 *   p50Ms, p99Ms, maxMs            reconciled_at -> `update` event received by the client
 *   relayP50Ms, relayP99Ms         reconciled_at -> the relay's publish seen on NATS by this process
 *   fanoutP50Ms, fanoutP99Ms       that NATS message seen here -> `update` received here (same clock)
 *   openP50Ms, openP99Ms           stream request sent -> its `snapshot` received (all opened at once in steps)
 *   rssMb                          the service's VmRSS: idle (after start), beforeStreams (accounts and sessions
 *                                  made), withStreams (all open), afterDeposits (streams still open), afterClose
 *   hwmMb                          the service's VmHWM at the end
 *   kbPerStream                    least-squares slope of VmRSS over the open-stream count (0, N/4, N/2, 3N/4, N);
 *                                  RSS moves with the young generation's garbage, so this is rough: see --heap
 *   heapKbPerStream, liveHeapMb,   (with --heap) the same slope over the main isolate's heap in use after a full GC
 *   liveHeapAfterCloseMb           (through the service's inspector), the readings, and that heap once the streams closed
 *   baselineServiceCpuPercent,     the service's CPU (% of one core) over --idle-seconds with no stream open, and
 *   idleServiceCpuPercent          with every stream open and no deposit (null with --idle-seconds 0)
 *   clientLagP99Ms                 this process's event-loop delay p99 while the deposits ran (it reads every stream)
 *   load                           the machine's 1-minute load average before and after, and its busy share and the
 *                                  CPU seconds of the service, Postgres, NATS and everything else during the deposits
 * Everything it made (service, scratch database, NATS streams) is removed at the end, also on failure and on Ctrl-C.
 *
 * Flags: --streams N (1000), --rate deposits per second (50), --amount kobo (250000), --open-concurrency (200 stream
 * requests in flight while opening), --setup-concurrency (16), --settle-seconds (2: pause before each memory reading),
 * --wait-seconds (30: after the last deposit, how long missing updates are waited for), --idle-seconds (16, one
 * heartbeat period and a bit; 0 skips both idle phases), --service-env K=V (repeatable, e.g. CHECKOUT_HEARTBEAT_MS=5000),
 * --heap (run the service with --inspect on a loopback port and read its live heap after a forced full GC at each
 * memory reading; the forced GCs and the inspector disturb the timings a little: compare with a run without it),
 * --keep-db, --service-output. The npm script runs node with --experimental-websocket (Node 20's WebSocket, for --heap).
 * Exit code 0 only when every stream got its update.
 */
import { connect } from "@nats-io/transport-node"
import { Effect } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { parseReconciledSubject, reconciledFilter } from "../../streams/Topology.js"
import { buildServiceBundle, childEnv, freePort, http as call, REPO_ROOT, SERVICE_NODE_FLAGS, serviceArgs, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase, withClient } from "../support/TestDatabase.js"
import { customer } from "./customers.js"
import { parseBenchArgs, positiveInteger as posInt } from "./args.js"
import { boundedMap, expectStatus, machineCpu, processCpu, running, stop } from "./shared.js"

interface Options {
  readonly streams: number
  readonly rate: number
  readonly amount: number
  readonly openConcurrency: number
  readonly setupConcurrency: number
  readonly settleSeconds: number
  readonly waitSeconds: number
  readonly serviceEnv: Record<string, string>
  readonly idleSeconds: number
  readonly heap: boolean
  readonly keepDb: boolean
  readonly serviceOutput: boolean
}

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const PASSWORD = "correct horse battery staple"
const log = (line: string) => process.stdout.write(`bench: ${line}\n`)
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

const parseArgs = (argv: ReadonlyArray<string>): Options => {
  const { flags, num, env } = parseBenchArgs(argv, {
    values: ["streams", "rate", "amount", "open-concurrency", "setup-concurrency", "settle-seconds", "wait-seconds", "idle-seconds", "service-env"],
    flags: ["keep-db", "service-output", "heap"]
  })
  const serviceEnv = env("service-env")
  return {
    streams: num("streams", 1000, posInt),
    rate: num("rate", 50, (n) => n > 0 && n <= 5000),
    amount: num("amount", 250_000, posInt),
    openConcurrency: num("open-concurrency", 200, posInt),
    setupConcurrency: num("setup-concurrency", 16, posInt),
    settleSeconds: num("settle-seconds", 2, (n) => n >= 0),
    waitSeconds: num("wait-seconds", 30, posInt),
    idleSeconds: num("idle-seconds", 16, (n) => n >= 0),
    heap: flags.has("heap"),
    serviceEnv,
    keepDb: flags.has("keep-db"),
    serviceOutput: flags.has("service-output")
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The service process and what /proc tells about it

interface Child {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<unknown>
}



const startService = async (opts: Options, dbUrl: string, natsPrefix: string, dataDir: string) => {
  const port = await freePort()
  const inspectPort = opts.heap ? await freePort() : undefined
  const inspect = inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectPort}`]
  buildServiceBundle()
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...inspect, ...serviceArgs("npm-start")], {
    cwd: REPO_ROOT,
    env: childEnv({
      HOST: "127.0.0.1", PORT: String(port), DATABASE_URL: dbUrl, NATS_URL, NATS_PREFIX: natsPrefix, DATA_DIR: dataDir,
      LOG_LEVEL: "warn", SERVICE_ROLE: "all", ...opts.serviceEnv
    }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  const onData = (d: Buffer) => {
    out += d.toString()
    if (out.length > 200_000) out = out.slice(-100_000)
    if (opts.serviceOutput) process.stderr.write(`service: ${d.toString()}`)
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  const exited = new Promise((resolve) => child.on("close", resolve))
  const svc: Child = { child, output: () => out, exited }
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (!running(svc)) throw new Error(`the service exited before it listened:\n${out}`)
    if (Date.now() > deadline) throw new Error(`the service did not answer within 120 s:\n${out}`)
    if (await fetch(`${baseUrl}/api/v1/dashboard/me`).then(() => true, () => false)) break
    await sleep(250)
  }
  return { svc, baseUrl, port, inspectPort }
}

/**
 * With --heap: the service's main isolate through its inspector (Node 20's WebSocket, `--experimental-websocket`):
 * a full GC, then the heap in use, in MB. What RSS cannot tell: how much of it is live, not garbage not yet collected.
 */
const inspectorHeap = async (port: number) => {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>
  const WS = (globalThis as any).WebSocket
  if (typeof WS !== "function") throw new Error("--heap needs a global WebSocket (node --experimental-websocket, as the npm script runs it)")
  const ws = new WS(list[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = () => reject(new Error("cannot reach the service's inspector"))
  })
  let id = 0
  const waiting = new Map<number, (r: any) => void>()
  ws.onmessage = (m: { data: string }) => {
    const msg = JSON.parse(m.data)
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result)
  }
  const send = (method: string) => new Promise<any>((resolve) => {
    const n = ++id
    waiting.set(n, resolve)
    ws.send(JSON.stringify({ id: n, method }))
  })
  return {
    liveMb: async () => {
      await send("HeapProfiler.collectGarbage")
      const r = await send("Runtime.getHeapUsage")
      return round1(r.usedSize / 1024 / 1024)
    },
    close: () => ws.close()
  }
}

/** VmRSS and VmHWM of a live process, in MB (0 when it cannot be read). */
const memOf = (pid: number | undefined) => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? 0)
    return { rssMb: round1(kb("VmRSS") / 1024), hwmMb: round1(kb("VmHWM") / 1024) }
  } catch {
    return { rssMb: 0, hwmMb: 0 }
  }
}

/** CPU seconds so far of every process on the machine, by pid, with its command name. */

/** The machine's busy and total CPU seconds so far (/proc/stat; idle and iowait count as not busy). */

const cpuSplit = (before: ReturnType<typeof processCpu>, after: ReturnType<typeof processCpu>, servicePid: number, selfPid: number) => {
  const split = { service: 0, postgres: 0, nats: 0, bench: 0, other: 0 }
  for (const [pid, now] of after) {
    const used = now.cpu - (before.get(pid)?.cpu ?? 0)
    if (used <= 0) continue
    if (pid === servicePid) split.service += used
    else if (pid === selfPid) split.bench += used
    else if (now.comm === "postgres") split.postgres += used
    else if (now.comm === "nats-server") split.nats += used
    else split.other += used
  }
  return Object.fromEntries(Object.entries(split).map(([k, v]) => [k, round1(v)]))
}



interface Seeded {
  readonly accountRef: string
  readonly nuban: string
  readonly payerName: string
  readonly payerAccount: string
  readonly streamUrl: string
}

const setUpTenant = async (baseUrl: string, opts: Options) => {
  const suffix = crypto.randomBytes(4).toString("hex")
  const email = `cobench-${suffix}@example.ng`
  const signup = expectStatus("signup", await call(baseUrl, "POST", "/api/v1/dashboard/signup", { json: { businessName: `Checkout bench ${suffix}`, email, password: PASSWORD } }), 201)
  const login = expectStatus("login", await call(baseUrl, "POST", "/api/v1/dashboard/login", { json: { email, password: PASSWORD, mode: "test" } }), 200)
  const key = expectStatus("api key", await call(baseUrl, "POST", "/api/v1/dashboard/api-keys", { token: signup.accessToken, json: { mode: "test" } }), 201)
  const token = expectStatus("token", await call(baseUrl, "POST", "/api/v1/auth/token", { json: { clientId: key.clientId, clientSecret: key.clientSecret } }), 200)
  const provider = expectStatus("provider", await call(baseUrl, "GET", "/api/v1/dashboard/provider", { token: login.accessToken }), 200)
  const started = Date.now()
  const accounts = await boundedMap(Array.from({ length: opts.streams }, (_, i) => i), opts.setupConcurrency, async (i): Promise<Seeded> => {
    const c = customer(i)
    const accountRef = `cobench-${i}`
    const body = expectStatus(`account ${i}`, await call(baseUrl, "POST", "/api/v1/virtual-accounts", {
      token: token.accessToken, json: { accountRef, name: c.name, expectedAmountKobo: opts.amount }
    }), 201)
    const session = expectStatus(`session ${i}`, await call(baseUrl, "POST", "/api/v1/checkout/sessions", { token: token.accessToken, json: { accountRef } }), 201)
    return { accountRef, nuban: body.nuban as string, payerName: c.payerName, payerAccount: c.payerAccount, streamUrl: session.streamUrl as string }
  })
  log(`tenant ${signup.tenantId as string}: ${accounts.length} accounts (expecting ${opts.amount} kobo each) and sessions in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return { tenantId: signup.tenantId as string, merchantId: provider.merchantId as string, webhookSecret: provider.webhookSecret as string, accounts }
}

// ---------------------------------------------------------------------------------------------------------------
// SSE clients

interface SseEvent {
  readonly event: string
  readonly id: string | undefined
  readonly data: string
}

/** One SSE stream read with node:http; events parsed as they arrive. */
class SseClient {
  requestedAt = 0
  snapshotAt: number | undefined
  updateAt: number | undefined
  updateData: any
  updates = 0
  heartbeats = 0
  ended: string | undefined
  private buffer = ""
  private req: http.ClientRequest | undefined
  private onSnapshot: (() => void) | undefined

  constructor(readonly account: Seeded, private readonly baseUrl: string, private readonly agent: http.Agent, private readonly amount: number) {}

  /** Resolves once the `snapshot` event came (or the stream failed: `ended` says why). */
  open(): Promise<void> {
    return new Promise((resolve) => {
      this.onSnapshot = resolve
      this.requestedAt = Date.now()
      const req = http.get(new URL(this.account.streamUrl, this.baseUrl), { agent: this.agent, headers: { accept: "text/event-stream" } }, (res) => {
        if (res.statusCode !== 200) {
          this.end(`status ${res.statusCode}`)
          res.resume()
          return
        }
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => this.feed(chunk))
        res.on("end", () => this.end("the service ended the stream"))
        res.on("error", (e) => this.end(`response error: ${e.message}`))
      })
      req.on("error", (e) => this.end(`request error: ${e.message}`))
      this.req = req
    })
  }

  close() {
    this.ended ??= "closed by the bench"
    this.req?.destroy()
  }

  private end(why: string) {
    this.ended ??= why
    this.onSnapshot?.()
    this.onSnapshot = undefined
  }

  private feed(chunk: string) {
    const now = Date.now()
    this.buffer += chunk
    for (;;) {
      const at = this.buffer.indexOf("\n\n")
      if (at < 0) return
      const block = this.buffer.slice(0, at)
      this.buffer = this.buffer.slice(at + 2)
      let event = "message"
      let id: string | undefined
      const data: Array<string> = []
      let comment = false
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) comment = true
        else if (line.startsWith("event: ")) event = line.slice(7)
        else if (line.startsWith("id: ")) id = line.slice(4)
        else if (line.startsWith("data: ")) data.push(line.slice(6))
      }
      if (comment && data.length === 0) {
        this.heartbeats++
        continue
      }
      if (data.length === 0) continue // retry:
      this.onEvent({ event, id, data: data.join("\n") }, now)
    }
  }

  private onEvent(e: SseEvent, now: number) {
    if (e.event === "snapshot") {
      this.snapshotAt ??= now
      this.onSnapshot?.()
      this.onSnapshot = undefined
    } else if (e.event === "update") {
      this.updates++
      const s = JSON.parse(e.data)
      if (this.updateAt === undefined && s.amountPaidKobo >= this.amount) {
        this.updateAt = now
        this.updateData = s
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------

const percentile = (sorted: ReadonlyArray<number>, p: number) => {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}
const round1 = (n: number) => Math.round(n * 10) / 10
const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)

/** Least-squares slope of y over x. */
const slope = (points: ReadonlyArray<readonly [number, number]>) => {
  const n = points.length
  const mx = points.reduce((a, [x]) => a + x, 0) / n
  const my = points.reduce((a, [, y]) => a + y, 0) / n
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0)
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

/** One POST over a keep-alive agent; the status, 0 when no answer came. */
const post = (baseUrl: string, agent: http.Agent, urlPath: string, body: string, signature: string) =>
  new Promise<number>((resolve) => {
    const req = http.request(new URL(urlPath, baseUrl), {
      method: "POST", agent, timeout: 30_000,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-sandbox-signature": signature }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
      res.on("error", () => resolve(0))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(0))
    req.end(body)
  })

const main = async (): Promise<number> => {
  const opts = parseArgs(process.argv.slice(2))
  const work = tempDir("checkout-bench-")
  const cleanups: Array<() => Promise<void>> = [async () => fs.rmSync(work, { recursive: true, force: true })]
  let service: Child | undefined
  let clients: Array<SseClient> = []
  const cleanUp = async () => {
    for (const c of clients) c.close()
    if (service) await stop(service)
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
    const loadBefore = os.loadavg()[0]!
    log(`${opts.streams} streams, deposits at ${opts.rate}/s; machine load ${loadBefore.toFixed(2)} (other work on this machine shows here)`)
    const db = await createScratchDatabase("cobench_svc")
    if (!opts.keepDb) cleanups.push(() => dropScratchDatabase(db))
    else log(`keeping database ${db}`)
    const natsPrefix = `cobench${crypto.randomBytes(5).toString("hex")}.`
    cleanups.push(() => Effect.runPromise(deleteTopology({ prefix: natsPrefix }).pipe(Effect.provide(NatsLive(NATS_URL, "checkout-bench")))))
    const dataDir = path.join(work, "data")
    fs.mkdirSync(dataDir)
    const started = await startService(opts, databaseUrl(db), natsPrefix, dataDir)
    service = started.svc
    const pid = service.child.pid!
    const settle = () => sleep(opts.settleSeconds * 1000)
    await settle()
    const idle = memOf(pid)
    log(`service pid ${pid} on ${started.baseUrl}, database ${db}, NATS prefix ${natsPrefix}; idle RSS ${idle.rssMb} MB`)

    const tenant = await setUpTenant(started.baseUrl, opts)
    await settle()
    const heap = started.inspectPort === undefined ? undefined : await inspectorHeap(started.inspectPort)
    if (heap) cleanups.push(async () => heap.close())
    const heapPoints: Array<readonly [number, number]> = []
    const heapReading = async (streams: number) => {
      if (!heap) return ""
      const mb = await heap.liveMb()
      heapPoints.push([streams, mb])
      return `, live heap after a full GC ${mb} MB`
    }
    // With --heap, each RSS reading follows the full GC of the heap reading, so both see the same state.
    const heap0 = await heapReading(0)
    const beforeStreams = memOf(pid)
    log(`RSS before streams ${beforeStreams.rssMb} MB (HWM ${beforeStreams.hwmMb} MB)${heap0}`)

    // What the relay publishes, seen from here: the first reconciled message of each account.
    const nc = await connect({ servers: NATS_URL, name: "checkout-bench" })
    cleanups.push(() => nc.close())
    const natsAt = new Map<string, number>()
    const topology = { prefix: natsPrefix }
    nc.subscribe(reconciledFilter(topology, tenant.tenantId, "test"), {
      callback: (err, msg) => {
        if (err) return
        const now = Date.now()
        const parts = parseReconciledSubject(topology, msg.subject)
        if (parts._tag === "Some" && !natsAt.has(parts.value.accountRef)) natsAt.set(parts.value.accountRef, now)
      }
    })
    await nc.flush()

    // The service's own background work (consumer polls, sweepers) with no stream open: the baseline for the idle
    // phase below.
    const baseCpuBefore = processCpu()
    const baseStarted = Date.now()
    await sleep(opts.idleSeconds * 1000)
    const baseCpu = cpuSplit(baseCpuBefore, processCpu(), pid, process.pid)
    const basePercent = Math.round((100 * baseCpu.service!) / Math.max(0.01, (Date.now() - baseStarted) / 1000))
    log(`${opts.idleSeconds} s with no stream open: service CPU ${baseCpu.service} s (${basePercent}% of a core), Postgres ${baseCpu.postgres} s`)

    // Open the streams in four steps, reading the service's memory after each.
    const streamAgent = new http.Agent({ keepAlive: false, maxSockets: opts.streams + 16 })
    clients = tenant.accounts.map((a) => new SseClient(a, started.baseUrl, streamAgent, opts.amount))
    const memPoints: Array<readonly [number, number]> = [[0, beforeStreams.rssMb]]
    const openStarted = Date.now()
    for (let step = 1; step <= 4; step++) {
      const from = Math.floor(((step - 1) * opts.streams) / 4)
      const to = Math.floor((step * opts.streams) / 4)
      await boundedMap(clients.slice(from, to), opts.openConcurrency, (c) => c.open())
      await settle()
      const heapNow = await heapReading(to)
      const m = memOf(pid)
      memPoints.push([to, m.rssMb])
      log(`${to} streams open (${clients.slice(0, to).filter((c) => c.snapshotAt !== undefined).length} with their snapshot): RSS ${m.rssMb} MB${heapNow}`)
    }
    const failedOpen = clients.filter((c) => c.snapshotAt === undefined)
    if (failedOpen.length > 0) log(`${failedOpen.length} streams got no snapshot, e.g. ${failedOpen[0]!.ended}`)
    const openLatencies = sorted(clients.flatMap((c) => (c.snapshotAt === undefined ? [] : [c.snapshotAt - c.requestedAt])))
    log(`all streams opened in ${((Date.now() - openStarted) / 1000).toFixed(1)} s (incl. ${4 * opts.settleSeconds} s of settling); ` +
      `request -> snapshot p50 ${percentile(openLatencies, 50)} ms, p99 ${percentile(openLatencies, 99)} ms`)
    const withStreams = memOf(pid)
    const kbPerStream = round1(slope(memPoints) * 1024)

    // The streams open and nothing happening: what they cost (heartbeats, each re-reading its snapshot).
    const idleCpuBefore = processCpu()
    const idleStarted = Date.now()
    await sleep(opts.idleSeconds * 1000)
    const idleCpu = cpuSplit(idleCpuBefore, processCpu(), pid, process.pid)
    const idleWall = (Date.now() - idleStarted) / 1000
    const heapIdle = await heapReading(opts.streams)
    const afterIdle = memOf(pid)
    const heartbeatsSeen = clients.reduce((a, c) => a + c.heartbeats, 0)
    log(`${opts.idleSeconds} s with every stream open and no deposit: service CPU ${idleCpu.service} s (${Math.round((100 * idleCpu.service!) / Math.max(0.01, idleWall))}% of a core), ` +
      `Postgres ${idleCpu.postgres} s; ${heartbeatsSeen} heartbeats received so far; RSS ${afterIdle.rssMb} MB${heapIdle}`)

    // The deposits, one per account, at a steady pace.
    const runTag = String(crypto.randomInt(10_000_000, 100_000_000))
    const paidAt = new Date(Date.now() - 60_000).toISOString()
    const deposits = tenant.accounts.map((a, i) => {
      const reference = `999999${runTag}${String(i).padStart(16, "0")}`
      const event = {
        event: "transfer.inbound", merchantId: tenant.merchantId, sessionId: reference, accountNumber: a.nuban, amountKobo: opts.amount,
        senderName: a.payerName, senderAccountNumber: a.payerAccount, senderBankCode: "058", narration: `checkout bench ${i}`, paidAt,
        reversedSessionId: null
      }
      return { reference, body: JSON.stringify(event), signature: signSandboxEvent(tenant.webhookSecret, event) }
    })
    const sendAgent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    const statuses = new Array<number>(deposits.length).fill(0)
    const lag = monitorEventLoopDelay({ resolution: 10 })
    lag.enable()
    const cpuBefore = processCpu()
    const machineBefore = machineCpu()
    const sendStarted = Date.now()
    log(`sending ${deposits.length} deposits at ${opts.rate}/s`)
    const inFlight: Array<Promise<void>> = []
    for (let i = 0; i < deposits.length; i++) {
      const due = sendStarted + (i * 1000) / opts.rate
      const wait = due - Date.now()
      if (wait > 0) await sleep(wait)
      const d = deposits[i]!
      inFlight.push((async () => {
        for (let attempt = 1; attempt <= 5; attempt++) {
          statuses[i] = await post(started.baseUrl, sendAgent, "/webhooks/sandbox", d.body, d.signature)
          if (statuses[i]! > 0 && statuses[i]! < 500) return
          await sleep(100 * attempt)
        }
      })())
    }
    await Promise.all(inFlight)
    const sendDone = Date.now()
    log(`sent in ${((sendDone - sendStarted) / 1000).toFixed(1)} s; answers: ${JSON.stringify(Object.fromEntries(statuses.reduce((m, s) => m.set(s, (m.get(s) ?? 0) + 1), new Map<number, number>())))}`)
    const accepted = statuses.filter((s) => s === 200).length

    // Wait for every stream's update (or the timeout).
    const waitUntil = Date.now() + opts.waitSeconds * 1000
    for (;;) {
      const got = clients.filter((c) => c.updateAt !== undefined).length
      if (got >= clients.length || Date.now() > waitUntil) break
      await sleep(100)
    }
    lag.disable()
    const machineAfter = machineCpu()
    const cpu = cpuSplit(cpuBefore, processCpu(), pid, process.pid)
    const busyShare = Math.round((100 * (machineAfter.busy - machineBefore.busy)) / Math.max(0.01, machineAfter.total - machineBefore.total))
    await settle()
    const afterDeposits = memOf(pid)
    const gotUpdate = clients.filter((c) => c.updateAt !== undefined)
    log(`${gotUpdate.length}/${clients.length} streams got their update; ${clients.filter((c) => c.ended !== undefined).length} streams ended early; ` +
      `RSS ${afterDeposits.rssMb} MB; machine ${busyShare}% busy, CPU seconds ${JSON.stringify(cpu)}`)
    const wrong = gotUpdate.filter((c) => c.updateData.status !== "paid")
    if (wrong.length > 0) log(`${wrong.length} updates did not say paid, e.g. ${JSON.stringify(wrong[0]!.updateData)}`)

    // Close the streams; the service's memory once they are gone.
    for (const c of clients) c.close()
    await sleep(Math.max(3000, opts.settleSeconds * 1000))
    const heapAfterClose = heap ? await heap.liveMb() : undefined
    const afterClose = memOf(pid)
    if (heapAfterClose !== undefined) log(`streams closed: RSS ${afterClose.rssMb} MB, live heap after a full GC ${heapAfterClose} MB`)

    // Commit times from the database clock.
    const reconciledAt = await withClient(databaseUrl(db), async (c) => {
      const r = await c.query<{ reference: string; ms: number }>(
        `SELECT reference, (extract(epoch FROM reconciled_at) * 1000)::float8 AS ms FROM transactions WHERE tenant_id = $1`, [tenant.tenantId])
      return new Map(r.rows.map((x) => [x.reference, x.ms]))
    })
    const total: Array<number> = []
    const relay: Array<number> = []
    const fanout: Array<number> = []
    let noTransaction = 0
    clients.forEach((c, i) => {
      const at = reconciledAt.get(deposits[i]!.reference)
      if (at === undefined) {
        noTransaction++
        return
      }
      const seen = natsAt.get(c.account.accountRef)
      if (seen !== undefined) relay.push(seen - at)
      if (c.updateAt === undefined) return
      total.push(c.updateAt - at)
      if (seen !== undefined) fanout.push(c.updateAt - seen)
    })
    const t = sorted(total), r = sorted(relay), f = sorted(fanout)
    if (noTransaction > 0) log(`${noTransaction} deposits have no transaction`)
    log(`reconciled_at -> update: p50 ${Math.round(percentile(t, 50))} ms, p90 ${Math.round(percentile(t, 90))} ms, p99 ${Math.round(percentile(t, 99))} ms, max ${Math.round(t.at(-1) ?? 0)} ms; ` +
      `of it reconciled_at -> NATS: p50 ${Math.round(percentile(r, 50))}, p99 ${Math.round(percentile(r, 99))}; NATS -> update: p50 ${Math.round(percentile(f, 50))}, p99 ${Math.round(percentile(f, 99))}`)

    await stop(service)
    const result = {
      streams: opts.streams,
      rate: opts.rate,
      snapshots: clients.filter((c) => c.snapshotAt !== undefined).length,
      accepted,
      updates: gotUpdate.length,
      p50Ms: Math.round(percentile(t, 50)),
      p99Ms: Math.round(percentile(t, 99)),
      maxMs: Math.round(t.at(-1) ?? 0),
      relayP50Ms: Math.round(percentile(r, 50)),
      relayP99Ms: Math.round(percentile(r, 99)),
      fanoutP50Ms: Math.round(percentile(f, 50)),
      fanoutP99Ms: Math.round(percentile(f, 99)),
      openP50Ms: percentile(openLatencies, 50),
      openP99Ms: percentile(openLatencies, 99),
      rssMb: { idle: idle.rssMb, beforeStreams: beforeStreams.rssMb, withStreams: withStreams.rssMb, afterDeposits: afterDeposits.rssMb, afterClose: afterClose.rssMb },
      hwmMb: afterClose.hwmMb,
      kbPerStream,
      ...(heap ? { heapKbPerStream: round1(slope(heapPoints.slice(0, 5)) * 1024), liveHeapMb: heapPoints.map(([n, mb]) => ({ streams: n, mb })), liveHeapAfterCloseMb: heapAfterClose } : {}),
      baselineServiceCpuPercent: opts.idleSeconds > 0 ? basePercent : null,
      idleServiceCpuPercent: opts.idleSeconds > 0 ? Math.round((100 * idleCpu.service!) / Math.max(0.01, idleWall)) : null,
      clientLagP99Ms: round1(lag.percentile(99) / 1e6),
      load: { before: round1(loadBefore), after: round1(os.loadavg()[0]!), busyPercent: busyShare, cpuSeconds: cpu }
    }
    await cleanUp()
    process.stdout.write(`${JSON.stringify(result)}\n`)
    return gotUpdate.length === clients.length ? 0 : 1
  } catch (e) {
    log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    if (service && running(service)) log(`service output (tail):\n${service.output().slice(-4000)}`)
    await cleanUp()
    return 1
  }
}

main().then((code) => process.exit(code))
