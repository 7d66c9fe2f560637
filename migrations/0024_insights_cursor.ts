import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The insights consumer reads deposits by commit horizon, not by pending rows (issue 33; services/insights/InsightsCursor.ts).
 * - `transactions.insight_xid`: the top-level transaction id (`pg_current_xact_id()`) that last wrote what the roll-ups
 *   count of the row: its insert, and any later change of its status, account or review (the trigger). Rows from
 *   before this migration keep null; their events were staged as pending rows, which the consumer still drains, and
 *   the one-time build counts them.
 * - `transactions_insight_xid_idx` on (insight_xid, id): the consumer's window is a range of it.
 * - `insight_cursor`: how far the consumer has counted, as (xid, id): every row before it is counted.
 * The column is added without a default first, so existing rows are not rewritten, then given its default.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transactions ADD COLUMN insight_xid xid8`
  yield* sql`ALTER TABLE transactions ALTER COLUMN insight_xid SET DEFAULT pg_current_xact_id()`
  yield* sql`CREATE INDEX transactions_insight_xid_idx ON transactions (insight_xid, id) WHERE insight_xid IS NOT NULL`
  yield* sql`
    CREATE FUNCTION transactions_insight_xid() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.insight_xid := pg_current_xact_id();
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER transactions_insight_xid BEFORE UPDATE OF status, virtual_account_id, reviewed_at, amount_kobo, kind ON transactions
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.virtual_account_id IS DISTINCT FROM NEW.virtual_account_id
      OR OLD.reviewed_at IS DISTINCT FROM NEW.reviewed_at OR OLD.amount_kobo IS DISTINCT FROM NEW.amount_kobo OR OLD.kind IS DISTINCT FROM NEW.kind)
    EXECUTE FUNCTION transactions_insight_xid()`
  yield* sql`CREATE TABLE insight_cursor (id boolean PRIMARY KEY DEFAULT true CHECK (id), xid xid8 NOT NULL, tx_id bigint NOT NULL)`
  yield* sql`INSERT INTO insight_cursor (xid, tx_id) VALUES ('0', 0)`
})
