import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { waitForPromise } from "./Wait.js"

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
export const CLI_BIN = path.join(REPO_ROOT, "bin", "collections.mjs")

/** Variables the children must not inherit from the developer's shell: each test states its own. */
const OWN_VARS = [
  "PORT", "HOST", "DATABASE_URL", "NATS_URL", "NATS_PREFIX", "DATA_DIR", "TOKEN_SIGNING_KEY", "DATA_ENCRYPTION_KEY",
  "LOG_LEVEL", "WEBHOOK_ALLOW_INSECURE_TARGETS", "WEBHOOK_RETRY_DELAYS_MS", "DB_POOL_SIZE", "SANDBOX_LIVE_MODE", "PAYSTACK_BASE_URL", "MONNIFY_BASE_URL",
  "PROVIDER_SYNC_INTERVAL_MS", "PUBLIC_URL"
]

export const childEnv = (vars: Record<string, string>): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of OWN_VARS) delete env[name]
  return { ...env, ...vars }
}

/** The temporary directories `tempDir` made and nobody has removed yet. */
const madeDirs = new Set<string>()

/** Removes every directory `tempDir` made (run after each test file: see vitest.config.ts's setupFiles). */
export const removeTempDirs = () => {
  for (const dir of madeDirs) fs.rmSync(dir, { recursive: true, force: true })
  madeDirs.clear()
}

/** A new directory under the system's temp directory, removed by `removeTempDirs` (or earlier, by its user). */
export const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  madeDirs.add(dir)
  return dir
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the packaged CLI (`bin/collections.mjs`) to completion. */
export const runCli = (args: ReadonlyArray<string>, vars: Record<string, string>, timeoutMs = 90_000): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { cwd: REPO_ROOT, env: childEnv(vars), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** A TCP port nothing listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.on("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port
      srv.close(() => resolve(port))
    })
  })

export interface Service {
  readonly child: ChildProcess
  readonly baseUrl: string
  /** Everything the service wrote so far, for failure messages. */
  readonly output: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Node flags the service runs with: the ones `npm start` gives it, read from package.json's `start` script so the two
 * never drift apart. They are a 64 MB young generation (the default 16 MB made the deposit pipeline's short-lived
 * garbage cost ~10% more CPU in scavenges and promotions), and no memory reducer (V8's heap shrinking at low allocation
 * rates, which at rest cost about 1% of a core over the first minute, for about 90 MB less resident memory:
 * docs/performance.md, "At rest and at start"), and a smaller budget for what TurboFan inlines into one function (300
 * bytes of bytecode in all, V8's default 920): it compiles the same hot code in less time, so a freshly started service
 * spends less CPU on compiling while it warms up (12 pairs of 20,000-deposit bench runs: 10 faster, 1.04-1.06 x on the
 * means, V8's helper threads 7-14 us a deposit less; 60,000-deposit runs no different: docs/performance.md, "This
 * session (2026-11-29, late night ...)").
 */
export const SERVICE_NODE_FLAGS: ReadonlyArray<string> = (() => {
  const start = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  const words = start.trim().split(/\s+/)
  if (words[0] !== "node" || words[words.length - 1] !== "src/start.mjs") throw new Error(`package.json's start script is not "node <flags> src/start.mjs": ${start}`)
  return words.slice(1, -1)
})()

/**
 * How the service is started: from its sources under tsx (`node --import tsx src/main.ts`, what the tests run), or
 * as `npm start` runs it (src/start.mjs: the bundle under node_modules/.cache, built first when a source is newer).
 */
export type ServiceEntry = "sources" | "npm-start"
/** A bench's `--entry` value: npm-start (the default) or sources. */
export const parseServiceEntry = (v: string | undefined): ServiceEntry => {
  if (v === undefined || v === "npm-start" || v === "sources") return v ?? "npm-start"
  throw new Error(`--entry must be npm-start or sources, not ${v}`)
}
export const serviceArgs = (entry: ServiceEntry): ReadonlyArray<string> =>
  entry === "sources" ? ["--import", "tsx", path.join(REPO_ROOT, "src", "main.ts")] : [path.join(REPO_ROOT, "src", "start.mjs")]

/** Brings `npm start`'s bundle up to date once, before a bench starts several service processes at once. */
export const buildServiceBundle = () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, "src", "start.mjs"), "--build"], { cwd: REPO_ROOT, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`building the service bundle failed:\n${r.stdout}${r.stderr}`)
}

/** Starts the real service (from its sources unless `entry` says otherwise) and resolves once it answers HTTP. */
export const startService = async (vars: Record<string, string> & { PORT: string }, timeoutMs = 120_000, entry: ServiceEntry = "sources"): Promise<Service> => {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...serviceArgs(entry)], {
    cwd: REPO_ROOT,
    // Tests and demos let the sandbox serve live mode (DESIGN.md); a test that needs it off says SANDBOX_LIVE_MODE: "0".
    env: childEnv({ HOST: "127.0.0.1", SANDBOX_LIVE_MODE: "1", ...vars }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  const service: Service = { child, baseUrl: `http://127.0.0.1:${vars.PORT}`, output: () => out, exited }
  const exitedEarly = () => child.exitCode !== null || child.signalCode !== null
  const state = await waitForPromise(
    "the service to answer HTTP",
    async () => (exitedEarly() ? "exited" : await fetch(`${service.baseUrl}/api/v1/dashboard/me`).then(() => "answered" as const, () => undefined)),
    { timeoutMs, intervalMs: 250, detail: () => out }
  ).catch((error: unknown) => {
    child.kill("SIGKILL")
    throw error
  })
  if (state === "exited") throw new Error(`the service exited before it listened:\n${out}`)
  return service
}

export interface HttpAnswer {
  readonly status: number
  readonly body: any
}

export const http = async (baseUrl: string, method: string, url: string, opts: { token?: string; json?: unknown } = {}): Promise<HttpAnswer> => {
  const headers: Record<string, string> = {}
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  if (opts.json !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(baseUrl + url, { method, headers, ...(opts.json === undefined ? {} : { body: JSON.stringify(opts.json) }) })
  const text = await res.text()
  let body: unknown = text
  try {
    body = text === "" ? null : JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body }
}
