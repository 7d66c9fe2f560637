import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Rollups } from "../../services/insights/Rollups.js"
import { createAccount, testTenant } from "../support/Pipeline.js"
import { rowLock } from "../support/RowLocks.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * The insights consumer's account lock (issue 33): a recompute of an account holds that account's `insight_accounts`
 * row until its transaction ends, so two recomputes of one account never interleave; and an account seen before is
 * locked, not rewritten: its row keeps its version (same `ctid` and `xmin`), so the roll-ups leave no dead tuple per
 * deposit behind.
 */
layer(makeTestApp({ workers: false }))("the insights account lock", (it) => {
  it.effect("holds the account's row for the recompute, and writes no new version of it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rollups = yield* Rollups
      const t = yield* testTenant
      yield* createAccount(t.token, "lock-a", "Ada Obi", 50_000)
      yield* createAccount(t.token, "lock-b", "Bayo Ali", 20_000)
      const ids = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} ORDER BY account_ref`
      const [a, b] = ids.map((r) => r.id)
      const touch = (accountIds: ReadonlyArray<string>) =>
        rollups.touchAccounts(accountIds.map((accountId) => ({ tenantId: t.tenantId, mode: "test" as const, accountId, atMs: Date.now() })))
      const version = (id: string) =>
        Effect.map(sql<{ v: string }>`SELECT ctid::text || '/' || xmin::text AS v FROM insight_accounts WHERE account_id = ${id}`, (r) => r[0]?.v)
      // Another connection (outside the recompute's transaction) tries the row lock without waiting.
      const tryLock = (id: string) => rowLock("insight_accounts", "account_id", id)

      // First sight: the row is made (another connection sees it only once the recompute has committed).
      yield* sql.withTransaction(touch([a!, b!]))
      const first = { a: yield* version(a!), b: yield* version(b!) }
      expect(first.a).toBeDefined()
      expect(first.b).toBeDefined()
      // Seen again: both rows held while the recompute's transaction lasts, and neither gets a new version.
      const during = yield* sql.withTransaction(Effect.gen(function* () {
        yield* touch([a!, b!])
        return { a: yield* tryLock(a!), b: yield* tryLock(b!) }
      }))
      expect(during).toEqual({ a: "held", b: "held" })
      expect({ a: yield* version(a!), b: yield* version(b!) }).toEqual(first)
      // Released with the transaction.
      expect(yield* tryLock(a!)).toBe("free")
      // And the recompute did its work: the account's receivable is counted.
      const receivables = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM insight_receivables WHERE account_id = ANY(${[a!, b!]}::text[])`
      expect(receivables[0]!.n).toBe(2)
    }))
})
