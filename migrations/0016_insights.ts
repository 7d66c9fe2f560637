import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Insight roll-ups (src/domain/InsightRollups.ts defines what they hold; services/insights/Rollups.ts keeps them; the
 * `insights` consumer runs it on every event that changes a figure). Days are Lagos day numbers (integer).
 * - `insight_days`: per (tenant, mode, day, key) a count and kobo: `rs:<reconciliation status>` and `risk:<band>` per
 *   deposit on its paid day, `pending` (deposits waiting for review, by paid day), `collected` (what came in, net of
 *   reversals), `sched` (billing due that day).
 * - `insight_due_days`: per (tenant, mode, due day) the receivables due that day: how many, expected, collected, and
 *   how many still have something outstanding. (No CHECK on these additive rows: Postgres checks the proposed row of an
 *   INSERT ... ON CONFLICT DO UPDATE, which here is a difference, before it finds the conflict.) The overview's expected/collected/outstanding and the aging buckets
 *   are sums over these rows (a few per day), whatever the number of accounts.
 * - `insight_receivables`: what each account contributed (one row per receivable), for the next recompute's
 *   difference and the customer score (`paid_day`: when it became fully collected).
 * - `insight_accounts`: one row per account seen, locked first by every recompute of the account (one at a time);
 *   dropped by 0023, when the consumer's advisory turn took that role.
 * - `insight_customers`: per customer, expected and outstanding (the customers list's order).
 * - `insight_tx`: each deposit counted once (`collected_kobo`: what it adds to `collected` now; `pending`: whether it
 *   counts in `pending`). Since migration 0029 only deposits that changed after they were counted have a row.
 * - `insight_schedules`: each billing schedule's dues as last added to `sched`, for the next recompute's difference.
 * - `insight_state`: whether the roll-ups have been built from the data that was here before them (`built`); the
 *   insights worker builds them once (services/insights/InsightsWorker.ts) and the consumer keeps them.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE insight_days (
      tenant_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      day integer NOT NULL,
      key text NOT NULL,
      count bigint NOT NULL DEFAULT 0,
      amount_kobo bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, mode, key, day)
    )`
  yield* sql`
    CREATE TABLE insight_due_days (
      tenant_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      due_day integer NOT NULL,
      receivables bigint NOT NULL DEFAULT 0,
      outstanding_count bigint NOT NULL DEFAULT 0,
      expected_kobo bigint NOT NULL DEFAULT 0,
      collected_kobo bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, mode, due_day)
    )`
  yield* sql`
    CREATE TABLE insight_accounts (
      account_id text PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE insight_receivables (
      account_id text NOT NULL,
      seq integer NOT NULL,
      customer_id text NOT NULL,
      due_day integer NOT NULL,
      amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
      collected_kobo bigint NOT NULL CHECK (collected_kobo >= 0 AND collected_kobo <= amount_kobo),
      paid_day integer,
      PRIMARY KEY (account_id, seq)
    )`
  yield* sql`CREATE INDEX insight_receivables_customer_idx ON insight_receivables (customer_id)`
  yield* sql`
    CREATE TABLE insight_customers (
      customer_id text PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL,
      expected_kobo bigint NOT NULL DEFAULT 0,
      outstanding_kobo bigint NOT NULL DEFAULT 0
    )`
  yield* sql`CREATE INDEX insight_customers_order_idx ON insight_customers (tenant_id, mode, outstanding_kobo DESC, customer_id)
    WHERE expected_kobo > 0`
  yield* sql`CREATE TABLE insight_tx (id bigint PRIMARY KEY, collected_kobo bigint NOT NULL, pending boolean NOT NULL)`
  // The customers list reads each customer's accounts.
  yield* sql`CREATE INDEX virtual_accounts_customer_idx ON virtual_accounts (customer_id)`
  yield* sql`
    CREATE TABLE insight_schedules (
      schedule_id text PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL,
      days integer[] NOT NULL,
      amounts bigint[] NOT NULL
    )`
  yield* sql`CREATE TABLE insight_state (id boolean PRIMARY KEY DEFAULT true CHECK (id), built boolean NOT NULL, built_at timestamptz)`
  yield* sql`INSERT INTO insight_state (built) VALUES (false)`
})
