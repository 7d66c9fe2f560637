import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { Mode } from "../src/domain/Mode.js"
import { ReconciledBus } from "./ReconciledBus.js"

const RELAY_BATCH = 500

/** Publishes committed outbox events in id order; a failed publish leaves the row for the next pass. */
export const relayOnce = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const bus = yield* ReconciledBus
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      const rows = yield* sql<{ id: number; tenantId: string; mode: Mode; eventId: string; eventType: string; subjectKey: string; envelopeJson: string }>`
        SELECT o.id, o.tenant_id, o.mode, o.event_id, o.event_type, o.subject_key, o.envelope::text AS envelope_json
        FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
        WHERE p.consumer = 'relay' ORDER BY p.outbox_id LIMIT ${RELAY_BATCH} FOR UPDATE OF p SKIP LOCKED`
      // Pipelined, in id order; only the unbroken run of published rows is marked, so nothing is skipped (a later row
      // that did go is published again next pass and de-duplicated by its event id).
      const acked = yield* bus.publishMany(rows)
      const stop = acked.indexOf(false)
      const done = (stop < 0 ? rows : rows.slice(0, stop)).map((r) => r.id)
      if (stop >= 0) yield* Effect.logWarning(`outbox relay: ${acked.filter((ok) => !ok).length} of ${rows.length} events not published; will retry`)
      if (done.length > 0) yield* sql`DELETE FROM outbox_pending WHERE consumer = 'relay' AND outbox_id = ANY(${done}::bigint[])`
      return done.length
    })
  )
})

export const OutboxRelayLive = Layer.scopedDiscard(
  relayOnce.pipe(
    Effect.catchAllCause((c) => Effect.logError("outbox relay pass failed", c).pipe(Effect.as(0))),
    // A full pass means more is waiting: go again at once; otherwise look again shortly.
    Effect.flatMap((n) => (n >= RELAY_BATCH ? Effect.void : Effect.sleep("200 millis"))),
    Effect.forever,
    Effect.forkScoped
  )
)
