import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { cursorBatch } from "../../services/insights/InsightsCursor.js"
import { createAccount, testTenant } from "../support/Pipeline.js"
import { elsewhere } from "../support/RowLocks.js"
import { makeTestApp } from "../support/TestApp.js"

/** `n` deposits of 1,000 kobo to the account, straight into the tables (no workers run here), in the caller's transaction. */
const insertDeposits = (tenantId: string, account: { readonly id: string; readonly nuban: string }, tag: string, n: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number }>`
    WITH ie AS (
      INSERT INTO inbound_events (tenant_id, mode, provider, provider_reference, kind, account_number, payload)
      SELECT ${tenantId}, 'test', 'sandbox', ${tag} || '-' || g, 'inflow', ${account.nuban}, '{}'::json FROM generate_series(1, ${n}) AS g
      RETURNING id, provider_reference
    )
    INSERT INTO transactions (tenant_id, mode, provider, reference, inbound_event_id, virtual_account_id, nuban, kind, amount_kobo, applied_kobo,
      status, reconciliation_status, risk_score, risk_reasons, paid_at)
    SELECT ${tenantId}, 'test', 'sandbox', ie.provider_reference, ie.id, ${account.id}, ${account.nuban}, 'inflow', 1000, 1000,
      'Completed', 'Underpaid', 0, '[]'::jsonb, now() FROM ie
    RETURNING id`.pipe(Effect.map((rows) => rows.map((r) => Number(r.id)))))

/** A new account of the tenant (1,000,000 kobo expected): its id and NUBAN. */
const accountOf = (t: { readonly token: string; readonly tenantId: string }, ref: string, name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const acc = yield* createAccount(t.token, ref, name, 1_000_000)
    const [account] = yield* sql<{ id: string; nuban: string }>`SELECT id, nuban FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND nuban = ${acc.nuban}`
    return account!
  })

/** The cursor's batches until one is not full (retrying while another pass has the insights turn): rows counted. */
const drain = (batchSize: number) =>
  Effect.gen(function* () {
    let counted = 0
    for (;;) {
      const b = yield* cursorBatch(batchSize).pipe(Effect.filterOrFail((r) => !r.busy), Effect.retry(Schedule.spaced("20 millis")))
      counted += b.counted
      if (!b.full) return { counted, behind: b.behind }
    }
  })

/**
 * `drain` until no committed row waits beyond the horizon: the horizon is the server's, so a transaction another test
 * file leaves open meanwhile holds a row back for a moment. Rows counted.
 */
const drainAll = (batchSize: number) =>
  Effect.gen(function* () {
    let counted = 0
    for (;;) {
      const d = yield* drain(batchSize)
      counted += d.counted
      if (!d.behind) return { counted }
      yield* Effect.sleep("50 millis")
    }
  })

const figures = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string; count: number; amount: number }>`
    SELECT key, sum(count)::int AS count, sum(amount_kobo)::int AS amount FROM insight_days
    WHERE tenant_id = ${tenantId} AND key IN ('collected', 'rs:Underpaid') GROUP BY key ORDER BY key`)

const countedOf = (ids: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number }>`SELECT id FROM insight_tx WHERE id = ANY(${ids}::bigint[]) ORDER BY id`.pipe(
    Effect.map((rows) => rows.map((r) => Number(r.id)))
  ))

/**
 * The insights consumer reads deposits by commit horizon (issue 33; services/insights/InsightsCursor.ts): each
 * transaction row is stamped with the id of the transaction that wrote it, and a pass counts the rows stamped below the
 * oldest transaction still running, then moves its cursor in the same transaction.
 */
layer(makeTestApp({ workers: false }), { timeout: 60_000, excludeTestServices: true })("the insights cursor", (it) => {
  it.effect("counts every row once across batch edges, several rows of one transaction included, and a change of status again", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const account = yield* accountOf(t, "cursor-a", "Ada Obi")
      // Five rows stamped with one transaction id, three with another: batches of two split both.
      const first = yield* sql.withTransaction(insertDeposits(t.tenantId, account, "edge-a", 5))
      const second = yield* sql.withTransaction(insertDeposits(t.tenantId, account, "edge-b", 3))
      const all = [...first, ...second]
      const { counted } = yield* drainAll(2)
      expect(counted).toBeGreaterThanOrEqual(8)
      expect(yield* countedOf(all)).toEqual([...all].sort((a, b) => a - b))
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 8_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      // Nothing new: a pass counts nothing, and the figures stand.
      expect((yield* drainAll(2)).counted).toBe(0)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 8_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      // A change of status stamps the row again (migration 0024's trigger): its collected part is taken back.
      yield* sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${first[0]!}`
      expect((yield* drainAll(2)).counted).toBe(1)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 7_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      // A change the roll-ups do not count (a flag) stamps nothing.
      yield* sql`UPDATE transactions SET flagged = true WHERE id = ${first[1]!}`
      expect((yield* drainAll(2)).counted).toBe(0)
    }))

  it.effect("waits for a transaction that commits after a later one, and then counts both", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const account = yield* accountOf(t, "cursor-b", "Bayo Ali")
      // Transaction A writes its row and stays open; B, begun later (a higher transaction id), commits first.
      const inserted = yield* Deferred.make<ReadonlyArray<number>>()
      const release = yield* Deferred.make<void>()
      const a = yield* Effect.fork(elsewhere(sql.withTransaction(Effect.gen(function* () {
        yield* Deferred.succeed(inserted, yield* insertDeposits(t.tenantId, account, "late-a", 1))
        yield* Deferred.await(release)
      }))))
      const aIds = yield* Deferred.await(inserted)
      const bIds = yield* sql.withTransaction(insertDeposits(t.tenantId, account, "early-b", 1))

      // While A is open, B is committed but beyond the horizon: not counted, and the pass says rows are waiting.
      const whileOpen = yield* drain(100)
      expect(whileOpen.behind).toBe(true)
      expect(yield* countedOf(bIds)).toEqual([])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      // Once A has committed, both (another test's open transaction elsewhere on the server may delay it a little).
      yield* drain(100).pipe(
        Effect.zipRight(countedOf([...aIds, ...bIds])),
        Effect.filterOrFail((ids) => ids.length === 2),
        Effect.retry({ times: 100, schedule: Schedule.spaced("100 millis") })
      )
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 2_000 }, { key: "rs:Underpaid", count: 2, amount: 2_000 }])
    }))
})
