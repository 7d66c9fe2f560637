import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Lookup keys that no other index can be mistaken for. Every tenant-scoped index starts with (tenant_id, mode), so
 * while a tenant's statistics are missing or stale (a new tenant's first burst, before ANALYZE catches up, or a new
 * tenant in a large table that ANALYZE's 10% threshold reaches only much later) the planner rates "all of this
 * tenant's rows" as one row and may probe a reference through the list index, filtering every row of the tenant:
 * each probe then costs more than the last. Leading with the column the probe is for leaves it one choice.
 * The uniqueness is the same; only the column order changes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transactions DROP CONSTRAINT transactions_tenant_id_mode_reference_key`
  yield* sql`ALTER TABLE transactions ADD CONSTRAINT transactions_reference_key UNIQUE (reference, tenant_id, mode)`
  yield* sql`ALTER TABLE virtual_accounts DROP CONSTRAINT virtual_accounts_tenant_id_mode_account_ref_key`
  yield* sql`ALTER TABLE virtual_accounts ADD CONSTRAINT virtual_accounts_account_ref_key UNIQUE (account_ref, tenant_id, mode)`
  yield* sql`DROP INDEX virtual_accounts_nuban_lookup_idx`
  yield* sql`CREATE INDEX virtual_accounts_nuban_lookup_idx ON virtual_accounts (nuban, tenant_id, mode)`
})
