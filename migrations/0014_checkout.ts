import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Live checkout sessions: an opaque token (256 random bits, shown once) scoped to one virtual account, stored as its
 * SHA-256 only, with its expiry. The snapshot and the stream are authorised by the token alone.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE checkout_sessions (
      token_hash text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      virtual_account_id text NOT NULL REFERENCES virtual_accounts (id),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CHECK (expires_at > created_at)
    )`
  yield* sql`CREATE INDEX checkout_sessions_expiry_idx ON checkout_sessions (expires_at)`
  // The snapshot's updatedAt reads the account's refunds: without this, every heartbeat would scan all transfers.
  yield* sql`CREATE INDEX transfers_refund_account_idx ON transfers (virtual_account_id) WHERE source = 'refund'`
})
