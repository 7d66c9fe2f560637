import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { RETRY_JITTER } from "../../src/domain/RetrySchedule.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { apiToken, call, signup } from "../support/TestApp.js"
import { deliveryRows, makeWebhooksTestApp, realSleep, stageEvents, startDispatcher, webhookReceiver } from "../support/Webhooks.js"
import { waitFor } from "../support/Wait.js"

const DELAYS_MS = [1_000, 2_000, 4_000]
const POLL_MS = 1_000

/** Moves the TestClock forward to `atMs` (never backwards). */
const advanceTo = (atMs: number) => Effect.flatMap(Clock.currentTimeMillis, (now) => TestClock.adjust(Math.max(0, atMs - now)))

layer(makeWebhooksTestApp({ config: { webhookRetryDelaysMs: DELAYS_MS } }), { timeout: 120_000 })("retry timing on the TestClock", (it) => {
  it.scoped("attempts advance only when the clock does; dead letter after the last delay; replay gives a fresh round", () =>
    Effect.gen(function* () {
      // Real-looking epoch time, so that signatures stay inside standardwebhooks' five-minute tolerance.
      yield* TestClock.setTime(Date.now())
      const receiver = yield* webhookReceiver
      receiver.answer(() => 500)
      const { ownerToken, tenantId } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const created = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: receiver.url("/clock") } })
      expectStatus(created, 201)
      receiver.register("/clock", created.body.secret)
      const [event] = yield* stageEvents(tenantId, "test", 1)

      const row = Effect.map(deliveryRows(tenantId), (rows) => rows[0]!)
      const attemptsAre = (n: number) => ({ until: (r: Effect.Effect.Success<typeof row> | undefined) => r !== undefined && r.attempts === n, timeoutMs: 30_000 })
      /** Holds for a while on the wall clock: nothing may happen while the TestClock stands still. */
      const staysAt = (n: number) =>
        Effect.gen(function* () {
          yield* realSleep(400)
          expect((yield* row).attempts).toBe(n)
          expect(receiver.requests).toHaveLength(n)
        })

      const dispatcher = yield* startDispatcher({ pollMs: POLL_MS })
      yield* waitFor("the first attempt", row, attemptsAre(1))

      // The TestClock time window in which the latest attempt ran: the first one exactly at the start.
      let window = { from: yield* Clock.currentTimeMillis, to: yield* Clock.currentTimeMillis }
      let expectedAttempts = 1
      for (const [retry, delayMs] of DELAYS_MS.entries()) {
        const failed = yield* row
        expect(failed.status).toBe("Failed")
        expect(failed.lastStatusCode).toBe(500)
        expect(failed.lastError).toBe("endpoint answered HTTP 500")
        expect(failed.roundFailures).toBe(retry + 1)
        // The n-th configured delay, jittered within bounds, after the attempt.
        const nextMs = failed.nextAttemptAt!.getTime()
        expect(nextMs).toBeGreaterThanOrEqual(window.from + Math.floor(delayMs * (1 - RETRY_JITTER)) - 5)
        expect(nextMs).toBeLessThanOrEqual(window.to + Math.ceil(delayMs * (1 + RETRY_JITTER)) + 5)

        yield* staysAt(expectedAttempts)
        // Almost there: still nothing.
        yield* advanceTo(nextMs - 20)
        yield* staysAt(expectedAttempts)
        // Past the retry time (and the next poll): exactly one more attempt.
        const from = yield* Clock.currentTimeMillis
        yield* TestClock.adjust(POLL_MS + 20)
        window = { from, to: yield* Clock.currentTimeMillis }
        expectedAttempts += 1
        yield* waitFor(`attempt ${expectedAttempts}`, row, attemptsAre(expectedAttempts))
      }

      const dead = yield* row
      expect(dead.status).toBe("DeadLettered")
      expect(dead.nextAttemptAt).toBeNull()
      expect(dead.attempts).toBe(DELAYS_MS.length + 1)
      // Time passes; a dead letter is never retried on its own. (Minutes, not hours, so that the bearer token and
      // the signature timestamps of the attempts below stay valid on the wall clock.)
      yield* TestClock.adjust("2 minutes")
      yield* staysAt(DELAYS_MS.length + 1)

      const listed = yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=DeadLettered", { token })
      expectStatus(listed, 200)
      expect(listed.body.data).toHaveLength(1)
      expect(listed.body.data[0]).toMatchObject({
        id: dead.id, endpointId: created.body.id, endpointUrl: receiver.url("/clock"), eventId: event!.id, eventType: "deposit.reconciled", status: "DeadLettered",
        attempts: 4, lastStatusCode: 500, lastError: "endpoint answered HTTP 500", nextAttemptAt: null
      })

      // Replay: requeued for an immediate attempt, attempts kept, and a fresh round of retries.
      const replayed = yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${dead.id}/replay`, { token })
      expectStatus(replayed, 202)
      expect(replayed.body).toMatchObject({ id: dead.id, endpointUrl: receiver.url("/clock"), eventId: event!.id, status: "Pending", attempts: 4 })
      expect(replayed.body.nextAttemptAt).not.toBeNull()
      // The replay wakes the dispatcher (asleep until its next due delivery, none): the attempt runs without the clock.
      yield* waitFor("the replayed attempt", row, attemptsAre(5))
      const again = yield* row
      expect(again.status).toBe("Failed")
      expect(again.roundFailures).toBe(1)
      const firstDelay = again.nextAttemptAt!.getTime() - (yield* Clock.currentTimeMillis)
      expect(firstDelay).toBeLessThanOrEqual(DELAYS_MS[0]! * (1 + RETRY_JITTER) + 5)

      receiver.answer(() => 200)
      yield* advanceTo(again.nextAttemptAt!.getTime() + POLL_MS + 20)
      yield* waitFor("success", row, { until: (r) => r.status === "Succeeded", timeoutMs: 30_000 })
      const done = yield* row
      expect(done).toMatchObject({ attempts: 6, lastStatusCode: 200, lastError: null, nextAttemptAt: null })
      expect(receiver.successes("/clock", event!.id)).toBe(1)
      expect(receiver.requests.every((r) => r.verified)).toBe(true)

      // A succeeded delivery is never sent again.
      expectProblem(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${dead.id}/replay`, { token }), 409, "webhook_delivery_succeeded")
      yield* TestClock.adjust("1 hour")
      yield* realSleep(200)
      expect(receiver.requests).toHaveLength(6)
      yield* dispatcher.stop
    }))

  it.effect("replay: 404 for an unknown delivery, and for another tenant's or mode's", () =>
    Effect.gen(function* () {
      const a = yield* signup()
      const aTest = yield* apiToken(a.ownerToken, "test")
      const b = yield* signup()
      const bTest = yield* apiToken(b.ownerToken, "test")
      expectProblem(yield* call("POST", "/api/v1/webhook-endpoints/deliveries/whd_nope/replay", { token: aTest.token }), 404, "webhook_delivery_not_found")

      const created = yield* call("POST", "/api/v1/webhook-endpoints", { token: aTest.token, json: { url: "http://127.0.0.1:9/hook" } })
      expectStatus(created, 201)
      yield* stageEvents(a.tenantId, "test", 1)
      const dispatcher = yield* startDispatcher({ pollMs: POLL_MS })
      yield* waitFor("a's delivery to be staged", deliveryRows(a.tenantId), { until: (rows) => rows.length === 1, timeoutMs: 30_000 })
      yield* dispatcher.stop
      const [delivery] = yield* deliveryRows(a.tenantId)
      // b cannot see or replay it; nor can a's own live-mode dashboard token (another mode).
      expectProblem(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${delivery!.id}/replay`, { token: bTest.token }), 404, "webhook_delivery_not_found")
      expectProblem(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${delivery!.id}/replay`, { token: a.ownerToken }), 404, "webhook_delivery_not_found")
      expect((yield* call("GET", "/api/v1/webhook-endpoints/deliveries", { token: bTest.token })).body.data).toEqual([])
      expectStatus(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${delivery!.id}/replay`, { token: aTest.token }), 202)

      // Once its endpoint is deleted the delivery is dead-lettered, and replaying it answers 404 for the endpoint.
      expectStatus(yield* call("DELETE", `/api/v1/webhook-endpoints/${created.body.id}`, { token: aTest.token }), 204)
      const [after] = yield* deliveryRows(a.tenantId)
      expect(after).toMatchObject({ status: "DeadLettered", lastError: "endpoint deactivated" })
      expectProblem(yield* call("POST", `/api/v1/webhook-endpoints/deliveries/${delivery!.id}/replay`, { token: aTest.token }), 404, "webhook_endpoint_not_found")
    }))
})
