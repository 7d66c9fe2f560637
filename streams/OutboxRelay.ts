import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schedule } from "effect"
import type { EventEnvelope } from "../services/Outbox.js"
import { ReconciledBus } from "./ReconciledBus.js"

const RELAY_BATCH = 500

/** Publishes committed outbox events in id order; a failed publish leaves the row for the next pass. */
export const relayOnce = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const bus = yield* ReconciledBus
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      const rows = yield* sql<{ id: number; tenantId: string; subjectKey: string; envelope: EventEnvelope }>`
        SELECT id, tenant_id, subject_key, envelope FROM outbox WHERE published_at IS NULL
        ORDER BY id LIMIT ${RELAY_BATCH} FOR UPDATE SKIP LOCKED`
      const done: Array<number> = []
      for (const r of rows) {
        const ok = yield* bus.publish({ tenantId: r.tenantId, subjectKey: r.subjectKey, envelope: r.envelope }).pipe(
          Effect.as(true),
          Effect.catchAll((e) => Effect.logWarning(`outbox relay: publish failed, will retry: ${e.message}`).pipe(Effect.as(false)))
        )
        if (!ok) break
        done.push(r.id)
      }
      if (done.length > 0) yield* sql`UPDATE outbox SET published_at = now() WHERE id IN ${sql.in(done)}`
      return done.length
    })
  )
})

export const OutboxRelayLive = Layer.scopedDiscard(
  relayOnce.pipe(
    Effect.catchAllCause((c) => Effect.logError("outbox relay pass failed", c).pipe(Effect.as(0))),
    Effect.repeat(Schedule.spaced("200 millis")),
    Effect.forkScoped
  )
)
