import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { cursorBatch, NOT_COUNTED_YET } from "../../services/insights/InsightsCursor.js"
import { Rollups } from "../../services/insights/Rollups.js"
import { dayOf } from "../../src/domain/InsightRollups.js"
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

/** Of `ids`, those the cursor has passed (counted), in id order. */
const passed = (ids: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number }>`
    SELECT t.id FROM transactions t WHERE t.id = ANY(${ids}::bigint[]) AND NOT (${sql.literal(NOT_COUNTED_YET)}) ORDER BY t.id`.pipe(
    Effect.map((rows) => rows.map((r) => Number(r.id)))
  ))

/** The records of what was counted (`insight_tx`) of `ids`: only deposits that changed after they were counted have one. */
const recordsOf = (ids: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: number; collected: number; pending: boolean }>`
    SELECT id, collected_kobo::int AS collected, pending FROM insight_tx WHERE id = ANY(${ids}::bigint[]) ORDER BY id`.pipe(
    Effect.map((rows) => rows.map((r) => ({ ...r, id: Number(r.id) })))
  ))

/**
 * A pass begun on another connection that has counted at least `atLeast` rows and holds its transaction (and so the
 * insights turn) open until `release` completes; tried again while the horizon holds the rows back.
 */
const passInFlight = (atLeast: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (;;) {
      const counted = yield* Deferred.make<number>()
      const release = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(elsewhere(sql.withTransaction(Effect.gen(function* () {
        const b = yield* cursorBatch(1_000)
        yield* Deferred.succeed(counted, b.busy ? -1 : b.counted)
        yield* Deferred.await(release)
      }))))
      const n = yield* Deferred.await(counted)
      if (n >= atLeast) return { release: Deferred.succeed(release, undefined).pipe(Effect.zipRight(Fiber.join(fiber))) }
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(fiber)
      if (n > 0) return yield* Effect.dieMessage(`the pass counted ${n} rows, not ${atLeast}`)
      yield* Effect.sleep("50 millis")
    }
  })

/** A new tenant and account, once the cursor has counted everything before them. */
const freshAccount = (ref: string, name: string) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const account = yield* accountOf(t, ref, name)
    yield* drainAll(100)
    return { t, account }
  })

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
      expect(yield* passed(all)).toEqual([...all].sort((a, b) => a - b))
      // Counted without a record: a deposit that never changes costs the roll-ups none (migration 0029).
      expect(yield* recordsOf(all)).toEqual([])
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 8_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      // Nothing new: a pass counts nothing, and the figures stand.
      expect((yield* drainAll(2)).counted).toBe(0)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 8_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      // A change of status stamps the row again (migration 0024's trigger): its collected part is taken back.
      // The trigger records what had been counted of it (the version the cursor passed).
      yield* sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${first[0]!}`
      expect(yield* recordsOf([first[0]!])).toEqual([{ id: first[0]!, collected: 1_000, pending: false }])
      expect((yield* drainAll(2)).counted).toBe(1)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 7_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
      expect(yield* recordsOf([first[0]!])).toEqual([{ id: first[0]!, collected: 0, pending: false }])
      // Two changes between passes: the version between was never counted, so the record stays what was counted.
      yield* sql`UPDATE transactions SET status = 'PendingReview' WHERE id = ${first[0]!}`
      yield* sql`UPDATE transactions SET status = 'Completed' WHERE id = ${first[0]!}`
      expect(yield* recordsOf([first[0]!])).toEqual([{ id: first[0]!, collected: 0, pending: false }])
      expect((yield* drainAll(2)).counted).toBe(1)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 8_000 }, { key: "rs:Underpaid", count: 8, amount: 8_000 }])
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
      expect(yield* passed(bIds)).toEqual([])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      // Once A has committed, both (another test's open transaction elsewhere on the server may delay it a little).
      yield* drain(100).pipe(
        Effect.zipRight(passed([...aIds, ...bIds])),
        Effect.filterOrFail((ids) => ids.length === 2),
        Effect.retry({ times: 100, schedule: Schedule.spaced("100 millis") })
      )
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 2_000 }, { key: "rs:Underpaid", count: 2, amount: 2_000 }])
    }))

  it.effect("a change to a deposit a pass is counting waits for that pass, and is then counted as a difference", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { t, account } = yield* freshAccount("cursor-c", "Chidi Eke")
      const ids = yield* sql.withTransaction(insertDeposits(t.tenantId, account, "race-c", 3))
      // The pass has counted the three and not committed: the change cannot tell yet whether it will.
      const pass = yield* passInFlight(3)
      const change = yield* Effect.fork(elsewhere(sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${ids[0]!}`))
      yield* Effect.sleep("300 millis")
      expect((yield* Fiber.poll(change))._tag).toBe("None")
      yield* pass.release
      yield* Fiber.join(change)
      // Once the pass committed, the change found its version counted and recorded it.
      expect(yield* recordsOf(ids)).toEqual([{ id: ids[0]!, collected: 1_000, pending: false }])
      yield* drainAll(100)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 2_000 }, { key: "rs:Underpaid", count: 3, amount: 3_000 }])

      // A change to a deposit the cursor passed long ago (a late reversal of an old credit) waits for no pass.
      const idle = yield* passInFlight(0)
      yield* elsewhere(sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${ids[1]!}`).pipe(Effect.timeoutFail({
        duration: "5 seconds", onTimeout: () => new Error("the change waited for the pass")
      }))
      yield* idle.release
      yield* drainAll(100)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 1_000 }, { key: "rs:Underpaid", count: 3, amount: 3_000 }])
    }))

  it.effect("a change not yet committed holds passes back; the deposit is then counted once, as it is by then", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { t, account } = yield* freshAccount("cursor-d", "Dayo Ojo")
      const ids = yield* sql.withTransaction(insertDeposits(t.tenantId, account, "race-d", 2))
      // A change of a deposit not counted yet takes the insights turn shared until it commits.
      const changed = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const change = yield* Effect.fork(elsewhere(sql.withTransaction(Effect.gen(function* () {
        yield* sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${ids[0]!}`
        yield* Deferred.succeed(changed, undefined)
        yield* Deferred.await(release)
      }))))
      yield* Deferred.await(changed)
      expect((yield* cursorBatch(100)).busy).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(change)
      yield* drainAll(100)
      // Counted once, as new, with its status by then (rejected: nothing collected); no record was needed.
      expect(yield* passed(ids)).toEqual(ids)
      expect(yield* recordsOf(ids)).toEqual([])
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 1_000 }, { key: "rs:Underpaid", count: 2, amount: 2_000 }])
    }))

  it.effect("deposits from before the cursor (no stamp): counted once by the drained events and by the build, then by the cursor as a difference", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rollups = yield* Rollups
      const { t, account } = yield* freshAccount("cursor-e", "Emeka Nwosu")
      // Rows as migration 0024 found them: no stamp (setting it fires no trigger).
      const unstamped = (tag: string, n: number) => sql.withTransaction(Effect.gen(function* () {
        const ids = yield* insertDeposits(t.tenantId, account, tag, n)
        yield* sql`UPDATE transactions SET insight_xid = NULL WHERE id = ANY(${ids}::bigint[])`
        return ids
      }))
      const events = yield* unstamped("legacy-e", 2)
      // A pending event drained (twice): counted once, each with its record; the cursor leaves them alone.
      yield* sql.withTransaction(rollups.applyTransactions(events))
      yield* sql.withTransaction(rollups.applyTransactions(events))
      expect(yield* recordsOf(events)).toEqual(events.map((id) => ({ id, collected: 1_000, pending: false })))
      expect((yield* drainAll(100)).counted).toBe(0)
      // The one-time build: the unstamped rows not counted yet, once however often it runs.
      const built = yield* unstamped("build-e", 3)
      const billingDay = () => Effect.succeed(dayOf(Date.now()))
      yield* rollups.build(billingDay)
      yield* rollups.build(billingDay)
      expect((yield* recordsOf(built)).length).toBe(3)
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 5_000 }, { key: "rs:Underpaid", count: 5, amount: 5_000 }])
      // A change stamps the row: the cursor counts it as the difference from the record the old rule wrote.
      yield* sql`UPDATE transactions SET status = 'Rejected' WHERE id = ${events[0]!}`
      expect((yield* drainAll(100)).counted).toBe(1)
      yield* sql.withTransaction(rollups.applyTransactions(events))
      expect(yield* figures(t.tenantId)).toEqual([{ key: "collected", count: 0, amount: 4_000 }, { key: "rs:Underpaid", count: 5, amount: 5_000 }])
    }))
})
