import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `GET /api/v1/events` reads a tenant's public events in its mode, newest first, over the last 30 days
 * (services/events/EventsStore.ts). Every deposit writes an outbox row, so this index is paid on the hot path; it is kept
 * as narrow as the read allows: the tenant, the mode and `created_at` (the window is a range of the index, not a
 * filter over a tenant's whole history, which nothing prunes), and partial on the public types, so the internal
 * events one consumer stages for another (`internal.*`) never enter it. The list's query repeats the predicate as the
 * same literal text, so the planner can prove it (services/events/EventsStore.ts's PUBLIC_ONLY). Single events are read
 * through `event_id`'s unique index.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX outbox_public_events_idx ON outbox (tenant_id, mode, created_at) WHERE event_type NOT LIKE 'internal.%'`
})
