import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Marking an inbox row reconciled (`reconciled_at`, `published_at`: services/deposits/DepositRows.ts `INBOX_RECONCILED`)
 * may be a HOT update (issue 33). It was never one: `inbound_events_pending_idx` named `reconciled_at` in its
 * predicate, so every deposit wrote its inbox row again elsewhere, with an entry in the key and in the
 * (tenant, mode, provider, reference) index, and the partial index took an entry per insert. The sweeper, its one
 * reader, now scans the primary key from a low-water mark below which every row is settled (`inbox_sweep_mark`,
 * services/deposits/InboxSweepMark.ts says why the mark is safe). Bench pairs: 290 bytes of WAL less per deposit.
 *
 * The mark starts at 0: a process of the previous version may still be inserting while this runs, so no row can be
 * taken as settled yet. The sweeper's first passes scan the inbox once and move the mark up.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX inbound_events_pending_idx`
  yield* sql`ALTER TABLE inbound_events SET (fillfactor = 50)`
  yield* sql`CREATE TABLE inbox_sweep_mark (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    below_id bigint NOT NULL
  )`
  yield* sql`INSERT INTO inbox_sweep_mark (below_id) VALUES (0)`
})
