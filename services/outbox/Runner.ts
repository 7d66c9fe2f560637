import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Either, Exit, Layer, Option, Queue, Schedule } from "effect"
import type { EventType } from "../../src/contract/Events.js"
import { delayBeforeRetry } from "../../src/domain/RetrySchedule.js"
import { tracingOn, withBatchSpan } from "../../src/TraceContext.js"
import { type ConsumedEvent, type Consumer, type DecodedEvent, decodingOf, MalformedEvent, type RawConsumer } from "./Consumers.js"
import { claimStatement } from "./Claim.js"
import { consumerTurnKey, tryTurn } from "./Registry.js"
import { OutboxWakeups } from "./Wakeups.js"
import { Metrics } from "../../src/Metrics.js"
import { outageLog, outageOf } from "../../src/OutageLog.js"
import { direct } from "../../src/db/Direct.js"

/**
 * The one runner every downstream consumer of committed outbox events uses. Each pass is ONE transaction: claim up to `batchSize` of the consumer's due pending rows (in outbox id order), run the handler on them and delete them. The handler's Postgres writes commit with the delete
 * or not at all, so a Postgres-side consumer's effects happen exactly once. The batch runs in a savepoint; if it
 * fails, it is rolled back and the events are tried one by one, each in its own savepoint, so one bad event does not
 * fail the others. A failed event's row gets `attempts`, `last_error` and `next_attempt_at` (the `retry` Schedule's
 * next delay); after `maxAttempts` it moves to `consumer_dead_letters` (kept for `collections consumers dead-letters`)
 * and stops blocking. An outage (Postgres gone, the whole pass fails) rolls everything back and costs no attempt.
 * Per-account order. An account key is (tenant_id, mode, subject_key). One pass of a consumer runs at a time across
 * every process (a transaction-level advisory lock per consumer; a worker that does not get it skips the pass), and a
 * pass takes the consumer's due rows in outbox id order, so events are handled in the order they were committed:
 * - the claim skips rows whose key has an earlier row waiting to retry (found through the small partial index on
 *   failed rows), so a retrying account neither runs ahead nor fills the batch with rows that cannot go;
 * - within a pass, once an event of a key fails, the later events of that key are left as they are.
 * Within one key, outbox ids follow commit order (the reconciler stages an account's events under its row lock).
 * Several workers share a consumer by taking turns, pass by pass (a pass is milliseconds for hundreds of events;
 * claiming side by side with SKIP LOCKED cost the deposit path a tenth of its throughput: docs/performance-history.md).
 * Typed data. A consumer that reads data names its types (`decode`); the runner decodes each event's `data` with its
 * type's compiled schema (src/contract/Events.ts), and one that does not decode (or a handler's `MalformedEvent`) is
 * dead-lettered at once with the decode message. The relay and the webhook stager forward the JSON as committed.
 *
 * Bounds: `batchSize` rows per transaction, `inFlight` transactions at once per runner (each holds one connection),
 * `pollMs` after a pass that found some but less than a full batch (a full batch goes again at once); after a pass that
 * found nothing it waits for a nudge (this process, or an API process through Postgres, staged one of its types:
 * Wakeups.ts, CrossProcessWakeups.ts) or `idlePollMs` (30 s, a safety net), so idle is idle.
 */

export * from "./Consumers.js"

export interface RunnerOptions {
  /** Pending rows claimed per transaction. */
  readonly batchSize: number
  /** Loops of this consumer in this process. They take turns with each other and with other processes (one pass at a time). */
  readonly inFlight: number
  /** Pause after a pass that found some events but less than a full batch. */
  readonly pollMs: number
  /**
   * Longest pause after a pass that found nothing: a nudge ends it sooner (then a pass `wakeDelayMs` later, and one
   * more after `pollMs`, for a staging transaction still open), and so does the earliest retry this runner set.
   */
  readonly idlePollMs: number
  readonly wakeDelayMs: number
  /** Attempts before an event is dead-lettered. */
  readonly maxAttempts: number
  /** The delay before each retry (retry 0 follows the first failure); an exhausted schedule dead-letters too. */
  readonly retry: Schedule.Schedule<Duration.Duration>
  /** Runs after a pass that handled events has committed (the webhook dispatcher wakes its delivery loop). */
  readonly onCommitted?: (handled: number) => Effect.Effect<void>
}

/** 1 s, 3 s, 9 s, ... (about 18 minutes over the 8 attempts), each jittered. */
export const DEFAULT_RETRY: Schedule.Schedule<Duration.Duration> = Schedule.exponential("1 second", 3).pipe(Schedule.jittered)

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  batchSize: 500, inFlight: 1, pollMs: 200, idlePollMs: 30_000, wakeDelayMs: 10, maxAttempts: 8, retry: DEFAULT_RETRY
}

export interface PassReport {
  readonly claimed: number
  readonly handled: number
  readonly failed: number
  /** Another loop (this process's or another's) had the consumer's turn: nothing was looked at. */
  readonly busy?: boolean
  /** The pass failed as a whole for an outage (Postgres away): the loop pauses FAILED_PASS_PAUSE_MS and tries again. */
  readonly failedPass?: boolean
}

/** The pause after a pass that failed as a whole: short, so the runner is back soon after an outage ends. */
const FAILED_PASS_PAUSE_MS = 1_000

const keyOf = (e: ConsumedEvent) => `${e.tenantId}\u0000${e.mode}\u0000${e.subjectKey}`

const errorText = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  const text = e instanceof MalformedEvent ? e.message : e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return text.slice(0, 2000)
}

/** The runner's passes for one consumer, and its loops. */
export const makeConsumerRunner = <R, T extends EventType = EventType>(consumer: Consumer<R, T>, overrides: Partial<RunnerOptions> = {}) =>
  Effect.gen(function* () {
    const options: RunnerOptions = { ...DEFAULT_RUNNER_OPTIONS, ...overrides }
    const sql = yield* SqlClient.SqlClient
    const name = consumer.name
    const metrics = yield* Metrics
    // One "consumers" component for every consumer's loops: one warning per outage, not one per consumer and pass.
    const outages = yield* outageLog("consumers", "consumer passes")
    const decoding = yield* Effect.sync(() => decodingOf(consumer))
    const wake = yield* Queue.sliding<void>(1)
    // The retries this runner scheduled that no pass has reached yet (its idle pause ends at the earliest), and the
    // claim time of its latest pass: a retry due at or before it was claimed by that pass (or by another process).
    let retryTimes: Array<number> = []
    let lastPassMs = 0
    const handle = (events: ReadonlyArray<ConsumedEvent>): Effect.Effect<number | void, unknown, R> =>
      decoding === undefined ? (consumer as RawConsumer<R>).handle(events) : decoding.handle(events as ReadonlyArray<DecodedEvent<T>>)
    const traced = yield* tracingOn
    const envelope = sql`${consumer.withEnvelope || decoding ? sql`, o.envelope::text AS envelope_json` : sql`, '' AS envelope_json`}${
      traced ? sql`, o.traceparent` : sql``}`

    // One pass per consumer at a time, across processes: the lock is the transaction's and goes with its commit.
    const turn = tryTurn(sql, consumerTurnKey(name))
    const claim = (now: Date) => direct(claimStatement(sql, name, now, options.batchSize, envelope))

    const remove = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.void : direct(sql`DELETE FROM outbox_pending WHERE consumer = ${name} AND outbox_id = ANY(${ids}::bigint[])`).pipe(Effect.asVoid)

    /**
     * Handles the events and deletes the rows it did, in a savepoint of the pass's transaction; how many it did. Tracing
     * on: in a span that is a child of the first event's staging span and linked to the other events' (TraceContext).
     */
    const handleAndRemove = (events: ReadonlyArray<ConsumedEvent>) =>
      traced
        ? withBatchSpan("ConsumerRunner.batch", events.map((e) => e.traceparent), { kind: "consumer", attributes: { consumer: name } })(handleAndRemoveNow(events))
        : handleAndRemoveNow(events)
    const handleAndRemoveNow = (events: ReadonlyArray<ConsumedEvent>) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const n = yield* handle(events)
          const done = typeof n === "number" ? events.slice(0, Math.max(0, Math.min(n, events.length))) : events
          yield* remove(done.map((e) => e.outboxId))
          return done.length
        })
      )

    /** A failed event: retried later, or dead-lettered (out of attempts, or malformed: it will never succeed). */
    const recordFailure = (e: ConsumedEvent, cause: Cause.Cause<unknown>, nowMs: number) =>
      Effect.gen(function* () {
        const attempts = e.attempts + 1
        const error = errorText(cause)
        const malformed = Cause.squash(cause) instanceof MalformedEvent
        const delay = malformed || attempts >= options.maxAttempts ? Option.none() : yield* delayBeforeRetry(options.retry, e.attempts, nowMs)
        if (Option.isNone(delay)) {
          yield* sql`
            WITH d AS (DELETE FROM outbox_pending WHERE consumer = ${name} AND outbox_id = ${e.outboxId} RETURNING consumer, outbox_id)
            INSERT INTO consumer_dead_letters (consumer, outbox_id, attempts, last_error)
            SELECT consumer, outbox_id, ${attempts}, ${error} FROM d
            ON CONFLICT (consumer, outbox_id) DO UPDATE SET attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, dead_lettered_at = now()`
          metrics.consumerEvents.inc({ consumer: name, outcome: "dead_letter" })
          return yield* Effect.logWarning(
            malformed ? `consumer ${name}: malformed event dead-lettered at once: ${error}` : `consumer ${name}: event dead-lettered after ${attempts} attempts: ${error}`
          )
        }
        const nextAttemptAt = new Date(nowMs + Duration.toMillis(delay.value))
        retryTimes.push(nextAttemptAt.getTime())
        metrics.consumerEvents.inc({ consumer: name, outcome: "retry" })
        yield* sql`
          UPDATE outbox_pending SET attempts = ${attempts}, last_error = ${error}, next_attempt_at = ${nextAttemptAt}
          WHERE consumer = ${name} AND outbox_id = ${e.outboxId}`
        yield* Effect.logInfo(`consumer ${name}: event failed (attempt ${attempts}), retrying at ${nextAttemptAt.toISOString()}: ${error}`)
      }).pipe(Effect.annotateLogs({ eventId: e.eventId, outboxId: e.outboxId }))

    /** The batch failed: each event alone; a failed event holds back the later events of its account. */
    const oneByOne = (events: ReadonlyArray<ConsumedEvent>, nowMs: number) =>
      Effect.gen(function* () {
        const stopped = new Set<string>()
        let handled = 0
        let failed = 0
        for (const e of events) {
          const key = keyOf(e)
          if (stopped.has(key)) continue
          const exit = yield* Effect.exit(handleAndRemove([e]))
          if (Exit.isSuccess(exit)) {
            handled += exit.value
            if (exit.value === 0) stopped.add(key)
            continue
          }
          if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.failCause(exit.cause)
          stopped.add(key)
          failed++
          yield* recordFailure(e, exit.cause, nowMs)
        }
        return { handled, failed }
      })

    /** One transaction: claim, handle (batch, else one by one), delete or record failures. */
    const pass: Effect.Effect<PassReport, unknown, R> = sql.withTransaction(
      Effect.gen(function* () {
        if (!(yield* turn)) return { claimed: 0, handled: 0, failed: 0, busy: true }
        const nowMs = yield* Clock.currentTimeMillis
        lastPassMs = Math.max(lastPassMs, nowMs)
        const claimed = yield* claim(new Date(nowMs))
        if (claimed.length === 0) return { claimed: claimed.length, handled: 0, failed: 0 }
        // A decoding consumer's malformed events are dead-lettered here, at once; the rest go to the handler.
        let ready: ReadonlyArray<ConsumedEvent> = claimed
        let malformed = 0
        if (decoding !== undefined) {
          const decoded: Array<ConsumedEvent> = []
          for (const e of claimed) {
            const d = decoding.decodeOne(e)
            if (Either.isRight(d)) decoded.push(d.right)
            else {
              malformed++
              yield* recordFailure(e, Cause.fail(d.left), nowMs)
            }
          }
          ready = decoded
          if (ready.length === 0) return { claimed: claimed.length, handled: 0, failed: malformed }
        }
        const batch = yield* Effect.exit(handleAndRemove(ready))
        if (Exit.isSuccess(batch)) return { claimed: claimed.length, handled: batch.value, failed: malformed }
        if (Cause.isInterruptedOnly(batch.cause)) return yield* Effect.failCause(batch.cause)
        if (ready.length > 1) yield* Effect.logDebug(`consumer ${name}: a batch of ${ready.length} failed; trying one by one`)
        const each = yield* oneByOne(ready, nowMs)
        return { claimed: claimed.length, handled: each.handled, failed: each.failed + malformed }
      })
    ).pipe(
      Effect.tap((r) => {
        if (r.handled > 0) metrics.consumerEvents.inc({ consumer: name, outcome: "handled" }, r.handled)
        return r.handled > 0 && options.onCommitted ? options.onCommitted(r.handled) : Effect.void
      }),
      Effect.withSpan(`ConsumerRunner.pass`, { attributes: { consumer: name } })
    )

    // A failed pass (Postgres restarting) goes to the consumers' outage log (one warning per outage; a bug is an error
    // with its cause: src/OutageLog.ts), and the loop tries again after FAILED_PASS_PAUSE_MS.
    const safePass = pass.pipe(
      Effect.zipLeft(outages.succeeded(name)),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.sync(() => metrics.consumerPassFailures.inc({ consumer: name })).pipe(
            Effect.zipRight(outages.failed(cause, name)),
            // An outage: soon again. A bug: the idle wait, as before (not an error a second).
            Effect.as<PassReport>({ claimed: 0, handled: 0, failed: 0, failedPass: outageOf(cause) !== undefined })
          )
      )
    )
    /** Waits for a nudge, the earliest retry or idlePollMs; true when nudged. */
    const idleWait = Effect.gen(function* () {
      retryTimes = retryTimes.filter((t) => t > lastPassMs)
      const untilRetry = retryTimes.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY) - (yield* Clock.currentTimeMillis)
      const waitMs = Math.max(0, Math.min(options.idlePollMs, untilRetry))
      const nudged = yield* Effect.raceFirst(Queue.take(wake).pipe(Effect.as(true)), Effect.sleep(Duration.millis(waitMs)).pipe(Effect.as(false)))
      if (nudged) yield* Effect.sleep(Duration.millis(options.wakeDelayMs))
      return nudged
    })
    const loop = Effect.gen(function* () {
      let recheck = false
      for (;;) {
        const r = yield* safePass
        if (r.failedPass === true) {
          yield* Effect.sleep(Duration.millis(FAILED_PASS_PAUSE_MS))
          continue
        }
        if (r.handled + r.failed >= options.batchSize) continue
        // Found some, or another loop had the turn (its events may be ours next): the short pause.
        if (r.claimed > 0 || r.busy === true || recheck) {
          recheck = false
          yield* Effect.sleep(Duration.millis(options.pollMs))
        } else {
          recheck = yield* idleWait
        }
      }
    })

    /** Forks `inFlight` loops into the current scope, listening for nudges while it lasts. */
    const start = Effect.gen(function* () {
      const hub = yield* OutboxWakeups
      yield* Effect.acquireRelease(Effect.sync(() => hub.listen(consumer, () => void Queue.unsafeOffer(wake, undefined))), (off) => Effect.sync(off))
      yield* Effect.forEach(Array.from({ length: Math.max(1, options.inFlight) }), () => Effect.forkScoped(loop), { discard: true })
    }).pipe(Effect.annotateLogs({ component: "consumer-runner", consumer: name }))
    return { pass, start, options } as const
  })

/** Runs the consumer's loops for as long as the layer lives. */
export const ConsumerRunnerLive = <R, T extends EventType = EventType>(consumer: Consumer<R, T>, options: Partial<RunnerOptions> = {}) =>
  Layer.scopedDiscard(Effect.flatMap(makeConsumerRunner(consumer, options), (r) => r.start))
