import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { collectedSql } from "../src/domain/InsightRollups.js"

/**
 * The insights consumer keeps its record of what it counted of a deposit (`insight_tx`) only for deposits that change
 * after they were counted (issue 33). Until now the cursor (services/insights/InsightsCursor.ts) wrote an `insight_tx`
 * row for every deposit it counted, so that a later review or reversal could be counted as a difference: a heap row and
 * a key entry per deposit, most of what the roll-ups cost the deposit path that e61b334 did not pay.
 *
 * Now migration 0024's trigger, which stamps a row again when what the roll-ups count of it changes, also writes that
 * record, from the row as it was (`OLD`), when and only when that version had been counted: its stamp is at or behind
 * the cursor. Otherwise the version being replaced was never counted, and a record already there (what an earlier
 * version added) stays as it is. The consumer counts a stamped row without a record as new, and one with a record as
 * the difference (services/insights/RollupStore.ts `countSelected`).
 *
 * The one moment that needs care: a pass that is counting the old version right now, not yet committed. When the old
 * stamp is not behind the cursor as the trigger first reads it, the trigger takes the insights turn shared (the
 * passes take it exclusively, services/outbox/Registry.ts `INSIGHTS_TURN`, `consumer:insights`), so it waits for a
 * running pass to commit and no pass starts before this transaction ends; then it reads the cursor again (a new
 * statement, a new snapshot, under READ COMMITTED, which every writer of `transactions` uses). A change to a deposit
 * counted long ago (a late reversal of an old credit) reads the cursor once and waits for nothing.
 *
 * Rows from before migration 0024 (no stamp) keep the old rule: whoever counts them (the one-time build, the drained
 * pending events) writes their record as it counts them, so the trigger leaves them alone.
 *
 * `collectedSql` is the consumer's own expression: a change to it needs a migration that creates this function again.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION transactions_insight_xid() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      mine xid8 := pg_current_xact_id();
      at_xid xid8;
      at_id bigint;
    BEGIN
      IF OLD.insight_xid IS NOT NULL AND OLD.insight_xid <> mine THEN
        SELECT xid, tx_id INTO at_xid, at_id FROM insight_cursor;
        IF NOT ((OLD.insight_xid, OLD.id) <= (at_xid, at_id)) THEN
          PERFORM pg_advisory_xact_lock_shared(hashtextextended('consumer:insights', 0));
          SELECT xid, tx_id INTO at_xid, at_id FROM insight_cursor;
        END IF;
        IF (OLD.insight_xid, OLD.id) <= (at_xid, at_id) THEN
          INSERT INTO insight_tx (id, collected_kobo, pending)
          VALUES (OLD.id, ${collectedSql("OLD")}, OLD.status = 'PendingReview')
          ON CONFLICT (id) DO UPDATE SET collected_kobo = excluded.collected_kobo, pending = excluded.pending;
        END IF;
      END IF;
      NEW.insight_xid := mine;
      RETURN NEW;
    END $$`)
})
