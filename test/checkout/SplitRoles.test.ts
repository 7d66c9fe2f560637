import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as path from "node:path"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { eventBody } from "../support/Pipeline.js"
import { childEnv, freePort, http, REPO_ROOT, SERVICE_NODE_FLAGS, type Service, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { waitForPromise } from "../support/Wait.js"
import { openSse } from "./SseClient.js"

// Live checkout across processes (the "Must show"): an API-only process (SERVICE_ROLE=api) streams the
// changes a worker process (SERVICE_ROLE=worker) reconciles, through the subscribe port; with two API processes, both
// streams hear it. Real processes on one scratch database and one NATS prefix.

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"


/** A SERVICE_ROLE=worker process (no HTTP): started, and ready once it says so. */
const startWorker = async (vars: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, "--import", "tsx", path.join(REPO_ROOT, "src", "main.ts")], {
    cwd: REPO_ROOT, env: childEnv({ ...vars, SERVICE_ROLE: "worker", LOG_LEVEL: "Info" }), stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  await waitForPromise("the worker to run", () => /collections worker running/.test(out) || child.exitCode !== null, { timeoutMs: 120_000, intervalMs: 50, detail: () => out })
  if (child.exitCode !== null) throw new Error(`the worker exited:\n${out}`)
  return { child, output: () => out, exited }
}

const stop = async (p: { child: ChildProcess; exited: Promise<unknown> }) => {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return
  p.child.kill("SIGTERM")
  const done = await Promise.race([p.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))])
  if (!done) p.child.kill("SIGKILL")
}

describe("live checkout with split roles (real processes)", () => {
  it.live("API processes stream the deposit a worker process reconciles: the webhook to one API process, an update on both", () =>
    Effect.promise(async () => {
      const name = await createScratchDatabase("cosplit")
      const prefix = `t${crypto.randomBytes(5).toString("hex")}.`
      const shared = {
        DATABASE_URL: databaseUrl(name), NATS_URL, NATS_PREFIX: prefix,
        // One tenant's tokens and secrets must read the same in every process.
        TOKEN_SIGNING_KEY: crypto.randomBytes(32).toString("base64url"), DATA_ENCRYPTION_KEY: crypto.randomBytes(32).toString("base64url")
      }
      const processes: Array<{ child: ChildProcess; exited: Promise<unknown> }> = []
      const streams: Array<{ close: () => void }> = []
      try {
        // The worker first (it migrates the scratch database), then two API processes.
        const worker = await startWorker({ ...shared, DATA_DIR: tempDir("cosplit-w-") })
        processes.push(worker)
        const apis: Array<Service> = []
        for (const i of [1, 2]) {
          const api = await startService({ ...shared, PORT: String(await freePort()), SERVICE_ROLE: "api", LOG_LEVEL: "Info", DATA_DIR: tempDir(`cosplit-a${i}-`) })
          processes.push(api)
          apis.push(api)
        }
        const [a, b] = apis as [Service, Service]
        expect(a.output()).toMatch(/API \(no workers\)/)

        // A tenant, its test key, an account and a checkout session, all through API process a.
        const email = `split-${crypto.randomBytes(4).toString("hex")}@example.ng`
        const password = "correct horse battery staple"
        const signup = await http(a.baseUrl, "POST", "/api/v1/dashboard/signup", { json: { businessName: "Split Roles", email, password } })
        expect(signup.status).toBe(201)
        const login = await http(a.baseUrl, "POST", "/api/v1/dashboard/login", { json: { email, password, mode: "test" } })
        const key = await http(a.baseUrl, "POST", "/api/v1/dashboard/api-keys", { token: signup.body.accessToken, json: { mode: "test" } })
        const token = (await http(a.baseUrl, "POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })).body.accessToken as string
        const provider = (await http(a.baseUrl, "GET", "/api/v1/dashboard/provider", { token: login.body.accessToken })).body
        const account = await http(a.baseUrl, "POST", "/api/v1/virtual-accounts", { token, json: { accountRef: "split-1", name: "Amaka Eze", expectedAmountKobo: 30_000 } })
        expect(account.status).toBe(201)
        const session = await http(a.baseUrl, "POST", "/api/v1/checkout/sessions", { token, json: { accountRef: "split-1" } })
        expect(session.status).toBe(201)

        // A stream on each API process (the session is the database's, so either answers it).
        const onA = await openSse(`${a.baseUrl}${session.body.streamUrl}`)
        const onB = await openSse(`${b.baseUrl}${session.body.streamUrl}`)
        streams.push(onA, onB)
        for (const s of [onA, onB]) {
          expect(s.status).toBe(200)
          expect((await s.eventCount(1)).map((e) => `${e.event} ${e.id}`)).toEqual(["snapshot 0.30000.awaiting_payment"])
        }

        // The deposit webhook goes to API process a: its receiver queues it, the worker reconciles it.
        const post = async (amountKobo: number) => {
          const body = eventBody(provider, { accountNumber: account.body.nuban, amountKobo, senderName: "AMAKA EZE" })
          const res = await fetch(`${a.baseUrl}/webhooks/sandbox`, {
            method: "POST", body: JSON.stringify(body),
            headers: { "content-type": "application/json", "x-sandbox-signature": signSandboxEvent(provider.webhookSecret, body) }
          })
          expect(res.status, await res.text()).toBe(200)
        }
        await post(10_000)
        for (const s of [onA, onB]) {
          const events = await s.eventCount(2)
          expect(events.map((e) => `${e.event} ${e.id}`)).toEqual(["snapshot 0.30000.awaiting_payment", "update 10000.30000.partially_paid"])
        }
        const snap = await http(b.baseUrl, "GET", session.body.snapshotUrl)
        expect(JSON.parse(onA.events()[1]!.data!)).toEqual(snap.body)
        expect(JSON.parse(onB.events()[1]!.data!)).toEqual(snap.body)
        // One transaction: reconciled once (by the worker; the API processes run no reconciler).
        const txns = await http(a.baseUrl, "GET", "/api/v1/transactions", { token })
        expect(txns.body.data).toHaveLength(1)

        await post(20_000)
        for (const s of [onA, onB]) {
          const events = await s.eventCount(3)
          expect(events.map((e) => `${e.event} ${e.id}`)).toEqual([
            "snapshot 0.30000.awaiting_payment", "update 10000.30000.partially_paid", "update 30000.30000.paid"
          ])
          expect(s.ended()).toBe(false)
        }
      } finally {
        for (const s of streams) s.close()
        await Promise.all(processes.map(stop))
        await Effect.runPromise(deleteTopology({ prefix }).pipe(Effect.provide(NatsLive(NATS_URL)), Effect.ignore))
        await dropScratchDatabase(name).catch(() => undefined)
      }
    }), 240_000)
})
