import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { INSIGHTS_TURN, tryTurn } from "../../services/outbox/Registry.js"
import { Rollups } from "../../services/insights/Rollups.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { elsewhere } from "../support/RowLocks.js"
import { makeTestApp } from "../support/TestApp.js"

/** Whether the insights turn is held right now, as another connection finds it (it takes it and lets go at once). */
const turn = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  elsewhere(sql.withTransaction(tryTurn(sql, INSIGHTS_TURN))).pipe(
    Effect.map((ok) => (ok ? "free" as const : "held" as const))
  ))

/**
 * The roll-ups' one writer at a time (issue 33): every recompute takes the insights consumer's advisory turn, so the
 * consumer's passes and the one-time build's chunks never interleave, and no per-account row is locked or written.
 */
layer(makeTestApp({ workers: false }), { timeout: 60_000, excludeTestServices: true })("the insight roll-ups' writer lock", (it) => {
  it.effect("a recompute holds the insights turn until its transaction ends, and a second waits for it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rollups = yield* Rollups
      const t = yield* testTenant
      yield* createAccount(t.token, "lock-a", "Ada Obi", 50_000)
      const [a] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId}`
      const touch = rollups.touchAccounts([{ tenantId: t.tenantId, mode: "test", accountId: a!.id, atMs: Date.now() }])

      expect(yield* turn).toBe("free")
      // Held while the recompute's transaction lasts, by the recompute itself (nothing else took it here).
      expect(yield* sql.withTransaction(Effect.zipRight(touch, turn))).toBe("held")
      expect(yield* turn).toBe("free")

      // A second recompute (another connection: a build chunk, or another process's pass) waits for the first.
      const second = yield* sql.withTransaction(Effect.gen(function* () {
        yield* touch
        const other = yield* Effect.fork(elsewhere(sql.withTransaction(touch)))
        yield* Effect.sleep("300 millis")
        const whileHeld = yield* Fiber.poll(other)
        return { other, whileHeld }
      }))
      expect(second.whileHeld._tag).toBe("None")
      yield* Fiber.join(second.other)

      // The recompute did its work, and no account row was locked: the table of lock targets is gone.
      const [receivables] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM insight_receivables WHERE account_id = ${a!.id}`
      expect(receivables!.n).toBe(1)
      const [table] = yield* sql<{ t: string | null }>`SELECT to_regclass('insight_accounts')::text AS t`
      expect(table!.t).toBeNull()
    }))
})

/** With the workers on: the consumer has counted the deposit; applying it again changes nothing. */
layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("the insight roll-ups' deposits", (it) => {
  it.effect("counts a deposit once, however often it is applied", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rollups = yield* Rollups
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "once-1", "Bola Ade", 30_000)
      expect((yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 30_000, senderName: "BOLA ADE" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      const [deposit] = yield* sql<{ id: number }>`SELECT id FROM transactions WHERE tenant_id = ${t.tenantId}`
      const figures = sql<{ key: string; count: number; amount: number }>`
        SELECT key, count::int AS count, amount_kobo::int AS amount FROM insight_days WHERE tenant_id = ${t.tenantId} ORDER BY key`
      // The consumer's pass (within a second or so of the deposit).
      const once = yield* figures.pipe(
        Effect.filterOrFail((rows) => rows.some((r) => r.key === "collected" && r.amount === 30_000)),
        Effect.retry({ times: 100, schedule: Schedule.spaced("100 millis") })
      )
      expect(once).toContainEqual({ key: "collected", count: 0, amount: 30_000 })
      expect(once.find((r) => r.key.startsWith("rs:"))?.count).toBe(1)
      yield* sql.withTransaction(rollups.applyTransactions([Number(deposit!.id), Number(deposit!.id)]))
      expect(yield* figures).toEqual(once)
      // The cursor counted it and keeps no record of a deposit that has not changed since (migration 0029).
      const [counted] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM insight_tx WHERE id = ${Number(deposit!.id)}`
      expect(counted!.n).toBe(0)
    }))
})
