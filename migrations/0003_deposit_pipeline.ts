import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The inbox: a provider event is durable here before the receiver answers.
  yield* sql`
    CREATE TABLE inbound_events (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      provider text NOT NULL,
      provider_reference text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('inflow', 'reversal')),
      account_number text NOT NULL,
      payload jsonb NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      reconciled_at timestamptz,
      gave_up_at timestamptz,
      UNIQUE (tenant_id, mode, provider, provider_reference)
    )`
  yield* sql`CREATE INDEX inbound_events_pending_idx ON inbound_events (id) WHERE reconciled_at IS NULL`
  yield* sql`CREATE INDEX virtual_accounts_nuban_lookup_idx ON virtual_accounts (tenant_id, mode, nuban)`
  yield* sql`
    CREATE TABLE transactions (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      provider text NOT NULL,
      reference text NOT NULL,
      inbound_event_id bigint NOT NULL REFERENCES inbound_events (id),
      virtual_account_id text REFERENCES virtual_accounts (id),
      account_ref text,
      nuban text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('inflow', 'reversal')),
      amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
      applied_kobo bigint NOT NULL CHECK (applied_kobo >= 0),
      reversed_kobo bigint NOT NULL DEFAULT 0 CHECK (reversed_kobo >= 0 AND reversed_kobo <= amount_kobo),
      surplus_kobo bigint NOT NULL DEFAULT 0 CHECK (surplus_kobo >= 0),
      status text NOT NULL CHECK (status IN ('Completed', 'PendingReview', 'Rejected', 'Reversed')),
      reconciliation_status text NOT NULL
        CHECK (reconciliation_status IN ('Exact', 'Underpaid', 'Overpaid', 'Duplicate', 'Reversal', 'Credited', 'Unmatched')),
      risk_score integer NOT NULL CHECK (risk_score BETWEEN 0 AND 100),
      risk_reasons jsonb NOT NULL,
      sender_name text,
      sender_name_key text,
      sender_account_number text,
      sender_bank_code text,
      narration text,
      paid_at timestamptz NOT NULL,
      reconciled_at timestamptz NOT NULL DEFAULT now(),
      reversed_reference text,
      amount_paid_after_kobo bigint,
      payment_state_after text,
      review_decision text CHECK (review_decision IN ('approve', 'reject')),
      review_note text,
      reviewed_by text,
      reviewed_at timestamptz,
      UNIQUE (tenant_id, mode, reference)
    )`
  yield* sql`CREATE INDEX transactions_list_idx ON transactions (tenant_id, mode, reconciled_at DESC, id DESC)`
  yield* sql`CREATE INDEX transactions_account_idx ON transactions (virtual_account_id, paid_at)`
  yield* sql`CREATE INDEX transactions_payer_idx ON transactions (tenant_id, mode, sender_name_key, paid_at) WHERE sender_name_key IS NOT NULL`
  // Double-entry ledger: amounts are signed kobo (debit +, credit -); every journal sums to zero.
  yield* sql`
    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      journal_id text NOT NULL,
      account text NOT NULL,
      amount_kobo bigint NOT NULL CHECK (amount_kobo <> 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX ledger_entries_account_idx ON ledger_entries (tenant_id, mode, account)`
  yield* sql`CREATE INDEX ledger_entries_journal_idx ON ledger_entries (journal_id)`
  // The outbox: events committed with the business step, drained by fibers. Each downstream consumer has its own mark.
  yield* sql`
    CREATE TABLE outbox (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      tenant_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      event_type text NOT NULL,
      subject_key text NOT NULL,
      envelope jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      webhooks_staged_at timestamptz
    )`
  yield* sql`CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL`
  yield* sql`CREATE INDEX outbox_unstaged_idx ON outbox (id) WHERE webhooks_staged_at IS NULL`
  yield* sql`
    CREATE TABLE poison_messages (
      id bigserial PRIMARY KEY,
      source text NOT NULL,
      subject text,
      stream_seq bigint,
      reason text NOT NULL,
      payload text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now()
    )`
})
