import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The automation path's inserts check no foreign key that their own transaction already guarantees (issue 33), as the
 * deposit path's no longer do (migrations 0025 and 0026). Postgres checked one per run the planner writes
 * (`automation_runs.tenant_id`) and two per hold the actor places (`holds.tenant_id`, `holds.virtual_account_id`), each
 * with a query of its own that locks the referenced row `FOR KEY SHARE`: on the heavy bench 25,000 locks of the one
 * tenant row and 12,000 of account rows per 20,000 deposits, taken by the planner and the actor at the same time (a
 * MultiXact per concurrent locker). Inserting 400 runs took 12-13 ms with the key and 9 ms without it.
 *
 * Dropped, with what guarantees each instead:
 * - `automation_runs.tenant_id` and `holds.tenant_id` -> `tenants`: no tenant row is ever deleted, and the value is the
 *   scope of the deposit the run or hold is for (a run's from its deposit's event, a hold's from the caller's scope,
 *   which read the deposit in it).
 * - `holds.virtual_account_id` -> `virtual_accounts`: a hold is placed only on a credited deposit, under its account's
 *   lock (the actor's `FOR KEY SHARE`, `Holds.holdUpTo`'s `FOR UPDATE`), with the account id read from that deposit; the
 *   one delete of an account (services/accounts/VirtualAccounts.ts `remove`) locks the row `FOR UPDATE` and refuses an
 *   account with activity, which a credited deposit is.
 * The tests' ledger invariant (test/support/Pipeline.ts `assertLedgerInvariant`) checks after every scenario that no run
 * or hold names a tenant or an account that does not exist.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE automation_runs DROP CONSTRAINT automation_runs_tenant_id_fkey`
  yield* sql`ALTER TABLE holds DROP CONSTRAINT holds_tenant_id_fkey, DROP CONSTRAINT holds_virtual_account_id_fkey`
})
