import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Payments a provider refused before they reached the account (Monnify `REJECTED_PAYMENT`: a restricted payment
 * source, a BVN mismatch; PROVIDERS.md B3). Money that never arrived: recorded for the tenant and operators, never
 * credited, never in the ledger. One row per provider transaction reference.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rejected_payments (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      provider text NOT NULL,
      transaction_reference text NOT NULL,
      account_number text,
      amount_kobo bigint,
      reason text,
      payload jsonb NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, mode, provider, transaction_reference)
    )`
})
