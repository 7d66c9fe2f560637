import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { newId } from "../../src/domain/Ids.js"
import type { EventEnvelope } from "../../src/contract/Events.js"

/** A delivery the dispatcher has leased, with what it needs to sign and send it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly eventId: string
  readonly endpointId: string
  readonly payload: string
  readonly attempts: number
  readonly roundFailures: number
  readonly url: string
  readonly secretSealed: string
}

export interface ClaimRequest {
  readonly now: Date
  /** The claimed rows' next_attempt_at becomes this: if we crash mid-send, they are claimed again after it. */
  readonly leaseUntil: Date
  readonly limit: number
  readonly perEndpointLimit: number
  /** Deliveries already in flight per endpoint id, so the per-endpoint limit holds across claims. */
  readonly busy: ReadonlyMap<string, number>
}

export interface AttemptRecord {
  readonly statusCode: number | null
  readonly error: string | null
  /** The next retry, or null when the schedule is used up (dead letter). */
  readonly nextAttemptAt: Date | null
}

// Well under Postgres's 65,535 bind parameters at 8 columns a row.
const INSERT_CHUNK = 1000

/** The body every endpoint receives, fields in the documented order, fixed once at staging. */
export const payloadOf = (envelopeJson: string): string => {
  const e = JSON.parse(envelopeJson) as EventEnvelope
  return JSON.stringify({ id: e.id, type: e.type, createdAt: e.createdAt, mode: e.mode, data: e.data })
}

/** The dispatcher's SQL: staging deliveries from outbox events, leasing due ones, recording attempts. */
export class DispatchStore extends Effect.Service<DispatchStore>()("services/webhooks/DispatchStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Turns claimed outbox events (the consumer runner's claim, in its transaction) into one Pending delivery per
     * active endpoint of the event's tenant and mode (registered before the event). Envelopes are read only for
     * events with an endpoint to send them to: a tenant without endpoints (most events in a busy collections
     * account) costs one join that finds nothing. The unique (event, endpoint) key makes a repeat a no-op.
     */
    const stage = Effect.fn("DispatchStore.stage")(function* (ids: ReadonlyArray<number>, now: Date) {
      if (ids.length === 0) return
      const targets = yield* sql<{ eventId: string; endpointId: string; tenantId: string; mode: Mode; eventType: string; envelopeJson: string }>`
        SELECT o.event_id, e.id AS endpoint_id, o.tenant_id, o.mode, o.event_type, o.envelope::text AS envelope_json FROM outbox o
        JOIN webhook_endpoints e ON e.tenant_id = o.tenant_id AND e.mode = o.mode AND e.active AND e.created_at <= o.created_at
        WHERE o.id = ANY(${ids}::bigint[])`
      const payloads = new Map<string, string>()
      const rows = targets.map((t) => {
        let payload = payloads.get(t.eventId)
        if (payload === undefined) payloads.set(t.eventId, (payload = payloadOf(t.envelopeJson)))
        return {
          id: newId("whd"),
          eventId: t.eventId,
          endpointId: t.endpointId,
          tenantId: t.tenantId,
          mode: t.mode,
          eventType: t.eventType,
          payload,
          nextAttemptAt: now
        }
      })
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        yield* sql`INSERT INTO webhook_deliveries ${sql.insert(rows.slice(i, i + INSERT_CHUNK))}
          ON CONFLICT (event_id, endpoint_id) DO NOTHING`
      }
    }, Effect.orDie)

    /**
     * Leases due deliveries of active endpoints in one statement: at most `perEndpointLimit` minus what is already
     * in flight per endpoint, at most `limit` overall, earliest due first. Each endpoint is walked on its own index
     * range, so a backlog at one endpoint never hides another endpoint's due work.
     */
    const claim = Effect.fn("DispatchStore.claim")(function* (req: ClaimRequest) {
      if (req.limit <= 0) return [] as ReadonlyArray<ClaimedDelivery>
      const busy = JSON.stringify(Object.fromEntries(req.busy))
      return yield* sql<ClaimedDelivery>`
        WITH picked AS (
          SELECT d.id, d.next_attempt_at, d.seq
          FROM (SELECT id FROM webhook_endpoints WHERE active) e
          CROSS JOIN LATERAL (
            SELECT w.id, w.next_attempt_at, w.seq FROM webhook_deliveries w
            WHERE w.endpoint_id = e.id AND w.status IN ('Pending', 'Failed') AND w.next_attempt_at <= ${req.now}
            ORDER BY w.next_attempt_at, w.seq
            LIMIT GREATEST(${req.perEndpointLimit}::int - COALESCE((${busy}::jsonb ->> e.id)::int, 0), 0)
            FOR UPDATE OF w SKIP LOCKED
          ) d
          ORDER BY d.next_attempt_at, d.seq
          LIMIT ${req.limit}
        )
        UPDATE webhook_deliveries w SET next_attempt_at = ${req.leaseUntil}, updated_at = now()
        FROM picked, webhook_endpoints e
        WHERE w.id = picked.id AND e.id = w.endpoint_id
        RETURNING w.id, w.event_id, w.endpoint_id, w.payload, w.attempts, w.round_failures, e.url, e.secret_sealed`
    }, Effect.orDie)

    /** A 2xx: Succeeded for good. Only an unfinished delivery is updated, so a late duplicate changes nothing. */
    const recordSuccess = Effect.fn("DispatchStore.recordSuccess")(function* (id: string, statusCode: number, now: Date) {
      yield* sql`
        UPDATE webhook_deliveries SET status = 'Succeeded', attempts = attempts + 1, last_status_code = ${statusCode},
          last_error = NULL, next_attempt_at = NULL, delivered_at = ${now}, updated_at = now()
        WHERE id = ${id} AND status IN ('Pending', 'Failed')`
    }, Effect.orDie)

    /** Anything else: Failed with the next retry time, or DeadLettered when there is none. */
    const recordFailure = Effect.fn("DispatchStore.recordFailure")(function* (id: string, attempt: AttemptRecord) {
      const status = attempt.nextAttemptAt === null ? "DeadLettered" : "Failed"
      yield* sql`
        UPDATE webhook_deliveries SET status = ${status}, attempts = attempts + 1, round_failures = round_failures + 1,
          last_status_code = ${attempt.statusCode}, last_error = ${attempt.error}, next_attempt_at = ${attempt.nextAttemptAt},
          updated_at = now()
        WHERE id = ${id} AND status IN ('Pending', 'Failed')`
    }, Effect.orDie)

    /**
     * When the earliest unfinished delivery of an active endpoint falls due (a claimed one's lease end included), or
     * null when none waits: how long the delivery loop may sleep at rest. Walks each endpoint's index range, as claim.
     */
    const nextDueAt = Effect.fn("DispatchStore.nextDueAt")(function* () {
      const rows = yield* sql<{ next: Date | null }>`
        SELECT min(d.next_attempt_at) AS next
        FROM (SELECT id FROM webhook_endpoints WHERE active) e
        CROSS JOIN LATERAL (
          SELECT w.next_attempt_at FROM webhook_deliveries w
          WHERE w.endpoint_id = e.id AND w.status IN ('Pending', 'Failed')
          ORDER BY w.next_attempt_at, w.seq LIMIT 1
        ) d`
      return rows[0]?.next ?? null
    }, Effect.orDie)

    return { stage, claim, recordSuccess, recordFailure, nextDueAt } as const
  })
}) {}
