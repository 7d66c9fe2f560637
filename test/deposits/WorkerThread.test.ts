import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { WorkerThreadLive, WorkerThreadWatch } from "../../src/WorkerThread.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { freePort, http, REPO_ROOT, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase, withClient } from "../support/TestDatabase.js"
import { waitFor, waitForPromise } from "../support/Wait.js"

const fixture = (name: string) => new URL(`file://${path.join(REPO_ROOT, "test", "support", "fixtures", name)}`)

describe("WorkerThreadLive (the workers' thread)", () => {
  it.live("runs the entry on a second thread as SERVICE_ROLE=worker, and stops it when the scope closes", () =>
    Effect.gen(function* () {
      const probe = path.join(tempDir("thread-probe-"), "probe.txt")
      process.env.THREAD_PROBE_FILE = probe
      const scope = yield* Scope.make()
      const { failed } = Context.get(yield* Layer.buildWithScope(WorkerThreadLive(fixture("thread-waits.ts")), scope), WorkerThreadWatch)
      yield* waitFor("the thread to start", Effect.sync(() => fs.existsSync(probe)), { timeoutMs: 20_000, intervalMs: 50 })
      expect(fs.readFileSync(probe, "utf8")).toBe("started as worker\n")
      // Still running: nothing has failed.
      const early = yield* Effect.timeout(failed, "300 millis").pipe(Effect.exit)
      expect(Exit.isFailure(early) && String(early.cause)).toContain("TimeoutException")
      yield* Scope.close(scope, Exit.void)
      expect(fs.readFileSync(probe, "utf8")).toBe("started as worker\nstopped\n")
    }))

  it.live("reports a thread that ends on its own", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.scoped(
        Effect.flatMap(Layer.build(WorkerThreadLive(fixture("thread-exits.mjs"))), (ctx) => Effect.flip(Context.get(ctx, WorkerThreadWatch).failed))
      )
      expect(failed.message).toBe("the worker thread exited (code 3)")
    }))
})

describe("the service on a real Postgres and NATS (SERVICE_ROLE=all)", () => {
  // From the sources (as the tests run it) and as `npm start` runs it: one bundle that is also the thread's entry.
  it.live.each(["sources", "npm-start"] as const)("(%s) reconciles and applies rules on its worker thread, relays and stages on the main one, and stops both threads on SIGTERM", (entry) =>
    Effect.promise(async () => {
      const name = await createScratchDatabase("wthread")
      const prefix = `t${crypto.randomBytes(5).toString("hex")}.`
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "collections-wthread-"))
      const cleanUp = async () => {
        await Effect.runPromise(deleteTopology({ prefix }).pipe(Effect.provide(NatsLive(process.env.TEST_NATS_URL ?? "127.0.0.1:4222")), Effect.ignore))
        await dropScratchDatabase(name)
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
      const service = await startService({ PORT: String(await freePort()), DATABASE_URL: databaseUrl(name), NATS_URL: process.env.TEST_NATS_URL ?? "127.0.0.1:4222", NATS_PREFIX: prefix, DATA_DIR: dataDir, ...(entry === "npm-start" ? { LOG_FORMAT: "json" } : {}) }, 120_000, entry)
        .catch(async (e) => {
          await cleanUp()
          throw e
        })
      try {
        await waitForPromise("the worker thread's announcement", () => /collections reconciler thread running/.test(service.output()), { timeoutMs: 20_000, intervalMs: 50, detail: service.output })
        expect(service.output()).toMatch(/reconciler running on thread \d+/)
        const email = `wt-${crypto.randomBytes(4).toString("hex")}@example.ng`
        const signup = await http(service.baseUrl, "POST", "/api/v1/dashboard/signup", { json: { businessName: "Thread Test", email, password: "correct horse battery staple" } })
        expect(signup.status).toBe(201)
        const key = await http(service.baseUrl, "POST", "/api/v1/dashboard/api-keys", { token: signup.body.accessToken, json: { mode: "test" } })
        const token = await http(service.baseUrl, "POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })
        const auth = { token: token.body.accessToken as string }
        expect((await http(service.baseUrl, "POST", "/api/v1/virtual-accounts", { ...auth, json: { accountRef: "thread-1", name: "Ada Obi", expectedAmountKobo: 500_000 } })).status).toBe(201)
        const sim = await http(service.baseUrl, "POST", "/api/v1/sandbox/simulate/deposit", { ...auth, json: { accountRef: "thread-1", amountKobo: 500_000, senderName: "ADA OBI", reversal: false } })
        expect(sim.status).toBe(200)
        const account = await waitForPromise("the account to be FullyPaid", async () => (await http(service.baseUrl, "GET", "/api/v1/virtual-accounts/thread-1", auth)).body, {
          until: (a) => a?.paymentState === "FullyPaid",
          timeoutMs: 20_000,
          intervalMs: 100
        })
        expect(account.paymentState).toBe("FullyPaid")
        // The downstream workers (on the main thread) took the deposit's event: relayed and staged, nothing pending.
        const left = await waitForPromise(
          "the downstream workers to have nothing pending",
          () =>
            withClient(databaseUrl(name), async (c) => {
              const r = await c.query("SELECT (SELECT count(*) FROM outbox)::int AS events, (SELECT count(*) FROM outbox_pending)::int AS pending")
              return r.rows[0] as { events: number; pending: number }
            }),
          { until: (l) => l.pending === 0, timeoutMs: 20_000, intervalMs: 100 }
        )
        expect(left.events).toBeGreaterThan(0)
        expect(left.pending).toBe(0)
        // The deposit was reconciled on the worker thread: its count reaches the main thread's /metrics (posted each second).
        const reconciled = await waitForPromise("the worker thread's deposits in /metrics", async () => {
          const text = await fetch(`${service.baseUrl}/metrics`).then((r) => r.text())
          return Number(/^collections_deposits_reconciled_total (\d+)$/m.exec(text)?.[1] ?? 0)
        }, { until: (n) => n >= 1, timeoutMs: 10_000, intervalMs: 200 })
        expect(reconciled).toBe(1)
        // The automation actor runs on the worker thread too; the planner on this one. An overpayment fires the rule, and
        // the main thread's staging nudge reaches the thread's actor over the hub's channel: the hold is placed well
        // before the actor's idle poll (30 s) would have found the run (a functional bound, not a speed target).
        expect((await http(service.baseUrl, "POST", "/api/v1/rules", { ...auth, json: { trigger: "Overpaid", action: "Hold" } })).status).toBe(201)
        const over = await http(service.baseUrl, "POST", "/api/v1/sandbox/simulate/deposit", { ...auth, json: { accountRef: "thread-1", amountKobo: 120_000, senderName: "ADA OBI", reversal: false } })
        expect(over.status).toBe(200)
        const run = await waitForPromise("the rule's hold, applied by the thread's actor", () =>
          withClient(databaseUrl(name), async (c) => {
            const r = await c.query("SELECT r.steps, h.held_kobo::int8 AS held FROM automation_runs r LEFT JOIN holds h ON h.reference = r.transaction_reference WHERE r.completed_at IS NOT NULL")
            return r.rows[0] as { steps: Array<{ action: string; outcome: string }>; held: string } | undefined
          }), { until: (r) => r !== undefined, timeoutMs: 10_000, intervalMs: 100 })
        expect(Number(run!.held)).toBe(120_000)
        expect(run!.steps).toEqual([{ action: "hold", outcome: "held 1,200.00 NGN in escrow" }])
        // The dashboard's browser bundle is built from src/dashboard, found from the service's bundle too.
        const page = await fetch(`${service.baseUrl}/dashboard`).then((r) => r.text())
        const script = /\/dashboard\/assets\/app-[0-9a-f]+\.js/.exec(page)?.[0]
        expect(script, page).toBeDefined()
        const asset = await fetch(`${service.baseUrl}${script}`)
        expect(asset.status).toBe(200)
        expect((await asset.text()).length).toBeGreaterThan(10_000)
        if (entry === "npm-start") {
          // LOG_FORMAT=json: every line one JSON object, from both threads and the launcher; the access log's parts
          // are fields too.
          const lines = service.output().split("\n").filter((l) => l.trim() !== "")
          const parsed = lines.map((l) => {
            try {
              return JSON.parse(l) as { message: unknown; logLevel: string; timestamp: string; annotations: Record<string, unknown> }
            } catch {
              throw new Error(`not a JSON line: ${l}`)
            }
          })
          expect(parsed.some((p) => String(p.message).includes("collections reconciler thread running"))).toBe(true)
          const access = parsed.find((p) => p.annotations?.path === "/dashboard" && p.annotations?.status === 200)
          expect(access, lines.join("\n")).toMatchObject({ logLevel: "INFO", annotations: { method: "GET", requestId: expect.any(String) } })
        }
      } finally {
        service.child.kill("SIGTERM")
        const exit = await Promise.race([service.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 30_000))])
        if (exit === "hung") service.child.kill("SIGKILL")
        await cleanUp()
        expect(exit).toEqual({ code: 0, signal: null })
      }
    }), 120_000)
})
