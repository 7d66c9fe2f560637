import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { elsewhere } from "../support/RowLocks.js"
import { makeTestApp } from "../support/TestApp.js"

const transactionsOf = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ reference: string; kind: string; status: string }>`
    SELECT reference, kind, status FROM transactions WHERE tenant_id = ${tenantId} ORDER BY id`)

/**
 * The account lock protocol between the reconciler and the automation actor (issue 33). A pass of hold-only runs locks
 * its accounts `FOR KEY SHARE` (services/automation/Actor.ts): a deposit that only credits the account (the reconciler
 * locks it `FOR NO KEY UPDATE`) goes ahead meanwhile, and a reversal, which takes money from it as the hold does (the
 * reconciler locks its batch `FOR UPDATE`), waits for the pass to end. Real receiver, reconciler and Postgres; the lock
 * is taken as the actor takes it, on another connection.
 */
layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("the reconciler's and the actor's account locks", (it) => {
  it.effect("a deposit is credited while a hold-only pass holds the account; a reversal waits for it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "locks-1", "Ada Obi", 100_000)
      const first = yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 40_000, senderName: "ADA OBI" })
      expect(first.status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      const [va] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = 'locks-1'`

      // The actor's pass: the account held FOR KEY SHARE until released.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const pass = yield* Effect.fork(elsewhere(sql.withTransaction(Effect.gen(function* () {
        yield* sql`SELECT id FROM virtual_accounts WHERE id = ${va!.id} FOR KEY SHARE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      }))))
      yield* Deferred.await(locked)

      // A second deposit to the account is credited while the pass holds it.
      expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 30_000, senderName: "ADA OBI" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 2)
      // A reversal of the first waits: it is received, and not applied while the pass lasts.
      const reversal = yield* sendSigned(t, {
        event: "transfer.reversal", accountNumber: acc.nuban, amountKobo: 40_000, reversedSessionId: first.sessionId, senderName: null
      })
      expect(reversal.status).toBe(200)
      yield* Effect.sleep("1500 millis")
      expect((yield* transactionsOf(t.tenantId)).map((r) => r.kind)).toEqual(["inflow", "inflow"])
      const [waiting] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.datname = current_database() AND a.query LIKE '%FOR UPDATE OF va%'`
      expect(waiting!.n).toBeGreaterThan(0)

      // The pass ends: the reversal goes through, and takes the first deposit back.
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(pass)
      yield* waitForTransactions(t.tenantId, 3)
      const after = yield* transactionsOf(t.tenantId)
      expect(after.map((r) => r.kind)).toEqual(["inflow", "inflow", "reversal"])
      expect(after[0]!.status).toBe("Reversed")
    }))
})
