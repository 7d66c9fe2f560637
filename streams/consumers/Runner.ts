import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Exit, Layer, Option, Schedule } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { delayBeforeRetry } from "../../services/webhooks/RetrySchedule.js"
import type { Subscription } from "./Registry.js"

/**
 * The one runner every downstream consumer of committed outbox events uses.
 *
 * Each pass is ONE transaction: claim up to `batchSize` of the consumer's due pending rows (`FOR UPDATE SKIP LOCKED`,
 * in outbox id order), run the handler on them and delete them. The handler's Postgres writes commit with the delete
 * or not at all, so a Postgres-side consumer's effects happen exactly once. The batch runs in a savepoint; if it
 * fails, it is rolled back and the events are tried one by one, each in its own savepoint, so one bad event does not
 * fail the others. A failed event's row gets `attempts`, `last_error` and `next_attempt_at` (the `retry` Schedule's
 * next delay); after `maxAttempts` it moves to `consumer_dead_letters` (kept for `collections consumers dead-letters`)
 * and stops blocking. An outage (Postgres gone, the whole pass fails) rolls everything back and costs no attempt.
 *
 * Per-account order. An account key is (tenant_id, mode, subject_key). A runner handles an event only when no earlier
 * live pending row of the same key and consumer exists outside its own claim:
 * - the claim skips rows whose key has an earlier row waiting to retry (found through the small partial index on
 *   failed rows), so a retrying account neither runs ahead nor fills the batch with rows that cannot go;
 * - in the same statement, any claimed row whose key has an earlier pending row that this claim did not get (another
 *   worker holds it under its row lock, or it waits to retry) is marked `blocked` and left untouched. Rows of a key
 *   only leave the table by a committed handling (or a move to the dead letters), so a worker reaches a key's event
 *   only after every earlier event of that key committed. The check reads the statement's snapshot: a row another
 *   worker committed a moment ago may still block this pass; that costs one poll, never order.
 * - within a pass, once an event of a key fails, the later events of that key are left as they are.
 * Within one key, events get increasing outbox ids in commit order (the reconciler stages an account's events under
 * its row lock), which the rule relies on. Different keys progress in parallel across workers.
 *
 * Bounds: `batchSize` rows per transaction, `inFlight` transactions at once per runner (each holds one connection),
 * `pollMs` between passes that found less than a full batch; a full batch goes again at once.
 */

/** One committed outbox event as a consumer sees it. */
export interface ConsumedEvent {
  readonly outboxId: number
  readonly eventId: string
  readonly tenantId: string
  readonly mode: Mode
  readonly eventType: string
  readonly subjectKey: string
  /** Failed attempts so far. */
  readonly attempts: number
  /** The envelope as the JSON text Postgres holds, when the consumer asks for it (`withEnvelope`); else "". */
  readonly envelopeJson: string
}

export interface Consumer<R = never> extends Subscription {
  /** Read each event's envelope text in the claim (the relay does; the webhook stager reads only what it needs). */
  readonly withEnvelope?: boolean
  /**
   * Handles events (outbox id order) inside the runner's transaction. Failing rolls back what it wrote, and the
   * events are tried one by one. It may return how many of the events, from the first, it did: the rest stay
   * pending as they are (neither done nor failed) for the next pass, for a consumer that keeps the id order (the
   * relay: only an unbroken run of published events is done).
   */
  readonly handle: (events: ReadonlyArray<ConsumedEvent>) => Effect.Effect<number | void, unknown, R>
}

export interface RunnerOptions {
  /** Pending rows claimed per transaction. */
  readonly batchSize: number
  /** Transactions in flight at once for this consumer in this process. */
  readonly inFlight: number
  /** Pause after a pass that found less than a full batch. */
  readonly pollMs: number
  /** Attempts before an event is dead-lettered. */
  readonly maxAttempts: number
  /** The delay before each retry (retry 0 follows the first failure); an exhausted schedule dead-letters too. */
  readonly retry: Schedule.Schedule<Duration.Duration>
  /** Runs after a pass that handled events has committed (the webhook dispatcher wakes its delivery loop). */
  readonly onCommitted?: (handled: number) => Effect.Effect<void>
}

/** 1 s, 3 s, 9 s, ... (about 18 minutes over the 8 attempts), each jittered. */
export const DEFAULT_RETRY: Schedule.Schedule<Duration.Duration> = Schedule.exponential("1 second", 3).pipe(Schedule.jittered)

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = { batchSize: 500, inFlight: 1, pollMs: 200, maxAttempts: 8, retry: DEFAULT_RETRY }

interface Claimed extends ConsumedEvent {
  readonly blocked: boolean
}

export interface PassReport {
  readonly claimed: number
  readonly handled: number
  readonly failed: number
}

const keyOf = (e: ConsumedEvent) => `${e.tenantId}\u0000${e.mode}\u0000${e.subjectKey}`

const errorText = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return text.slice(0, 2000)
}

/** The runner's passes for one consumer, and its loops. */
export const makeConsumerRunner = <R>(consumer: Consumer<R>, overrides: Partial<RunnerOptions> = {}) =>
  Effect.gen(function* () {
    const options: RunnerOptions = { ...DEFAULT_RUNNER_OPTIONS, ...overrides }
    const sql = yield* SqlClient.SqlClient
    const name = consumer.name
    const envelope = consumer.withEnvelope ? sql`, o.envelope::text AS envelope_json` : sql`, '' AS envelope_json`

    // `held` is materialised and reads outbox through an id array: inlined, Postgres joined it per claimed row, or
    // hashed all of outbox (EXPLAIN on 200,000 events: 17 s and 200 ms; this way 19 ms for a batch of 500).
    const claim = (now: Date) =>
      sql<Claimed>`
        WITH claimed AS (
          SELECT p.outbox_id, p.attempts, o.event_id, o.tenant_id, o.mode, o.event_type, o.subject_key ${envelope}
          FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
          WHERE p.consumer = ${name} AND (p.next_attempt_at IS NULL OR p.next_attempt_at <= ${now})
            AND NOT EXISTS (
              SELECT 1 FROM outbox_pending f JOIN outbox fo ON fo.id = f.outbox_id
              WHERE f.consumer = ${name} AND f.attempts > 0 AND f.outbox_id < p.outbox_id AND f.next_attempt_at > ${now}
                AND fo.subject_key = o.subject_key AND fo.tenant_id = o.tenant_id AND fo.mode = o.mode)
          ORDER BY p.outbox_id LIMIT ${options.batchSize}
          FOR UPDATE OF p SKIP LOCKED
        ),
        held AS MATERIALIZED (
          SELECT o.tenant_id, o.mode, o.subject_key, min(o.id) AS first_id FROM outbox o
          WHERE o.id = ANY (ARRAY(
            SELECT q.outbox_id FROM outbox_pending q
            WHERE q.consumer = ${name} AND q.outbox_id < (SELECT max(outbox_id) FROM claimed)
              AND NOT EXISTS (SELECT 1 FROM claimed m WHERE m.outbox_id = q.outbox_id)))
          GROUP BY 1, 2, 3
        )
        SELECT c.*, COALESCE(h.first_id < c.outbox_id, false) AS blocked
        FROM claimed c LEFT JOIN held h ON h.subject_key = c.subject_key AND h.tenant_id = c.tenant_id AND h.mode = c.mode
        ORDER BY c.outbox_id`

    const remove = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.void : sql`DELETE FROM outbox_pending WHERE consumer = ${name} AND outbox_id = ANY(${ids}::bigint[])`.pipe(Effect.asVoid)

    /** Handles the events and deletes the rows it did, in a savepoint of the pass's transaction; how many it did. */
    const handleAndRemove = (events: ReadonlyArray<ConsumedEvent>) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const n = yield* consumer.handle(events)
          const done = typeof n === "number" ? events.slice(0, Math.max(0, Math.min(n, events.length))) : events
          yield* remove(done.map((e) => e.outboxId))
          return done.length
        })
      )

    const recordFailure = (e: ConsumedEvent, cause: Cause.Cause<unknown>, nowMs: number) =>
      Effect.gen(function* () {
        const attempts = e.attempts + 1
        const error = errorText(cause)
        const delay = attempts >= options.maxAttempts ? Option.none() : yield* delayBeforeRetry(options.retry, e.attempts, nowMs)
        if (Option.isNone(delay)) {
          yield* sql`
            WITH d AS (DELETE FROM outbox_pending WHERE consumer = ${name} AND outbox_id = ${e.outboxId} RETURNING consumer, outbox_id)
            INSERT INTO consumer_dead_letters (consumer, outbox_id, attempts, last_error)
            SELECT consumer, outbox_id, ${attempts}, ${error} FROM d
            ON CONFLICT (consumer, outbox_id) DO UPDATE SET attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, dead_lettered_at = now()`
          return yield* Effect.logWarning(`consumer ${name}: event dead-lettered after ${attempts} attempts: ${error}`)
        }
        const nextAttemptAt = new Date(nowMs + Duration.toMillis(delay.value))
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
        const nowMs = yield* Clock.currentTimeMillis
        const claimed = yield* claim(new Date(nowMs))
        const ready = claimed.filter((c) => !c.blocked)
        if (ready.length === 0) return { claimed: claimed.length, handled: 0, failed: 0 }
        const batch = yield* Effect.exit(handleAndRemove(ready))
        if (Exit.isSuccess(batch)) return { claimed: claimed.length, handled: batch.value, failed: 0 }
        if (Cause.isInterruptedOnly(batch.cause)) return yield* Effect.failCause(batch.cause)
        if (ready.length > 1) yield* Effect.logDebug(`consumer ${name}: a batch of ${ready.length} failed; trying one by one`)
        return { claimed: claimed.length, ...(yield* oneByOne(ready, nowMs)) }
      })
    ).pipe(
      Effect.tap((r) => (r.handled > 0 && options.onCommitted ? options.onCommitted(r.handled) : Effect.void)),
      Effect.withSpan(`ConsumerRunner.pass`, { attributes: { consumer: name } })
    )

    // A failed pass (Postgres restarting) is logged, and the loop carries on at the next tick.
    const loop = pass.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError(`consumer ${name}: pass failed; retrying`, cause).pipe(Effect.as({ claimed: 0, handled: 0, failed: 0 }))
      ),
      Effect.flatMap((r) => (r.handled + r.failed >= options.batchSize ? Effect.void : Effect.sleep(Duration.millis(options.pollMs)))),
      Effect.forever
    )

    /** Forks `inFlight` loops into the current scope. */
    const start = Effect.forEach(Array.from({ length: Math.max(1, options.inFlight) }), () => Effect.forkScoped(loop), { discard: true }).pipe(
      Effect.annotateLogs({ component: "consumer-runner", consumer: name })
    )
    return { pass, start, options } as const
  })

/** Runs the consumer's loops for as long as the layer lives. */
export const ConsumerRunnerLive = <R>(consumer: Consumer<R>, options: Partial<RunnerOptions> = {}) =>
  Layer.scopedDiscard(Effect.flatMap(makeConsumerRunner(consumer, options), (r) => r.start))
