import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { transactionsOf } from "../../services/deposits/Transactions.js"
import { entriesSumsOf } from "../../services/ledger/LedgerStore.js"
import { inboxHas } from "../../services/providers/ProviderSync.js"
import { holdsOf } from "../../services/transfers/HoldStore.js"
import { refundsOfDeposits } from "../../services/transfers/TransferStore.js"
import type { Scope } from "../../src/domain/Mode.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { genericPlan, type PlanNode, planShape } from "../support/QueryPlan.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * The lookups of a list of keys within a tenant (issue 33, src/db/KeyProbe.ts). Written `tenant_id = $1 AND mode = $2
 * AND key = ANY($3)`, the generic plan the pool's prepared statements settle on read the tenant's whole range of the
 * index and filtered it by the list: on the heavy benchmark the automation actor's probe of a pass's holds read every
 * hold of the tenant, and the free-balance sums every ledger entry. Each lookup here must keep its key in the index
 * condition of its generic plan, and still answer each key once, with nothing for a key that has no rows.
 */
const keyProbe = (plan: ReadonlyArray<PlanNode>, index: string, column: string) => {
  const node = plan.find((n) => n["Index Name"] === index)
  expect(node, planShape(plan)).toBeDefined()
  expect(node!["Index Cond"]).toMatch(new RegExp(`\\(${column.replace(".", "\\.")} = \\w+\\.key\\)`))
  expect(plan.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] !== undefined), planShape(plan)).toEqual([])
}

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("lookups of a list of keys", (it) => {
  it.effect("probe their key under a generic plan, and answer each key once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const scope: Scope = { tenantId: t.tenantId, mode: "test" }
      const acc = yield* createAccount(t.token, "probe-1", "Chidi Okeke", 10_000)
      expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 10_000, senderName: "CHIDI OKEKE" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      const [deposit] = yield* sql<{ id: number; reference: string; virtualAccountId: string }>`
        SELECT id, reference, virtual_account_id FROM transactions WHERE tenant_id = ${t.tenantId}`
      const va = deposit!.virtualAccountId

      // The tenant's rows under many keys: 400 more deposits (copies of that one), 400 holds, 400 refunds, 800 entries,
      // 400 more inbox rows.
      const [cols] = yield* sql<{ list: string }>`SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS list
        FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'transactions' AND column_name NOT IN ('id', 'reference')`
      yield* sql.unsafe(`INSERT INTO transactions (${cols!.list}, reference)
        SELECT ${cols!.list}, 'copy-' || g FROM transactions, generate_series(1, 400) AS g WHERE id = ${Number(deposit!.id)}`)
      yield* sql`INSERT INTO holds (tenant_id, mode, reference, virtual_account_id, account_ref, seq, held_kobo, status, reason, created_by)
        SELECT ${t.tenantId}, 'test', 'copy-' || g, ${va}, 'probe-1', 1, 100, 'Held', 'seeded', 'test' FROM generate_series(1, 400) AS g`
      yield* sql`INSERT INTO transfers (id, tenant_id, mode, merchant_tx_ref, source, request_fingerprint, amount_kobo, account_number, bank_code,
          bank_name, account_name, status, provider, lease_until, created_by, deposit_reference, virtual_account_id)
        SELECT 'trf_probe_' || g, ${t.tenantId}, 'test', 'refund-' || g, 'refund', 'fp', 100 + g, '0123456789', '058', 'GTBank', 'CHIDI OKEKE',
          'Successful', 'sandbox', now(), 'test', 'copy-' || (g % 200), ${va} FROM generate_series(1, 400) AS g`
      yield* sql`INSERT INTO ledger_entries (tenant_id, mode, journal_id, account, amount_kobo)
        SELECT ${t.tenantId}, 'test', 'seeded:' || g, a.account, a.amount FROM generate_series(1, 400) AS g,
          LATERAL (VALUES ('customer_funds:acc-' || (g % 100), -g::bigint), ('provider_clearing', g::bigint)) AS a(account, amount)`
      yield* sql`INSERT INTO inbound_events (tenant_id, mode, provider, provider_reference, kind, account_number, payload)
        SELECT tenant_id, mode, provider, provider_reference || '-' || g, kind, account_number, payload FROM inbound_events, generate_series(1, 400) AS g
        WHERE tenant_id = ${t.tenantId}`
      yield* sql`ANALYZE inbound_events`
      yield* sql`ANALYZE transactions`
      yield* sql`ANALYZE holds`
      yield* sql`ANALYZE transfers`
      yield* sql`ANALYZE ledger_entries`

      // A list as the actor's pass gives it: some keys with rows, one twice, some without.
      const refs = ["copy-7", "copy-3", "copy-7", "missing-1", "copy-250", "missing-2"]

      keyProbe(yield* genericPlan(holdsOf(sql, scope, refs, true)), "holds_pkey", "reference")
      const holds = yield* sql.withTransaction(holdsOf(sql, scope, refs, true))
      expect(holds.map((h) => h.reference)).toEqual(["copy-250", "copy-3", "copy-7"])

      keyProbe(yield* genericPlan(transactionsOf(sql, t.tenantId, "test", refs)), "transactions_reference_key", "reference")
      expect((yield* transactionsOf(sql, t.tenantId, "test", refs)).map((r) => r.reference).sort()).toEqual(["copy-250", "copy-3", "copy-7"])

      keyProbe(yield* genericPlan(refundsOfDeposits(sql, scope, refs)), "transfers_deposit_idx", "deposit_reference")
      const refunds = yield* refundsOfDeposits(sql, scope, refs)
      // copy-3 and copy-7: refunds 3, 203 and 7, 207; copy-250 has none (g % 200 < 200). Newest first: one statement
      // made them all at one created_at, so by id, descending.
      expect(refunds.map((r) => r.merchantTxRef)).toEqual(["refund-7", "refund-3", "refund-207", "refund-203"])

      const [inbound] = yield* sql<{ provider: string; providerReference: string }>`SELECT provider, provider_reference FROM inbound_events WHERE tenant_id = ${t.tenantId}`
      const listed = [inbound!.providerReference, "not-seen-1", inbound!.providerReference, "not-seen-2"]
      keyProbe(yield* genericPlan(inboxHas(sql, scope, inbound!.provider, listed)), "inbound_events_tenant_id_mode_provider_provider_reference_key", "provider_reference")
      expect((yield* inboxHas(sql, scope, inbound!.provider, listed)).map((r) => r.providerReference)).toEqual([inbound!.providerReference])

      const accounts = ["customer_funds:acc-1", "customer_funds:acc-2", "customer_funds:acc-1", "customer_funds:none"]
      keyProbe(yield* genericPlan(entriesSumsOf(sql, scope, accounts)), "ledger_entries_account_idx", "account")
      const sums = yield* entriesSumsOf(sql, scope, accounts)
      // acc-1: g = 1, 101, 201, 301; acc-2: g = 2, 102, 202, 302 (each entry -g).
      expect(new Map(sums.map((s) => [s.account, Number(s.balance)]))).toEqual(new Map([["customer_funds:acc-1", -604], ["customer_funds:acc-2", -608]]))
    }))
})
