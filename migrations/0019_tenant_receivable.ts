import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a late reversal leaves owing (`tenant_receivable`, DESIGN.md "Late reversals") becomes a guarded balance, and is
 * recovered from the tenant's next free collections:
 * - a `ledger_balances` row `tenant_receivable` per tenant and mode (natural sign, `CHECK (balance_kobo >= 0)`), so a
 *   recovery can never take more than is owed, and every step that recovers or settles locks one row (after the
 *   account rows, before the available balance's stripes);
 * - `tenants.receivable_modes`: the modes in which the tenant owes something. The deposit path reads it with the
 *   account lock it already takes (the tenants join is there for the risk threshold), so a tenant that owes nothing
 *   costs no extra read per deposit; it is kept in the transaction that moves the receivable across zero.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tenants ADD COLUMN receivable_modes text[] NOT NULL DEFAULT '{}'`
  yield* sql`
    INSERT INTO ledger_balances (tenant_id, mode, account, balance_kobo)
    SELECT t.id, m.mode, 'tenant_receivable',
      COALESCE((SELECT sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = t.id AND e.mode = m.mode AND e.account = 'tenant_receivable'), 0)
    FROM tenants t CROSS JOIN (VALUES ('test'), ('live')) m(mode)
    ON CONFLICT (tenant_id, mode, account) DO NOTHING`
  yield* sql`
    UPDATE tenants t SET receivable_modes = ARRAY(
      SELECT b.mode FROM ledger_balances b WHERE b.tenant_id = t.id AND b.account = 'tenant_receivable' AND b.balance_kobo > 0 ORDER BY b.mode)`
})
