import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Recurring billing (src/domain/Billing.ts has the calendar and the period states; services/billing/ applies them):
 * - `billing_schedules`: one per (tenant, mode, reference); at most one Active or Paused per account (the partial
 *   unique index). `anchor_date` is the Lagos date periods count from, `next_k` the calendar index (0-based) of the next
 *   period to open (`next_start_at` its start, so the billing clock finds due work without locking anything),
 *   `base_kobo` what the account held when the schedule began (what its periods' payments count from).
 * - `billing_periods`: one per opened period, unique per (schedule, index), with its calendar and what it expects
 *   (`amount_kobo`; after a cancel, what it had been paid). Its paid/outstanding/status are computed from the account's
 *   `amount_paid_kobo` on read; the `*_notified` flags make each event go out once.
 * - `sandbox_clocks`: a tenant's test-mode billing time offset (the sandbox clock); live mode has none.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE billing_schedules (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      virtual_account_id text NOT NULL REFERENCES virtual_accounts (id),
      reference text NOT NULL,
      request_fingerprint text NOT NULL,
      interval text NOT NULL CHECK (interval IN ('Weekly', 'Monthly', 'Quarterly', 'Yearly')),
      amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
      next_amount_kobo bigint CHECK (next_amount_kobo > 0),
      due_offset_days integer NOT NULL CHECK (due_offset_days BETWEEN 0 AND 365),
      description text,
      status text NOT NULL CHECK (status IN ('Active', 'Paused', 'Cancelled')),
      anchor_date date NOT NULL,
      next_k integer NOT NULL CHECK (next_k >= 0),
      next_start_at timestamptz NOT NULL,
      periods_opened integer NOT NULL DEFAULT 0,
      base_kobo bigint NOT NULL CHECK (base_kobo >= 0),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      cancelled_at timestamptz,
      CONSTRAINT billing_schedules_reference_key UNIQUE (tenant_id, mode, reference)
    )`
  yield* sql`CREATE UNIQUE INDEX billing_schedules_one_per_account ON billing_schedules (virtual_account_id) WHERE status IN ('Active', 'Paused')`
  yield* sql`CREATE INDEX billing_schedules_list_idx ON billing_schedules (tenant_id, mode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX billing_schedules_live_idx ON billing_schedules (status) WHERE status <> 'Cancelled'`
  yield* sql`
    CREATE TABLE billing_periods (
      id text PRIMARY KEY,
      schedule_id text NOT NULL REFERENCES billing_schedules (id),
      index integer NOT NULL CHECK (index >= 1),
      period_start timestamptz NOT NULL,
      period_end timestamptz NOT NULL,
      due_date date NOT NULL,
      due_at timestamptz NOT NULL,
      overdue_at timestamptz NOT NULL,
      amount_kobo bigint NOT NULL CHECK (amount_kobo >= 0),
      cancelled boolean NOT NULL DEFAULT false,
      paid_at timestamptz,
      due_notified boolean NOT NULL DEFAULT false,
      paid_notified boolean NOT NULL DEFAULT false,
      overdue_notified boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (schedule_id, index)
    )`
  yield* sql`
    CREATE TABLE sandbox_clocks (
      tenant_id text PRIMARY KEY REFERENCES tenants (id),
      offset_ms bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
