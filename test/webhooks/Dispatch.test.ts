import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { DispatchStore } from "../../services/webhooks/DispatchStore.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { apiToken, call, signup } from "../support/TestApp.js"
import {
  deliveryRows, makeWebhooksTestApp, type Receiver, realSleep, stageEvents, startDispatcher, webhookReceiver
} from "../support/Webhooks.js"
import { waitFor } from "../support/Wait.js"

/** A tenant with a test-mode API token and one endpoint per path on the receiver. */
const tenantWithEndpoints = (receiver: Receiver, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { tenantId, ownerToken } = yield* signup()
    const { token } = yield* apiToken(ownerToken, "test")
    const endpoints: Record<string, string> = {}
    const secrets: Record<string, string> = {}
    for (const path of paths) {
      const created = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: receiver.url(path) } })
      expectStatus(created, 201)
      receiver.register(path, created.body.secret)
      endpoints[path] = created.body.id
      secrets[path] = created.body.secret
    }
    return { tenantId, token, endpoints, secrets }
  })

const terminal = (s: string) => s === "Succeeded" || s === "DeadLettered"

layer(makeWebhooksTestApp(), { timeout: 120_000, excludeTestServices: true })("webhook dispatch", (it) => {
  it.scoped("signs every delivery so that standardwebhooks verifies it; body is the envelope", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookReceiver
      const { tenantId } = yield* tenantWithEndpoints(receiver, ["/sig/a", "/sig/b"])
      const events = yield* stageEvents(tenantId, "test", 10)
      const dispatcher = yield* startDispatcher()
      yield* waitFor("20 deliveries", Effect.sync(() => receiver.requests.length), { until: (n) => n >= 20, timeoutMs: 30_000 })
      yield* dispatcher.stop

      expect(receiver.requests).toHaveLength(20)
      for (const r of receiver.requests) {
        expect(r.verified, JSON.stringify(r.headers)).toBe(true)
        const event = events.find((e) => e.id === r.webhookId)!
        expect(event).toBeDefined()
        // The envelope, its fields in the documented order (data's own keys come back in Postgres jsonb order).
        expect(JSON.parse(r.body)).toEqual({ id: event.id, type: event.type, createdAt: event.createdAt, mode: event.mode, data: event.data })
        expect(Object.keys(JSON.parse(r.body))).toEqual(["id", "type", "createdAt", "mode", "data"])
        expect(r.headers["content-type"]).toBe("application/json")
        expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
        expect(Math.abs(Number(r.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
      }
      const rows = yield* deliveryRows(tenantId)
      expect(rows).toHaveLength(20)
      expect(rows.every((r) => r.status === "Succeeded" && r.attempts === 1 && r.lastStatusCode === 200)).toBe(true)

      // Every event reached both endpoints.
      for (const e of events) {
        expect(receiver.successes("/sig/a", e.id)).toBe(1)
        expect(receiver.successes("/sig/b", e.id)).toBe(1)
      }
    }))

  it.scoped("the verification means something: a tampered body, another endpoint's secret or a stale timestamp fail", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookReceiver
      const { secrets, tenantId } = yield* tenantWithEndpoints(receiver, ["/tamper/a", "/tamper/b"])
      yield* stageEvents(tenantId, "test", 1)
      const dispatcher = yield* startDispatcher()
      yield* waitFor("2 deliveries", Effect.sync(() => receiver.requests.length), { until: (n) => n >= 2, timeoutMs: 30_000 })
      yield* dispatcher.stop
      const got = receiver.requests.find((r) => r.path === "/tamper/a")!
      const headers = got.headers as Record<string, string>
      expect(got.verified).toBe(true)
      expect(new Webhook(secrets["/tamper/a"]!).verify(got.body, headers)).toEqual(JSON.parse(got.body))
      expect(() => new Webhook(secrets["/tamper/a"]!).verify(got.body.replace("150000", "150001"), headers)).toThrow()
      expect(() => new Webhook(secrets["/tamper/b"]!).verify(got.body, headers)).toThrow()
      const stale = { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 3_600) }
      expect(() => new Webhook(secrets["/tamper/a"]!).verify(got.body, stale)).toThrow()
    }))

  it.scoped(
    "30% random failures and a restart mid-run: every (event, endpoint) ends Succeeded or DeadLettered, none missing, none succeeded twice",
    () =>
      Effect.gen(function* () {
        const receiver = yield* webhookReceiver
        receiver.answer(() => (Math.random() < 0.3 ? 500 : 200))
        const paths = ["/chaos/a", "/chaos/b"]
        const { tenantId } = yield* tenantWithEndpoints(receiver, paths)
        const events = yield* stageEvents(tenantId, "test", 100)
        const sql = yield* SqlClient.SqlClient

        const first = yield* startDispatcher({ leaseMs: 3_000, perEndpointInFlight: 4, maxInFlight: 6 })
        yield* waitFor("a third of the deliveries to succeed", deliveryRows(tenantId), { until: (rows) => rows.filter((r) => r.status === "Succeeded").length >= 60, timeoutMs: 30_000 })
        yield* first.stop
        const atRestart = yield* deliveryRows(tenantId)
        const unfinished = atRestart.filter((r) => !terminal(r.status)).length
        expect(unfinished).toBeGreaterThan(0)

        // A crashed dispatcher: it leased some due deliveries and vanished without sending them.
        const store = yield* DispatchStore.pipe(Effect.provide(DispatchStore.Default))
        const now = Date.now()
        const abandoned = yield* store.claim({ now: new Date(now + 60_000), leaseUntil: new Date(now + 1_500), limit: 5, perEndpointLimit: 5, busy: new Map() })

        // Two dispatchers share the rest (SKIP LOCKED), as two worker processes would.
        const second = yield* startDispatcher({ leaseMs: 3_000, perEndpointInFlight: 4, maxInFlight: 6 })
        const third = yield* startDispatcher({ leaseMs: 3_000, perEndpointInFlight: 2, maxInFlight: 3 })
        yield* waitFor("every delivery to finish", deliveryRows(tenantId), { until: (rows) => rows.length === 200 && rows.every((r) => terminal(r.status)), timeoutMs: 90_000 })
        yield* second.stop
        yield* third.stop

        const rows = yield* deliveryRows(tenantId)
        const endpointPath = new Map<string, string>()
        const endpointsRows = yield* sql<{ id: string; url: string }>`SELECT id, url FROM webhook_endpoints WHERE tenant_id = ${tenantId}`
        for (const e of endpointsRows) endpointPath.set(e.id, new URL(e.url).pathname)

        // None missing: exactly one delivery per (event, endpoint).
        expect(rows).toHaveLength(events.length * paths.length)
        const keys = new Set(rows.map((r) => `${r.eventId}|${r.endpointId}`))
        expect(keys.size).toBe(200)
        for (const e of events) for (const id of endpointPath.keys()) expect(keys.has(`${e.id}|${id}`)).toBe(true)

        // The table and the receiver agree: a Succeeded delivery was answered 2xx exactly once; a dead letter never.
        for (const r of rows) {
          const path = endpointPath.get(r.endpointId)!
          const twoXx = receiver.successes(path, r.eventId)
          expect(twoXx, `${r.status} ${r.eventId} ${path}`).toBe(r.status === "Succeeded" ? 1 : 0)
          const seen = receiver.requests.filter((q) => q.path === path && q.webhookId === r.eventId).length
          expect(seen, `attempts of ${r.id}`).toBe(r.attempts)
        }
        for (const d of abandoned) expect(rows.find((r) => r.id === d.id)!.status).toMatch(/^(Succeeded|DeadLettered)$/)
        expect(abandoned.length).toBeGreaterThan(0)
        expect(receiver.requests.every((r) => r.verified)).toBe(true)
        // The retries really happened.
        expect(receiver.requests.some((r) => r.status === 500)).toBe(true)
        expect(rows.some((r) => r.attempts > 1 && r.status === "Succeeded")).toBe(true)
      })
  )

  it.scoped("a slow endpoint neither delays another endpoint nor holds more than its share of slots", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookReceiver
      receiver.answer(({ path }) => (path === "/slow" ? new Promise<number>((resolve) => setTimeout(() => resolve(200), 4_000)) : 200))
      const { tenantId } = yield* tenantWithEndpoints(receiver, ["/slow", "/fast"])
      yield* stageEvents(tenantId, "test", 20)
      const started = Date.now()
      const dispatcher = yield* startDispatcher({ perEndpointInFlight: 3, maxInFlight: 8, timeoutMs: 1_000 })
      yield* waitFor(
        "the fast endpoint's deliveries",
        Effect.sync(() => receiver.requests.filter((r) => r.path === "/fast" && r.status === 200).length),
        { until: (n) => n === 20, timeoutMs: 10_000 }
      )
      const fastDoneMs = Date.now() - started
      // The slow endpoint has had its first timeouts by now, none of which held up the fast one.
      expect(fastDoneMs).toBeLessThan(3_000)
      yield* realSleep(1_500)
      yield* dispatcher.stop
      expect(receiver.peakInFlight("/slow")).toBeLessThanOrEqual(3)
      const slow = (yield* deliveryRows(tenantId)).filter((r) => r.lastError === "timeout")
      expect(slow.length).toBeGreaterThan(0)
      expect(slow.every((r) => r.status === "Failed" && r.lastStatusCode === null)).toBe(true)
    }))

  it.scoped("only the event's tenant and mode, and only active endpoints, get deliveries", () =>
    Effect.gen(function* () {
      const receiver = yield* webhookReceiver
      const a = yield* tenantWithEndpoints(receiver, ["/iso/a", "/iso/gone"])
      const b = yield* tenantWithEndpoints(receiver, ["/iso/b"])
      expectStatus(yield* call("DELETE", `/api/v1/webhook-endpoints/${a.endpoints["/iso/gone"]}`, { token: a.token }), 204)
      const [mine] = yield* stageEvents(a.tenantId, "test", 1)
      const [live] = yield* stageEvents(a.tenantId, "live", 1)
      const dispatcher = yield* startDispatcher()
      yield* waitFor("a's delivery", Effect.sync(() => receiver.requests.length), { until: (n) => n >= 1, timeoutMs: 30_000 })
      yield* realSleep(300)
      yield* dispatcher.stop
      expect(receiver.requests.map((r) => [r.path, r.webhookId])).toEqual([["/iso/a", mine!.id]])
      expect(b.endpoints["/iso/b"]).toBeDefined()
      const sql = yield* SqlClient.SqlClient
      const unstaged = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id WHERE o.event_id = ${live!.id} AND p.consumer = 'webhooks'`
      expect(unstaged[0]!.n).toBe(0)
    }))
})
