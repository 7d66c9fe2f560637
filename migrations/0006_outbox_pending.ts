import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What each outbox consumer has still to do, as narrow rows it deletes when done, in place of marks on the outbox row.
 *
 * Each mark (`published_at`, `webhooks_staged_at`) was an UPDATE of a ~1.3 KB row that could never be HOT (each column
 * sat in a partial index's predicate): per event, two new row versions, about six index entries and 2.6 KB of WAL.
 * A pending row is ~40 bytes with one index entry, and deleting it writes neither a new version nor an index entry.
 * The outbox row itself is now written once and never changed.
 *
 * No foreign key to outbox: pending rows are written only by the statement that writes their outbox row (and by a
 * replay, from outbox ids it has just read), and outbox rows are never deleted; a per-row key check would cost as much
 * as the row.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE outbox_pending (
      consumer text NOT NULL CHECK (consumer IN ('relay', 'webhooks')),
      outbox_id bigint NOT NULL,
      PRIMARY KEY (consumer, outbox_id)
    )`
  yield* sql`INSERT INTO outbox_pending (consumer, outbox_id) SELECT 'relay', id FROM outbox WHERE published_at IS NULL`
  yield* sql`INSERT INTO outbox_pending (consumer, outbox_id) SELECT 'webhooks', id FROM outbox WHERE webhooks_staged_at IS NULL`
  yield* sql`DROP INDEX outbox_unpublished_idx`
  yield* sql`DROP INDEX outbox_unstaged_idx`
  yield* sql`ALTER TABLE outbox DROP COLUMN published_at, DROP COLUMN webhooks_staged_at`
})
