import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The deposit path's inserts check no foreign key that its own transaction already guarantees (issue 33). Postgres
 * checks a foreign key per inserted row with a query of its own that locks the referenced row `FOR KEY SHARE`; three
 * checks per deposit cost about as much Postgres CPU as the transaction row with all its indexes (a copy of 20,000 of
 * the bench's rows: 19.6 us a row with the three keys, 10.1 us without them), and every partition's batch and every
 * receiver batch share-locked the one tenant row (a MultiXact per concurrent locker).
 *
 * Dropped, with what guarantees each instead:
 * - `transactions.tenant_id` and `inbound_events.tenant_id` -> `tenants`: no tenant row is ever deleted, and the value
 *   is the authenticated tenant's (the receiver) or the inbox row's (the reconciler).
 * - `transactions.inbound_event_id` -> `inbound_events`: no inbox row is ever deleted, and the reconciler writes the id
 *   of the inbox row it read in the same transaction.
 * Kept: `transactions.virtual_account_id` -> `virtual_accounts`, the one whose referenced row can go (an account with no
 * activity can be deleted, services/accounts/VirtualAccounts.ts); the deposit path locks the account's row before it
 * writes, so the check finds it locked by its own transaction.
 * The tests' ledger invariant (test/support/Pipeline.ts `assertLedgerInvariant`) checks after every scenario that no
 * deposit or inbox row names a tenant or an inbox row that does not exist.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transactions DROP CONSTRAINT transactions_tenant_id_fkey, DROP CONSTRAINT transactions_inbound_event_id_fkey`
  yield* sql`ALTER TABLE inbound_events DROP CONSTRAINT inbound_events_tenant_id_fkey`
})
