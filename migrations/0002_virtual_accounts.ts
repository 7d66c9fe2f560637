import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE customers (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      name text NOT NULL,
      email text,
      phone text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX customers_email_key ON customers (tenant_id, mode, lower(email)) WHERE email IS NOT NULL`
  yield* sql`
    CREATE TABLE virtual_accounts (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      account_ref text NOT NULL,
      customer_id text NOT NULL REFERENCES customers (id),
      request_fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('Provisioning', 'Active')),
      provisioning_started_at timestamptz NOT NULL DEFAULT now(),
      provider text NOT NULL,
      nuban text,
      bank_code text,
      bank_name text,
      account_name text,
      expected_amount_kobo bigint CHECK (expected_amount_kobo >= 0),
      expiry_date_utc timestamptz,
      sub_merchant_ref text,
      amount_paid_kobo bigint NOT NULL DEFAULT 0 CHECK (amount_paid_kobo >= 0),
      first_activity_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, mode, account_ref),
      CHECK (status = 'Provisioning' OR nuban IS NOT NULL)
    )`
  yield* sql`CREATE UNIQUE INDEX virtual_accounts_nuban_key ON virtual_accounts (provider, nuban) WHERE nuban IS NOT NULL`
  yield* sql`CREATE INDEX virtual_accounts_list_idx ON virtual_accounts (tenant_id, mode, created_at DESC)`
  yield* sql`
    CREATE TABLE sandbox_provider_accounts (
      merchant_id text NOT NULL,
      account_ref text NOT NULL,
      nuban text NOT NULL UNIQUE,
      account_name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, account_ref)
    )`
  yield* sql`CREATE SEQUENCE sandbox_nuban_serial START 100000`
})
