import { Cause, Clock, Duration, Effect, FiberSet, Option, Queue } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { WEBHOOKS } from "../outbox/Registry.js"
import { type Consumer, makeConsumerRunner } from "../outbox/Runner.js"
import { DELIVERIES_DUE, OutboxWakeups } from "../outbox/Wakeups.js"
import { SecretBox } from "../access/Keys.js"
import { attemptDelivery, type Outcome } from "./Attempt.js"
import { type ClaimedDelivery, DispatchStore } from "./DispatchStore.js"
import { delayBeforeRetry, retrySchedule } from "../../src/domain/RetrySchedule.js"
import { TargetResolver } from "./TargetResolver.js"
import { Metrics } from "../../src/Metrics.js"
import { outageLog, outageOf } from "../../src/OutageLog.js"

/** Bounds of the dispatcher; every one is finite. */
export interface DispatcherOptions {
  /**
   * The delivery loop's shortest pause between claims, and the stager's pause between passes that found events.
   * The delivery loop sleeps until the next delivery falls due (at most idleMaxMs), or until woken: by the stager's
   * commit, a finished attempt, or a replay (DELIVERIES_DUE, from this process or another through Postgres).
   */
  readonly pollMs: number
  /** The delivery loop's longest sleep when nothing is due (a safety net: every source of work wakes it). */
  readonly idleMaxMs: number
  /**
   * Outbox events staged per transaction. 500, as the outbox relay's pass: at 3,300 deposits a second, 200 made 17
   * staging transactions a second (five statements each) on the API's event loop.
   */
  readonly stageBatch: number
  /** Deliveries in flight at once, overall. */
  readonly maxInFlight: number
  /** Deliveries in flight at once per endpoint: a slow endpoint holds at most this many slots. */
  readonly perEndpointInFlight: number
  /** A claimed delivery not recorded by then (the dispatcher crashed) is claimed again. Must exceed timeoutMs. */
  readonly leaseMs: number
  /** Hard limit for one POST: connect, TLS, request, answer. */
  readonly timeoutMs: number
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  pollMs: 500,
  idleMaxMs: 30_000,
  stageBatch: 500,
  maxInFlight: 64,
  perEndpointInFlight: 4,
  leaseMs: 60_000,
  timeoutMs: 10_000
}

/**
 * The webhook dispatcher: a stager (the `webhooks` consumer on the consumer runner) that turns committed outbox events into deliveries, and a delivery loop
 * that leases due deliveries and sends each on its own fiber within the per-endpoint and overall bounds. Closing
 * the scope stops claiming and lets in-flight attempts finish and be recorded (each is bounded by timeoutMs).
 */
export const makeDispatcher = (overrides: Partial<DispatcherOptions> = {}) =>
  Effect.gen(function* () {
    const options: DispatcherOptions = { ...DEFAULT_DISPATCHER_OPTIONS, ...overrides }
    const store = yield* DispatchStore
    const box = yield* SecretBox
    const config = yield* AppConfigTag
    const resolve = yield* TargetResolver
    const schedule = retrySchedule(config.webhookRetryDelaysMs)
    const deps = { openSecret: box.open, policy: { allowInsecure: config.webhookAllowInsecureTargets, resolve }, timeoutMs: options.timeoutMs }
    if (config.webhookAllowInsecureTargets) {
      yield* Effect.logWarning("WEBHOOK_ALLOW_INSECURE_TARGETS is on: webhooks may be sent to http and private or loopback hosts (development only)")
    }

    const wake = yield* Queue.sliding<void>(1)
    const metrics = yield* Metrics
    // Postgres away: one warning and one recovery line for the dispatcher (src/OutageLog.ts); a bug is an error.
    const outages = yield* outageLog("webhook dispatcher", "delivery rounds")
    const inFlight = yield* FiberSet.make<void, never>()
    const busy = new Map<string, number>()
    let running = 0

    const record = (d: ClaimedDelivery, outcome: Outcome) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        if (outcome._tag === "Delivered") {
          yield* store.recordSuccess(d.id, outcome.statusCode, new Date(nowMs))
          metrics.webhookDeliveries.inc({ outcome: "delivered" })
          return yield* Effect.logDebug("webhook delivered")
        }
        const delay = yield* delayBeforeRetry(schedule, d.roundFailures, nowMs)
        const nextAttemptAt = Option.match(delay, { onNone: () => null, onSome: (ms) => new Date(nowMs + Duration.toMillis(ms)) })
        yield* store.recordFailure(d.id, { statusCode: outcome.statusCode, error: outcome.error, nextAttemptAt })
        metrics.webhookDeliveries.inc({ outcome: nextAttemptAt === null ? "dead_letter" : "retry" })
        yield* nextAttemptAt === null
          ? Effect.logWarning(`webhook delivery dead-lettered: ${outcome.error}`)
          : Effect.logInfo(`webhook delivery failed, retrying at ${nextAttemptAt.toISOString()}: ${outcome.error}`)
      })

    // Uninterruptible so that shutting down never loses a receiver's answer; the POST itself is time-bounded.
    const attempt = (d: ClaimedDelivery) =>
      Effect.flatMap(attemptDelivery(d, deps), (outcome) => record(d, outcome)).pipe(
        Effect.uninterruptible,
        Effect.zipLeft(outages.succeeded("attempt")),
        Effect.catchAllCause((cause) => {
          metrics.webhookDeliveries.inc({ outcome: "error" })
          return outageOf(cause) === undefined ? Effect.logError("webhook delivery attempt could not be completed", cause) : outages.failed(cause, "attempt")
        }),
        Effect.annotateLogs({ deliveryId: d.id, endpointId: d.endpointId, eventId: d.eventId, attempt: d.attempts + 1 }),
        Effect.ensuring(
          Effect.sync(() => {
            running -= 1
            const left = (busy.get(d.endpointId) ?? 1) - 1
            if (left <= 0) busy.delete(d.endpointId)
            else busy.set(d.endpointId, left)
          }).pipe(Effect.zipRight(Queue.offer(wake, undefined)))
        )
      )

    /** Claims what is due and starts it; the number claimed. */
    const claimOnce = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const claimed = yield* store.claim({
        now: new Date(nowMs),
        leaseUntil: new Date(nowMs + options.leaseMs),
        limit: options.maxInFlight - running,
        perEndpointLimit: options.perEndpointInFlight,
        busy
      })
      for (const d of claimed) {
        running += 1
        busy.set(d.endpointId, (busy.get(d.endpointId) ?? 0) + 1)
        yield* FiberSet.run(inFlight, attempt(d))
      }
      return claimed.length
    })

    // One failed round (say, Postgres restarting) goes to the outage log; the loop carries on at the next tick.
    const logged = (what: string) => (cause: Cause.Cause<unknown>) =>
      Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : outages.failed(cause, what)
    /** After a claim: pollMs when it found some; else until the next delivery is due, within [pollMs, idleMaxMs]. */
    const pauseAfter = (claimed: number) =>
      Effect.gen(function* () {
        let waitMs = options.pollMs
        if (claimed === 0) {
          const next = yield* store.nextDueAt()
          const nowMs = yield* Clock.currentTimeMillis
          waitMs = next === null ? options.idleMaxMs : Math.min(options.idleMaxMs, Math.max(options.pollMs, next.getTime() - nowMs))
        }
        yield* Effect.race(Effect.sleep(Duration.millis(waitMs)), Queue.take(wake))
      })

    // The stager is a consumer of the outbox on the consumer runner: deliveries are written in the runner's
    // transaction, with the delete of the events' pending rows; the delivery loop is woken once they committed.
    const stager: Consumer = {
      ...WEBHOOKS,
      handle: (events) => Effect.flatMap(Clock.currentTimeMillis, (nowMs) => store.stage(events.map((e) => e.outboxId), new Date(nowMs)))
    }
    const stagerRunner = yield* makeConsumerRunner(stager, {
      batchSize: options.stageBatch,
      pollMs: options.pollMs,
      onCommitted: () => Queue.offer(wake, undefined).pipe(Effect.asVoid)
    })
    const deliveryLoop = claimOnce.pipe(
      Effect.zipLeft(outages.succeeded("claim")),
      Effect.catchAllCause((cause) => Effect.as(logged("claim")(cause), 1)),
      Effect.flatMap((claimed) => pauseAfter(claimed).pipe(Effect.zipLeft(outages.succeeded("pause")), Effect.catchAllCause(logged("pause")))),
      Effect.forever
    )

    // A replay (here, or in another process through Postgres) queues a delivery for now: wake the loop.
    const hub = yield* OutboxWakeups
    yield* Effect.acquireRelease(Effect.sync(() => hub.listen({ eventTypes: [DELIVERIES_DUE] }, () => void Queue.unsafeOffer(wake, undefined))), (off) => Effect.sync(off))
    yield* stagerRunner.start
    yield* Effect.forkScoped(deliveryLoop)
  }).pipe(Effect.annotateLogs({ component: "webhook-dispatcher" }))
