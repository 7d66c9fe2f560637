import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tenants (
      id text PRIMARY KEY,
      name text NOT NULL,
      onboarding_status text NOT NULL DEFAULT 'NotStarted'
        CHECK (onboarding_status IN ('NotStarted', 'Submitted', 'Approved', 'Rejected')),
      onboarding_details jsonb,
      risk_threshold integer NOT NULL DEFAULT 70 CHECK (risk_threshold BETWEEN 0 AND 100),
      daily_payout_cap_kobo bigint NOT NULL DEFAULT 500000000 CHECK (daily_payout_cap_kobo >= 0),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE tenant_providers (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      provider text NOT NULL,
      merchant_id text NOT NULL UNIQUE,
      webhook_secret_sealed text NOT NULL,
      PRIMARY KEY (tenant_id, mode)
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      email text NOT NULL,
      password_hash text NOT NULL,
      role text NOT NULL CHECK (role IN ('Owner', 'Admin', 'Member')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      client_id text NOT NULL UNIQUE,
      secret_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at DESC)`
  yield* sql`
    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text,
      actor text NOT NULL,
      action text NOT NULL,
      subject text,
      details jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, created_at DESC)`
})
