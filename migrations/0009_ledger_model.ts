import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The ledger model of the money wave (src/domain/Ledger.ts has the chart):
 * - A journal exists once: `(tenant, mode, journal id, account)` is unique, and a posting nets its legs per account, so
 *   the same journal posted again conflicts on every leg and is a no-op (services/ledger/Ledger.ts checks it is all or none).
 *   It replaces the plain index on journal_id, so the deposit path keeps the same number of index entries per leg.
 * - `review_hold:<va>` is renamed `review_pending:<va>`: "hold" now means escrow only.
 * - `ledger_balances`: the guarded balance rows (natural sign, never below zero) of what may not be overdrawn: the
 *   tenant's available balance (as stripes `available:<n>`, see src/domain/Ledger.ts), `escrow:<va>`,
 *   `sub_merchant:<id>`. Seeded from the entries so far.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const repeated = yield* sql<{ n: number }>`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM ledger_entries GROUP BY tenant_id, mode, journal_id, account HAVING count(*) > 1
    ) d`
  if (repeated[0]!.n > 0) return yield* Effect.dieMessage(`${repeated[0]!.n} journals move one account twice; net them before this migration`)
  yield* sql`CREATE UNIQUE INDEX ledger_entries_journal_key ON ledger_entries (tenant_id, mode, journal_id, account)`
  yield* sql`DROP INDEX ledger_entries_journal_idx`

  yield* sql`UPDATE ledger_entries SET account = 'review_pending:' || substr(account, length('review_hold:') + 1) WHERE account LIKE 'review_hold:%'`

  yield* sql`
    CREATE TABLE ledger_balances (
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      account text NOT NULL,
      balance_kobo bigint NOT NULL CHECK (balance_kobo >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, mode, account)
    )`
  yield* sql`
    INSERT INTO ledger_balances (tenant_id, mode, account, balance_kobo)
    SELECT tenant_id, mode, 'available:0', -sum(amount_kobo) FROM ledger_entries
    WHERE account LIKE 'customer_funds:%' GROUP BY tenant_id, mode HAVING sum(amount_kobo) <> 0`
  // Every tenant and mode gets all eight stripes (src/domain/Ledger.ts AVAILABLE_STRIPES), so the deposit path never
  // has to make one (two transactions making the same row wait for each other).
  yield* sql`
    INSERT INTO ledger_balances (tenant_id, mode, account, balance_kobo)
    SELECT t.id, m.mode, 'available:' || n, 0 FROM tenants t CROSS JOIN (VALUES ('test'), ('live')) m(mode) CROSS JOIN generate_series(0, 7) n
    ON CONFLICT (tenant_id, mode, account) DO NOTHING`

  const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger_entries WHERE account LIKE 'review_hold:%'`
  if (left[0]!.n !== 0) return yield* Effect.dieMessage("review_hold entries remain after the rename")
})
