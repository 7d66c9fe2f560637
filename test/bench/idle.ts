/**
 * The service at rest (issue 33): `npm run bench:idle` (embedded default) or `npm run bench:idle -- --external`
 * (this machine's Postgres and NATS, on a scratch database and stream prefix removed at the end).
 *
 * Starts the service as `npm start` does (its node flags and `src/start.mjs`, its bundle built beforehand;
 * `--entry sources` runs tsx on src/main.ts instead), then:
 *  1. starts it once on a new DATA_DIR (or database) and stops it once it answers: the first start;
 *     then starts it again (a warm start) and times its first log line and its first HTTP answer (GET /healthz,
 *     asked every 20 ms) from the spawn;
 *  2. waits `--settle` seconds (default 5: start-up work, such as the dashboard bundle, is not idle);
 *  3. reads the CPU (user + system, /proc) of the service and, with --external, of every process named postgres and
 *     nats-server, over `--seconds` (default 60), with nothing asked of the service;
 *  4. reads the service's resident memory (VmRSS) at the end and its peak (VmHWM).
 * Progress lines first; the LAST line is one JSON object:
 *   firstStartAnswerMs           the first start: spawn -> its first answer (initdb or migrations included)
 *   firstLogMs, firstAnswerMs    the warm start: spawn -> the first line the service wrote / its first answer
 *   serviceCpuPercent            the service's CPU over the window, in % of one core
 *   postgresCpuPercent, natsCpuPercent   the same for the servers (--external only; every backend counts)
 *   rssMb, peakRssMb             VmRSS at the end, VmHWM
 * More flags: --node-flag F (repeatable: a flag for the service's node, e.g. --node-flag=--cpu-prof), --service-output.
 * Run it alone: anything else using the servers counts as theirs.
 */
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { Effect } from "effect"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { buildServiceBundle, childEnv, freePort, parseServiceEntry, REPO_ROOT, SERVICE_NODE_FLAGS, serviceArgs, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { parseBenchArgs } from "./args.js"
import { processCpu, running, stop } from "./shared.js"

const args = parseBenchArgs(process.argv.slice(2), { values: ["seconds", "settle", "node-flag", "entry"], flags: ["external", "service-output"] })
const seconds = args.num("seconds", 60, (n) => n >= 1 && n <= 3600)
const settle = args.num("settle", 5, (n) => n >= 0 && n <= 600)
const external = args.flags.has("external")
const entry = parseServiceEntry(args.values.get("entry")?.at(-1))
const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const log = (s: string) => process.stderr.write(`idle: ${s}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const memoryMb = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0)
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 }
}

/** CPU seconds by pid of the service and of the processes with these names (a pid that ends meanwhile drops out). */
const cpuOf = (pid: number, names: ReadonlyArray<string>) => {
  const out = new Map<number, { readonly group: string; readonly cpu: number }>()
  for (const [p, v] of processCpu()) {
    if (p === pid) out.set(p, { group: "service", cpu: v.cpu })
    else if (names.includes(v.comm)) out.set(p, { group: v.comm, cpu: v.cpu })
  }
  return out
}

/** CPU seconds each group used between two readings, over the processes present in both. */
const usedBetween = (before: ReturnType<typeof cpuOf>, after: ReturnType<typeof cpuOf>) => {
  const used: Record<string, number> = {}
  for (const [p, a] of after) {
    const b = before.get(p)
    if (b) used[a.group] = (used[a.group] ?? 0) + (a.cpu - b.cpu)
  }
  return used
}

const main = async () => {
  const dataDir = tempDir("collections-idle-")
  const prefix = `idle${crypto.randomBytes(4).toString("hex")}.`
  const db = external ? await createScratchDatabase("idle") : undefined
  const port = await freePort()
  const env: Record<string, string> = { HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dataDir }
  if (db) Object.assign(env, { DATABASE_URL: databaseUrl(db), NATS_URL, NATS_PREFIX: prefix })
  // The bundle is built before the clock starts (a first start after a change builds it, about 2 s more).
  if (entry === "npm-start") buildServiceBundle()
  const boot = async () => {
    const started = Date.now()
    let firstLogMs: number | undefined
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(args.values.get("node-flag") ?? []), ...serviceArgs(entry)], {
      cwd: REPO_ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise((resolve) => child.on("exit", resolve))
    const svc = { child, exited }
    let output = ""
    const onData = (d: Buffer) => {
      firstLogMs ??= Date.now() - started
      output += d.toString()
      if (args.flags.has("service-output")) process.stderr.write(d)
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    let firstAnswerMs: number | undefined
    try {
      while (firstAnswerMs === undefined) {
        if (!running(svc)) throw new Error(`the service exited:\n${output}`)
        if (Date.now() - started > 180_000) throw new Error(`no answer in 180 s:\n${output}`)
        if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) firstAnswerMs = Date.now() - started
        else await sleep(20)
      }
    } catch (e) {
      await stop(svc)
      throw e
    }
    return { child, svc, firstLogMs, firstAnswerMs }
  }
  // The first start creates the database (initdb of the embedded one, or the migrations) and is stopped; the window
  // is measured on the second, a warm start, as after any restart.
  const first = await boot()
  log(`first start (a new ${external ? "database" : "DATA_DIR"}): first answer after ${first.firstAnswerMs} ms; stopping it`)
  await stop(first.svc)
  const { child, svc, firstLogMs, firstAnswerMs } = await boot()
  try {
    log(`first log line after ${firstLogMs ?? "-"} ms, first answer after ${firstAnswerMs} ms; settling ${settle} s`)
    await sleep(settle * 1000)
    const names = external ? ["postgres", "nats-server"] : []
    const before = cpuOf(child.pid!, names)
    const t0 = Date.now()
    log(`measuring ${seconds} s at rest`)
    await sleep(seconds * 1000)
    const after = cpuOf(child.pid!, names)
    const wall = (Date.now() - t0) / 1000
    const used = usedBetween(before, after)
    const pct = (k: string) => Math.round((10_000 * (used[k] ?? 0)) / wall) / 100
    const mem = memoryMb(child.pid!)
    const result = {
      mode: external ? "postgres+nats" : "embedded",
      firstStartAnswerMs: first.firstAnswerMs, firstLogMs: firstLogMs ?? null, firstAnswerMs, seconds: Math.round(wall),
      serviceCpuPercent: pct("service"),
      ...(external ? { postgresCpuPercent: pct("postgres"), natsCpuPercent: pct("nats-server") } : {}),
      rssMb: Math.round(mem.rss), peakRssMb: Math.round(mem.peak)
    }
    log(`service ${result.serviceCpuPercent}% of a core over ${Math.round(wall)} s at rest; RSS ${result.rssMb} MB (peak ${result.peakRssMb} MB)`)
    process.stdout.write(`${JSON.stringify(result)}\n`)
  } finally {
    await stop(svc)
    if (db) {
      await dropScratchDatabase(db).catch(() => undefined)
      await Effect.runPromise(deleteTopology({ prefix }).pipe(Effect.provide(NatsLive(NATS_URL, "collections-bench")))).catch(() => undefined)
    }
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stderr.write(`idle: ${e instanceof Error ? e.stack : String(e)}\n`)
  process.exit(1)
})
