import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The inbox payload and the outbox envelope as `json` (the text, checked for validity) instead of `jsonb`. Nothing
 * queries inside them; they are written once and read back whole by the reconciler, the relay and the webhook stager,
 * and `jsonb` paid for a parse on the way in and a re-serialisation on every read. A measurable share of Postgres's
 * CPU per deposit; `json` also keeps each document exactly as it was written.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE outbox ALTER COLUMN envelope TYPE json USING envelope::json`
  yield* sql`ALTER TABLE inbound_events ALTER COLUMN payload TYPE json USING payload::json`
})
