import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Money out (holds, refunds, payouts; src/domain/MoneyOut.ts has the decisions):
 * - `transfers`: every transfer that leaves, whatever started it (a payout, a refund, later a settlement leg). The
 *   caller's reference is unique per tenant and mode and is also the provider's reference, so the provider is asked at
 *   most once per reference. `lease_until` is the claim: a row whose lease ran out is the completer's to finish.
 * - `holds`: one escrow hold per deposit (its provider reference), re-placed after a release with the next `seq`.
 * - `payout_limits` and `payout_days`: the daily payout cap per tenant and mode, and what each Lagos day used of it;
 *   `CHECK (used_kobo <= cap_kobo)` makes the cap exact under any concurrency.
 * - The sandbox provider's own books: its name directory (DESIGN.md's fixed table; tests may add rows) and the
 *   transfers it accepted, with the outcome it will report through its signed webhook.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE transfers (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      merchant_tx_ref text NOT NULL,
      source text NOT NULL CHECK (source IN ('api', 'dashboard', 'refund', 'settlement')),
      request_fingerprint text NOT NULL,
      amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
      account_number text NOT NULL,
      bank_code text NOT NULL,
      bank_name text NOT NULL,
      account_name text NOT NULL,
      narration text,
      status text NOT NULL CHECK (status IN ('Pending', 'Processing', 'Successful', 'Failed', 'Reversed')),
      failure_reason text,
      provider text NOT NULL,
      provider_reference text,
      deposit_reference text,
      virtual_account_id text REFERENCES virtual_accounts (id),
      cap_day date,
      lease_until timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      completed_at timestamptz,
      CONSTRAINT transfers_reference_key UNIQUE (merchant_tx_ref, tenant_id, mode)
    )`
  yield* sql`CREATE INDEX transfers_list_idx ON transfers (tenant_id, mode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX transfers_deposit_idx ON transfers (tenant_id, mode, deposit_reference) WHERE deposit_reference IS NOT NULL`
  yield* sql`CREATE INDEX transfers_open_idx ON transfers (lease_until) WHERE status IN ('Pending', 'Processing')`

  // The balance's pendingReviewKobo: only rows waiting for review are in it, so the deposit path barely notices it.
  yield* sql`CREATE INDEX transactions_pending_review_idx ON transactions (tenant_id, mode) WHERE status = 'PendingReview'`

  yield* sql`
    CREATE TABLE holds (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      reference text NOT NULL,
      virtual_account_id text NOT NULL REFERENCES virtual_accounts (id),
      account_ref text NOT NULL,
      seq integer NOT NULL CHECK (seq >= 1),
      held_kobo bigint NOT NULL CHECK (held_kobo >= 0),
      status text NOT NULL CHECK (status IN ('Held', 'Released', 'Refunded')),
      reason text,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      released_at timestamptz,
      PRIMARY KEY (tenant_id, mode, reference)
    )`

  yield* sql`
    CREATE TABLE payout_limits (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      daily_cap_kobo bigint NOT NULL CHECK (daily_cap_kobo >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, mode)
    )`
  yield* sql`
    CREATE TABLE payout_days (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      day date NOT NULL,
      cap_kobo bigint NOT NULL,
      used_kobo bigint NOT NULL DEFAULT 0,
      CONSTRAINT payout_days_within_cap CHECK (used_kobo >= 0 AND used_kobo <= cap_kobo),
      PRIMARY KEY (tenant_id, mode, day)
    )`

  yield* sql`
    CREATE TABLE sandbox_name_directory (
      bank_code text NOT NULL,
      account_number text NOT NULL,
      account_name text NOT NULL,
      outcome text NOT NULL DEFAULT 'success' CHECK (outcome IN ('success', 'failed', 'reversed', 'slow')),
      PRIMARY KEY (bank_code, account_number)
    )`
  yield* sql`
    INSERT INTO sandbox_name_directory (bank_code, account_number, account_name, outcome) VALUES
      ('058', '0123456785', 'ADAEZE OKAFOR', 'success'),
      ('044', '1234567895', 'CHUKWUEMEKA NWOSU', 'success'),
      ('057', '2000000015', 'BOLANLE ADEYEMI', 'success'),
      ('033', '2100000021', 'IBRAHIM MUSA', 'success'),
      ('011', '3000000032', 'NGOZI EZE ENTERPRISES', 'success'),
      ('50515', '9000000042', 'TUNDE BAKARE', 'success'),
      ('058', '9999999907', 'FAIL TRANSFER', 'failed'),
      ('044', '9999999913', 'REVERSE TRANSFER', 'reversed'),
      ('058', '9999999921', 'SLOW TRANSFER', 'slow')`
  yield* sql`
    CREATE TABLE sandbox_provider_transfers (
      merchant_id text NOT NULL,
      reference text NOT NULL,
      provider_reference text NOT NULL UNIQUE,
      account_number text NOT NULL,
      bank_code text NOT NULL,
      amount_kobo bigint NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('success', 'failed', 'reversed', 'slow')),
      status text NOT NULL CHECK (status IN ('Processing', 'Successful', 'Failed', 'Reversed')),
      calls integer NOT NULL DEFAULT 1,
      report_after timestamptz NOT NULL,
      reported text[] NOT NULL DEFAULT '{}',
      done boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, reference)
    )`
  yield* sql`CREATE INDEX sandbox_provider_transfers_due_idx ON sandbox_provider_transfers (report_after) WHERE NOT done`
})
