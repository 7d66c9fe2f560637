import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sub-merchants, settlement settings and split plans, and settlements (src/domain/Settlement.ts has the decisions;
 * services/settlement/ applies them):
 * - `sub_merchants`: per tenant and mode, `reference` unique; the payout account is stored only once verified (name
 *   enquiry matched the sub-merchant's name).
 * - `settlement_settings`: one row per tenant and mode: the verified settlement account, autoSettle, minPayoutKobo,
 *   the split plan (`splits`, normalised legs) and the run lease that keeps two workers from settling one tenant at once.
 * - `settlements`: one per account swept (or skipped); `settlement_legs`: its legs, each paid by one transfer at a
 *   time (`transfer_ref`, the latest attempt's merchantTxRef). A leg's money waits in `source_account` (the ledger
 *   account it draws on and a failed attempt returns to).
 * - A worker that finds an account's plan short every run writes one Skipped settlement, not one per run: it looks at
 *   the account's latest settlement (settlements_account_idx) with the account row locked.
 * - `transfers.ledger_source`: for settlement legs, the account the transfer draws on and gives back to on failure.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sub_merchants (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      reference text NOT NULL,
      name text NOT NULL,
      payout_bank_name text,
      payout_bank_code text,
      payout_account_number text,
      payout_account_name text,
      payout_verified_at timestamptz,
      platform_fee_bps integer NOT NULL DEFAULT 0 CHECK (platform_fee_bps BETWEEN 0 AND 10000),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT sub_merchants_reference_key UNIQUE (tenant_id, mode, reference),
      CHECK ((payout_account_number IS NULL) = (payout_verified_at IS NULL))
    )`
  yield* sql`CREATE INDEX sub_merchants_list_idx ON sub_merchants (tenant_id, mode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX virtual_accounts_sub_merchant_idx ON virtual_accounts (tenant_id, mode, sub_merchant_ref) WHERE sub_merchant_ref IS NOT NULL`
  yield* sql`
    CREATE TABLE settlement_settings (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      account_number text,
      bank_code text,
      bank_name text,
      account_name text,
      verified_at timestamptz,
      auto_settle boolean NOT NULL DEFAULT false,
      min_payout_kobo bigint NOT NULL DEFAULT 0 CHECK (min_payout_kobo >= 0),
      splits jsonb NOT NULL DEFAULT '[]',
      splits_updated_at timestamptz,
      run_lease_until timestamptz,
      last_run_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, mode),
      CHECK ((account_number IS NULL) = (bank_code IS NULL) AND (account_number IS NULL) = (verified_at IS NULL))
    )`
  yield* sql`
    CREATE TABLE settlements (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      virtual_account_id text NOT NULL REFERENCES virtual_accounts (id),
      net_kobo bigint NOT NULL CHECK (net_kobo >= 0),
      status text NOT NULL CHECK (status IN ('Paid', 'Processing', 'Failed', 'Skipped')),
      reason_code text,
      reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      CHECK ((status = 'Skipped') = (reason_code IS NOT NULL))
    )`
  yield* sql`CREATE INDEX settlements_list_idx ON settlements (tenant_id, mode, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX settlements_account_idx ON settlements (virtual_account_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX settlements_open_idx ON settlements (tenant_id, mode) WHERE status IN ('Processing', 'Failed')`
  yield* sql`
    CREATE TABLE settlement_legs (
      settlement_id text NOT NULL REFERENCES settlements (id),
      leg_no integer NOT NULL CHECK (leg_no >= 1),
      tenant_id text NOT NULL,
      mode text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('sub_merchant', 'platform_fee', 'tenant')),
      sub_merchant_id text REFERENCES sub_merchants (id),
      bps integer,
      flat_kobo bigint,
      amount_kobo bigint NOT NULL CHECK (amount_kobo > 0),
      source_account text NOT NULL,
      transfer_ref text NOT NULL,
      attempts integer NOT NULL DEFAULT 1 CHECK (attempts >= 1),
      PRIMARY KEY (settlement_id, leg_no),
      CHECK ((kind = 'sub_merchant') = (sub_merchant_id IS NOT NULL))
    )`
  yield* sql`CREATE UNIQUE INDEX settlement_legs_transfer_idx ON settlement_legs (tenant_id, mode, transfer_ref)`
  yield* sql`ALTER TABLE transfers ADD COLUMN ledger_source text`
  yield* sql`ALTER TABLE transfers ADD CONSTRAINT transfers_settlement_source CHECK ((source = 'settlement') = (ledger_source IS NOT NULL))`
})
