import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Real bank providers (DESIGN.md, "Real bank providers"):
 * - `provider_connections`: at most one connection per tenant and mode to a real provider (`paystack`; `monnify`
 *   next). No row: the built-in sandbox serves the mode (test mode always; live mode only under SANDBOX_LIVE_MODE=1).
 *   `credentials_sealed` is the JSON of the provider's secrets sealed with AES-256-GCM under DATA_ENCRYPTION_KEY;
 *   `key_hint` is the last 4 characters of the key, the only part an answer may show; `settings` holds what is not
 *   secret (Paystack's preferred bank).
 * - `provider_sync_runs`: each missed-webhook sync pass per connection, for operators (`collections providers sync`).
 * - `virtual_accounts.provider_customer_code`: the provider's customer the account was made for (Paystack), kept so a
 *   retried provisioning finds the same customer and account.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provider_connections (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      provider text NOT NULL CHECK (provider IN ('paystack', 'monnify')),
      credentials_sealed text NOT NULL,
      key_hint text NOT NULL,
      settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      connected_at timestamptz NOT NULL DEFAULT now(),
      connected_by text NOT NULL,
      PRIMARY KEY (tenant_id, mode)
    )`
  yield* sql`CREATE INDEX provider_connections_provider_idx ON provider_connections (provider, mode)`
  yield* sql`
    CREATE TABLE provider_sync_runs (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL,
      provider text NOT NULL,
      window_from timestamptz NOT NULL,
      window_to timestamptz NOT NULL,
      found integer NOT NULL,
      recorded integer NOT NULL,
      known integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX provider_sync_runs_tenant_idx ON provider_sync_runs (tenant_id, mode, created_at DESC)`
  yield* sql`ALTER TABLE virtual_accounts ADD COLUMN provider_customer_code text`
  // Outcome webhooks of real providers name the transfer by the provider-side reference we derived for it.
  yield* sql`CREATE INDEX transfers_provider_reference_idx ON transfers (provider, provider_reference) WHERE provider_reference IS NOT NULL`
})
