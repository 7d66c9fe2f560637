import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The last foreign key the deposit path checked, `transactions.virtual_account_id` -> `virtual_accounts`, goes too
 * (issue 33; migration 0025 dropped the other three). Postgres checked it with a query of its own per inserted row
 * (20,000 of them in a 20,000-deposit bench run, `SELECT 1 FROM virtual_accounts x WHERE id = $1 FOR KEY SHARE OF x`).
 * What guarantees it instead: every writer of the column locks the account's row first and finds it there (the
 * reconciler `FOR NO KEY UPDATE` or `FOR UPDATE`, a review that credits an account `FOR UPDATE`), and the one delete of
 * an account (services/accounts/VirtualAccounts.ts `remove`) locks the row `FOR UPDATE`, refuses an account with
 * activity (a credit sets `first_activity_at` under that lock) and unlinks its transactions before the delete. So a
 * credit that locked first makes the delete refuse, and a delete that locked first leaves the credit no row to find.
 * The tests' ledger invariant (test/support/Pipeline.ts `assertLedgerInvariant`) checks after every scenario that no
 * transaction names an account that does not exist.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transactions DROP CONSTRAINT transactions_virtual_account_id_fkey`
})
