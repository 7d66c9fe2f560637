import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as path from "node:path"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { pgClientLayer } from "../../src/db/Database.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { assertLedgerInvariant, eventBody } from "../support/Pipeline.js"
import { childEnv, freePort, http, REPO_ROOT, SERVICE_NODE_FLAGS, type Service, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase, withClient } from "../support/TestDatabase.js"
import { outOfOrder, overtakers, streamOrderOf } from "../support/StreamOrder.js"
import { waitForPromise } from "../support/Wait.js"

/*
 * Issue 31, part 7: one account's deposits apply in stream order across reconciler processes and through a worker's
 * crash. Real processes on one scratch database and one NATS prefix: 2 SERVICE_ROLE=api and 3 SERVICE_ROLE=worker.
 * A steady stream of signed sandbox webhooks to a few hundred accounts goes to both API processes; mid-run one worker
 * is SIGKILLed and a fresh one started in its place. Then, per account, the order the reconcilers applied the deposits
 * in (transactions.id: a serial taken under the account's row lock, so commit order for one account) must be the
 * order of their messages on the deposit stream (first occurrence), nothing lost, nothing doubled, and the ledger
 * invariant must hold.
 */

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const ACCOUNTS = 300
const WEBHOOKS = 3_000
/** Webhooks per second the sender aims at (a steady stream, not a burst). */
const RATE = 150
/** In flight at once, at most. */
const IN_FLIGHT = 16

interface Proc {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<unknown>
}

const tail = (s: string, n = 4_000) => (s.length > n ? `...${s.slice(-n)}` : s)

/** The waits here: every 100 ms (the checks read the database the processes are busy with). */
const EVERY = 100

/** A SERVICE_ROLE=worker process (no HTTP), ready once it says it runs. */
const startWorker = async (vars: Record<string, string>): Promise<Proc> => {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, "--import", "tsx", path.join(REPO_ROOT, "src", "main.ts")], {
    cwd: REPO_ROOT, env: childEnv({ ...vars, SERVICE_ROLE: "worker", LOG_LEVEL: "Info" }), stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  await waitForPromise("the worker to run", () => /collections worker running/.test(out) || child.exitCode !== null, { timeoutMs: 90_000, intervalMs: EVERY, detail: () => tail(out) })
  if (child.exitCode !== null) throw new Error(`the worker exited:\n${tail(out)}`)
  return { child, output: () => out, exited }
}

const stop = async (p: Proc) => {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return
  p.child.kill("SIGTERM")
  const done = await Promise.race([p.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))])
  if (!done) p.child.kill("SIGKILL")
}

const kill = async (p: Proc) => {
  p.child.kill("SIGKILL")
  await p.exited
}

/**
 * Per account, how many deposits were applied before a deposit that came earlier on the stream (each such deposit
 * counted once). `streamOrder` and `applied` list the same references.
 */

/** What a worker's log says about the deposit partitions it took, handed back and lost, as partition numbers. */
const ownership = (log: string) => {
  const all = (re: RegExp) => [...log.matchAll(re)].map((m) => Number(m[1]))
  const taken = all(/reconciling deposit partition (\d+) /g)
  const handedBack = all(/handed deposit partition (\d+) back/g)
  const lost = all(/lost deposit partition (\d+) /g)
  const held = new Map<number, number>()
  for (const p of taken) held.set(p, (held.get(p) ?? 0) + 1)
  for (const p of [...handedBack, ...lost]) held.set(p, (held.get(p) ?? 0) - 1)
  return { taken, handedBack, lost, holding: [...held].filter(([, n]) => n > 0).map(([p]) => p).sort((a, b) => a - b) }
}

describe("deposit order across reconciler processes (real processes)", () => {
  it("overtakers counts deposits applied before an earlier one", () => {
    expect(overtakers(["a", "b", "c", "d"], ["a", "b", "c", "d"])).toBe(0)
    expect(overtakers(["a", "b", "c", "d"], ["b", "a", "c", "d"])).toBe(1)
    expect(overtakers(["a", "b", "c", "d"], ["b", "c", "d", "a"])).toBe(3)
    expect(overtakers(["a", "b", "c", "d"], ["d", "c", "b", "a"])).toBe(3)
  })

  it.live(
    `2 API and 3 worker processes, ${WEBHOOKS} webhooks to ${ACCOUNTS} accounts, a worker SIGKILLed and restarted mid-run: ` +
      "every account's deposits apply in stream order, none lost or doubled",
    () =>
      Effect.promise(async () => {
        const started = Date.now()
        const name = await createScratchDatabase("workorder")
        const dbUrl = databaseUrl(name)
        const prefix = `t${crypto.randomBytes(5).toString("hex")}.`
        const shared = {
          DATABASE_URL: dbUrl, NATS_URL, NATS_PREFIX: prefix,
          // One tenant's tokens and secrets must read the same in every process.
          TOKEN_SIGNING_KEY: crypto.randomBytes(32).toString("base64url"), DATA_ENCRYPTION_KEY: crypto.randomBytes(32).toString("base64url"),
          // A short owner's lease, so the dead worker's partitions fail over within the test's patience.
          RECONCILER_LEASE_MS: "3000",
          PROVIDER_SYNC_INTERVAL_MS: "0"
        }
        const processes: Array<Proc> = []
        try {
          // The first worker migrates the scratch database; then the two API processes and two more workers together.
          const first = await startWorker({ ...shared, DATA_DIR: tempDir("workorder-w1-") })
          processes.push(first)
          const [a, b, second, third] = await Promise.all([
            startService({ ...shared, PORT: String(await freePort()), SERVICE_ROLE: "api", LOG_LEVEL: "Warn", DATA_DIR: tempDir("workorder-a1-") }, 90_000),
            startService({ ...shared, PORT: String(await freePort()), SERVICE_ROLE: "api", LOG_LEVEL: "Warn", DATA_DIR: tempDir("workorder-a2-") }, 90_000),
            startWorker({ ...shared, DATA_DIR: tempDir("workorder-w2-") }),
            startWorker({ ...shared, DATA_DIR: tempDir("workorder-w3-") })
          ]) as [Service, Service, Proc, Proc]
          processes.push(a, b, second, third)
          const apis = [a, b]
          const bootedMs = Date.now() - started

          // A tenant, its test key and the accounts, through API process a.
          const email = `order-${crypto.randomBytes(4).toString("hex")}@example.ng`
          const password = "correct horse battery staple"
          const signup = await http(a.baseUrl, "POST", "/api/v1/dashboard/signup", { json: { businessName: "Worker Order", email, password } })
          expect(signup.status).toBe(201)
          const tenantId = signup.body.tenantId as string
          const login = await http(a.baseUrl, "POST", "/api/v1/dashboard/login", { json: { email, password, mode: "test" } })
          const key = await http(a.baseUrl, "POST", "/api/v1/dashboard/api-keys", { token: signup.body.accessToken, json: { mode: "test" } })
          const token = (await http(a.baseUrl, "POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })).body.accessToken as string
          const provider = (await http(a.baseUrl, "GET", "/api/v1/dashboard/provider", { token: login.body.accessToken })).body as { merchantId: string; webhookSecret: string }
          const nubans: Array<string> = new Array(ACCOUNTS)
          let nextAccount = 0
          await Promise.all(Array.from({ length: 8 }, async () => {
            while (nextAccount < ACCOUNTS) {
              const i = nextAccount++
              const r = await http(apis[i % 2]!.baseUrl, "POST", "/api/v1/virtual-accounts", { token, json: { accountRef: `wo-${i}`, name: `Customer ${i}` } })
              if (r.status !== 201) throw new Error(`account ${i}: ${r.status} ${JSON.stringify(r.body)}`)
              nubans[i] = r.body.nuban as string
            }
          }))

          // The steady stream: webhook i at RATE per second, to a random account, to API process i % 2 (the other one
          // should that fail). No payer name: no name or payer-reuse risk points, so every deposit applies (Completed).
          const answered = new Set<string>()
          const post = async (i: number) => {
            const body = eventBody(provider, { accountNumber: nubans[crypto.randomInt(ACCOUNTS)]!, amountKobo: 1_000 + crypto.randomInt(100_000), senderName: null })
            const text = JSON.stringify(body)
            const signature = signSandboxEvent(provider.webhookSecret, body)
            for (let attempt = 0; attempt < 6; attempt++) {
              const api = apis[(i + attempt) % 2]!
              const res = await fetch(`${api.baseUrl}/webhooks/sandbox`, { method: "POST", body: text, headers: { "content-type": "application/json", "x-sandbox-signature": signature } })
                .then(async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as { result?: string } | null }), () => undefined)
              if (res?.status === 200) {
                expect(["processed", "duplicate"]).toContain(res.body?.result)
                answered.add(body.sessionId)
                return
              }
              await new Promise((r) => setTimeout(r, 200))
            }
            throw new Error(`webhook ${i} was never answered 200`)
          }
          const reconciledCount = () =>
            withClient(dbUrl, (c) => c.query<{ n: string }>(`SELECT count(*) AS n FROM transactions WHERE tenant_id = $1`, [tenantId])).then((r) => Number(r.rows[0]!.n))

          let sent = 0
          let inFlight = 0
          const sendStarted = Date.now()
          const sender = (async () => {
            const pending = new Set<Promise<void>>()
            while (sent < WEBHOOKS) {
              const due = Math.floor(((Date.now() - sendStarted) / 1000) * RATE)
              if (sent >= due || inFlight >= IN_FLIGHT) {
                await new Promise((r) => setTimeout(r, 5))
                continue
              }
              const i = sent++
              inFlight++
              const p = post(i).finally(() => {
                inFlight--
                pending.delete(p)
              })
              pending.add(p)
            }
            await Promise.all(pending)
          })()

          // Mid-run: SIGKILL a worker that has been reconciling, start a fresh one in its place.
          await waitForPromise("a third of the webhooks to be sent", () => sent, { until: (n) => n >= WEBHOOKS / 3, timeoutMs: 60_000, intervalMs: EVERY })
          const atKill = await reconciledCount()
          const killedHeld = ownership(second.output()).holding
          await kill(second)
          const killedAtMs = Date.now() - sendStarted
          const replacement = await startWorker({ ...shared, DATA_DIR: tempDir("workorder-w4-") })
          processes.push(replacement)
          const restartedAtMs = Date.now() - sendStarted
          await sender
          const sentMs = Date.now() - sendStarted
          expect(answered.size).toBe(WEBHOOKS)

          // Everything reconciled: as many transactions as answered references, and no inbox row left.
          const allOutput = () => processes.map((p) => tail(p.output(), 1_500)).join("\n----\n")
          const detail = () => tail(allOutput())
          await waitForPromise("every deposit to be reconciled", reconciledCount, { until: (n) => n >= answered.size, timeoutMs: 60_000, intervalMs: EVERY, detail })
          await waitForPromise(
            "the inbox to drain (unreconciled rows)",
            () => withClient(dbUrl, (c) => c.query<{ n: string }>(`SELECT count(*) AS n FROM inbound_events WHERE reconciled_at IS NULL`)).then((r) => Number(r.rows[0]!.n)),
            { until: (n) => n === 0, timeoutMs: 30_000, intervalMs: EVERY, detail }
          )
          const drainedMs = Date.now() - sendStarted

          // The stream's order (each reference's first message) against the order they were applied in, per account.
          const streamOrder = await streamOrderOf(NATS_URL, prefix, tenantId)
          const onStream = new Set([...streamOrder.values()].flat())
          const rows = (await withClient(dbUrl, (c) =>
            c.query<{ reference: string; nuban: string; status: string }>(`SELECT reference, nuban, status FROM transactions WHERE tenant_id = $1 ORDER BY id`, [tenantId])
          )).rows

          const references = new Set(rows.map((r) => r.reference))
          const lost = [...answered].filter((ref) => !references.has(ref)).length
          const doubled = rows.length - references.size
          const { overtaken, accountsOutOfOrder } = outOfOrder(streamOrder, rows)
          const workers = { first, second, third, replacement }
          const partitions = Object.fromEntries(Object.entries(workers).map(([k, w]) => [k, ownership(w.output())]))
          const figures = {
            webhooks: WEBHOOKS, accounts: ACCOUNTS, transactions: rows.length, lost, doubled, overtaken, accountsOutOfOrder,
            reconciledAtKill: atKill, killedAtMs, restartedAtMs, sentMs, drainedMs, bootedMs, totalMs: Date.now() - started
          }
          console.log(`worker order: ${JSON.stringify(figures)}`)
          console.log(`deposit partitions: killed worker held ${JSON.stringify(killedHeld)}; ${JSON.stringify(partitions)}`)

          expect([...answered].every((ref) => onStream.has(ref))).toBe(true)
          // The kill really was mid-run: the worker being killed had company doing work, and work was left to do.
          expect(atKill).toBeGreaterThan(0)
          expect(atKill).toBeLessThan(WEBHOOKS)
          expect({ lost, doubled, overtaken }).toEqual({ lost: 0, doubled: 0, overtaken: 0 })
          expect(rows.every((r) => r.status === "Completed")).toBe(true)
          await Effect.runPromise(assertLedgerInvariant.pipe(Effect.provide(pgClientLayer(Redacted.make(dbUrl), 2))))
          // The crash was a real fail-over: the killed worker owned partitions, and the survivors took each one over.
          expect(killedHeld.length).toBeGreaterThan(0)
          const takenAfter = [...partitions.first!.taken, ...partitions.third!.taken, ...partitions.replacement!.taken]
          for (const p of killedHeld) expect(takenAfter).toContain(p)
          // The work is shared again: the three live workers own every partition between them (the replacement
          // too, once the others have handed it its share).
          const sharedOut = () =>
            withClient(dbUrl, (c) => c.query<{ owners: string; owned: string; partitions: string }>(
              `SELECT count(DISTINCT owner) FILTER (WHERE owner IS NOT NULL AND expires_at > now()) AS owners,
                count(*) FILTER (WHERE owner IS NOT NULL AND expires_at > now()) AS owned, count(*) AS partitions FROM reconciler_partitions`
            )).then((r) => r.rows[0]!)
          await waitForPromise("the three live workers to share every partition", sharedOut, {
            until: (r) => r.owners === "3" && r.owned === r.partitions && Number(r.partitions) > 0,
            timeoutMs: 20_000,
            intervalMs: EVERY,
            detail: () => tail(allOutput())
          })
          for (const w of [first, third, replacement]) expect(ownership(w.output()).holding.length).toBeGreaterThan(0)
        } finally {
          await Promise.all(processes.map(stop))
          await Effect.runPromise(deleteTopology({ prefix }).pipe(Effect.provide(NatsLive(NATS_URL)), Effect.ignore))
          await dropScratchDatabase(name).catch(() => undefined)
        }
      }),
    170_000
  )
})
