import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What the consumer runner (services/outbox/Runner.ts) keeps per pending row, and where its dead letters go.
 *
 * - `outbox_pending.consumer` names any registered consumer, not only the relay and the webhook stager: the CHECK
 *   becomes the registry's name rule. Existing rows ('relay', 'webhooks') satisfy it.
 * - A failed event's pending row carries `attempts`, `last_error` and `next_attempt_at` (NULL: due now, the state of
 *   every row that never failed). Added without a volatile default, so the ALTER rewrites nothing, and a new row
 *   costs no more than before (its NULLs are bits in the row header; attempts' constant default is stored once).
 * - The small partial index on rows that have failed lets the claim find "an earlier event of this account waits
 *   to retry" without reading the healthy backlog.
 * - An event that used up its attempts moves to `consumer_dead_letters`: kept (with the error) for an operator to
 *   list and replay, and out of the pending table, so it no longer blocks its account or costs every claim a skip.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE outbox_pending DROP CONSTRAINT outbox_pending_consumer_check`
  yield* sql`ALTER TABLE outbox_pending ADD CONSTRAINT outbox_pending_consumer_name CHECK (consumer ~ '^[a-z][a-z0-9_-]{0,62}$')`
  yield* sql`
    ALTER TABLE outbox_pending
      ADD COLUMN attempts int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      ADD COLUMN last_error text,
      ADD COLUMN next_attempt_at timestamptz`
  yield* sql`CREATE INDEX outbox_pending_failed_idx ON outbox_pending (consumer, outbox_id) INCLUDE (next_attempt_at) WHERE attempts > 0`
  yield* sql`
    CREATE TABLE consumer_dead_letters (
      id bigserial PRIMARY KEY,
      consumer text NOT NULL,
      outbox_id bigint NOT NULL,
      attempts int NOT NULL,
      last_error text,
      dead_lettered_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (consumer, outbox_id)
    )`
  const [check] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_pending WHERE attempts <> 0 OR next_attempt_at IS NOT NULL`
  if (check!.n !== 0) return yield* Effect.dieMessage(`0010: ${check!.n} pending rows did not start clean`)
})
