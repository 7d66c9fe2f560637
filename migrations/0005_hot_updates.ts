import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Room on each page for the rows' next versions, so the pipeline's per-deposit updates can be HOT (no new entry in
 * every index): an account's running figures move with each deposit (six indexes on virtual_accounts), and an inbox
 * row is marked published right after it is inserted. Applies to pages written from now on.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE virtual_accounts SET (fillfactor = 70)`
  yield* sql`ALTER TABLE inbound_events SET (fillfactor = 70)`
})
