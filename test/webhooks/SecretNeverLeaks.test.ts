import { expect, layer } from "@effect/vitest"
import { Effect, LogLevel } from "effect"
import { WebhookDeliveries } from "../../services/webhooks/WebhookDeliveries.js"
import { type Answer, apiToken, call, signup } from "../support/TestApp.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { captureLogs, deliveryRows, makeWebhooksTestApp, realSleep, stageEvents, startDispatcher, webhookReceiver } from "../support/Webhooks.js"
import { waitFor } from "../support/Wait.js"

const logs = captureLogs()

layer(makeWebhooksTestApp({ config: { logLevel: LogLevel.All }, logs: logs.layer }), { timeout: 120_000, excludeTestServices: true })("the signing secret", (it) => {
  it.scoped("never appears in a list, a log line or an error", () =>
    Effect.gen(function* () {
      const answers: Array<Answer> = []
      const record = (a: Answer) => {
        answers.push(a)
        return a
      }
      const receiver = yield* webhookReceiver
      receiver.answer(({ path }) => (path === "/flaky" ? 500 : 200))
      const { ownerToken, tenantId } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")

      const secrets: Array<string> = []
      for (const url of [receiver.url("/flaky"), receiver.url("/fine"), "http://127.0.0.1:9/refused"]) {
        const created = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url } })
        expectStatus(created, 201)
        secrets.push(created.body.secret)
        receiver.register(new URL(url).pathname, created.body.secret)
      }

      // Errors of every kind the group can answer.
      record(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "ftp://example.com" } }))
      record(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: 42 } }))
      record(yield* call("POST", "/api/v1/webhook-endpoints", { token, rawBody: "{not json" }))
      record(yield* call("DELETE", "/api/v1/webhook-endpoints/whe_missing", { token }))
      record(yield* call("POST", "/api/v1/webhook-endpoints/deliveries/whd_missing/replay", { token }))
      record(yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=nope", { token }))
      record(yield* call("GET", "/api/v1/webhook-endpoints", { token: "not-a-token" }))

      // Deliveries that succeed, fail with a status, fail to connect, dead-letter, and get replayed.
      yield* stageEvents(tenantId, "test", 3)
      const dispatcher = yield* startDispatcher()
      yield* waitFor("every delivery to finish", deliveryRows(tenantId), {
        until: (rows) => rows.length === 9 && rows.every((r) => r.status === "Succeeded" || r.status === "DeadLettered"),
        timeoutMs: 30_000
      })
      const dead = (yield* deliveryRows(tenantId)).find((r) => r.status === "DeadLettered")!
      record(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${dead.id}/replay`, { token }))
      yield* realSleep(300)
      yield* dispatcher.stop

      // Lists, as the tenant and as the operator sees them.
      record(yield* call("GET", "/api/v1/webhook-endpoints", { token }))
      record(yield* call("GET", "/api/v1/webhook-endpoints/deliveries?take=500", { token }))
      const operator = yield* WebhookDeliveries.pipe(Effect.provide(WebhookDeliveries.Default))
      const deadLetters = yield* operator.listDeadLetters({ tenantId })
      expect(deadLetters.length).toBeGreaterThan(0)

      expect(receiver.requests.filter((r) => r.status === 200).length).toBeGreaterThan(0)
      expect(receiver.requests.every((r) => r.verified)).toBe(true)
      expect(logs.lines.some((l) => l.includes("webhook delivery failed"))).toBe(true)
      expect(logs.lines.some((l) => l.includes("dead-lettered"))).toBe(true)
      expect(logs.lines.some((l) => l.startsWith("DEBUG webhook delivered"))).toBe(true)
      // The access log line of the 404 above (method, path, status, duration, request id).
      expect(logs.lines.some((l) => / 404 \d+ms request=/.test(l))).toBe(true)

      const haystacks = [
        ...answers.map((a) => JSON.stringify(a.body)),
        JSON.stringify(deadLetters),
        ...logs.lines
      ]
      expect(answers.filter((a) => a.status >= 400).length).toBeGreaterThanOrEqual(7)
      for (const secret of secrets) {
        const key = secret.slice("whsec_".length)
        for (const text of haystacks) {
          expect(text).not.toContain(key)
          expect(text).not.toContain(key.slice(0, 16))
          expect(text).not.toContain(Buffer.from(key, "base64").toString("hex").slice(0, 16))
        }
      }
      for (const text of haystacks) expect(text).not.toContain("whsec_")
    }))
})
