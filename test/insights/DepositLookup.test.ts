import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { depositsOfEvents } from "../../services/insights/InsightsConsumer.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * How the insights consumer finds the deposits its events name (issue 33): a probe of the transactions' reference index
 * per event, whatever the table holds. Written as a join, Postgres hashed the whole transactions table on every pass of
 * 500 events once it held a few thousand rows: each pass scanned every deposit ever made.
 */
layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("the insights consumer's deposit lookup", (it) => {
  it.effect("probes the reference index per event, with thousands of deposits in the table, and finds the deposit", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "lookup-1", "Chidi Okeke", 10_000)
      expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 10_000, senderName: "CHIDI OKEKE" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      const [deposit] = yield* sql<{ id: number; reference: string }>`SELECT id, reference FROM transactions WHERE tenant_id = ${t.tenantId}`
      const [event] = yield* sql<{ id: number }>`SELECT id FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'deposit.reconciled'`
      expect(yield* depositsOfEvents(sql, [Number(event!.id)])).toMatchObject([{ id: deposit!.id, tenantId: t.tenantId, mode: "test" }])

      // 3,000 more deposits in the table (copies of that one under other references), and fresh statistics.
      const [cols] = yield* sql<{ list: string }>`SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS list
        FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'transactions' AND column_name NOT IN ('id', 'reference')`
      yield* sql.unsafe(`INSERT INTO transactions (${cols!.list}, reference)
        SELECT ${cols!.list}, reference || '-' || g FROM transactions, generate_series(1, 3000) AS g WHERE id = ${Number(deposit!.id)}`)
      yield* sql`ANALYZE transactions`
      // A pass's worth of event ids (the consumer's batch is 500), as the consumer asks.
      const ids = [Number(event!.id), ...Array.from({ length: 499 }, (_, i) => 1_000_000_000 + i)]
      const plan = (yield* sql<Record<string, string>>`EXPLAIN ${depositsOfEvents(sql, ids)}`).map((r) => Object.values(r)[0]).join("\n")
      expect(plan).toContain("transactions_reference_key")
      expect(plan).not.toMatch(/Seq Scan on transactions/)
      expect(yield* depositsOfEvents(sql, ids)).toMatchObject([{ id: deposit!.id }])
    }))
})
