import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as crypto from "node:crypto"
import { INBOX_RECONCILED } from "../../services/deposits/DepositRows.js"
import { Inbox, type SweepCeiling } from "../../services/deposits/Inbox.js"
import { makeTestApp } from "../support/TestApp.js"
import { updatesIn } from "../support/UpdateCounts.js"

/**
 * The inbox sweeper reads from a low-water mark up, on the primary key, since no index names `reconciled_at` any more
 * (migration 0028, issue 33: a deposit's inbox row is marked reconciled with a HOT update). The mark may pass only rows
 * that are settled, and never a row whose insert has not committed yet, however many later rows have.
 */
const row = (tenantId: string, n: number) => ({
  tenantId, mode: "test" as const, provider: "sandbox", providerReference: `sweep-${tenantId}-${n}`, kind: "inflow" as const, accountNumber: "0001000005",
  payload: {
    event: "deposit", merchantId: "m", sessionId: `s${n}`, accountNumber: "0001000005", amountKobo: 10_000, senderName: "ADA OBI",
    senderAccountNumber: null, senderBankCode: null, narration: `payment ${n} for the order of the week`, paidAt: new Date().toISOString(),
    reversedSessionId: null
  }
})

layer(makeTestApp({ workers: false }), { timeout: 90_000, excludeTestServices: true })("the inbox sweep mark", (it) => {
  it.effect("stays below an insert still in flight while later rows commit and reconcile, and the sweeper then finds it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* Inbox
      const tenantId = `ten_${crypto.randomBytes(4).toString("hex")}`
      const mark = sql<{ below: string }>`SELECT below_id::text AS below FROM inbox_sweep_mark`.pipe(Effect.map((r) => BigInt(r[0]!.below)))
      const reconcile = (ids: ReadonlyArray<number>) => sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ANY(${ids}::bigint[])`
      const backdate = (ids: ReadonlyArray<number>) => sql`UPDATE inbound_events SET received_at = now() - interval '1 minute' WHERE id = ANY(${ids}::bigint[])`
      const passes = (n: number, from: SweepCeiling | undefined) =>
        Effect.reduce(Array.from({ length: n }), from, (c) => Effect.map(inbox.advanceSweepMark(c), (x): SweepCeiling | undefined => x))
      // The mark moves once the oldest transaction of the whole Postgres cluster is past a pass's xid, and the other test
      // files' databases share this cluster: a transaction of theirs may hold it back for a while. So a step that expects
      // the mark to move makes passes until it has (at most 30 s, then the expectation below fails).
      const passesUntil = (moved: (below: bigint) => boolean, from: SweepCeiling | undefined) =>
        Effect.iterate({ ceiling: from, below: -1n, tries: 0 }, {
          while: (s) => !moved(s.below) && s.tries < 600,
          body: (s) =>
            Effect.gen(function* () {
              if (s.tries > 0) yield* Effect.sleep("50 millis")
              const ceiling = yield* inbox.advanceSweepMark(s.ceiling)
              return { ceiling: ceiling as SweepCeiling | undefined, below: yield* mark, tries: s.tries + 1 }
            })
        }).pipe(Effect.map((s) => s.ceiling))

      // Whatever earlier tests left is settled, so the mark catches up with it first.
      yield* sql`UPDATE inbound_events SET gave_up_at = now() WHERE reconciled_at IS NULL AND gave_up_at IS NULL`
      const [{ top }] = yield* sql<{ top: string | null }>`SELECT max(id)::text AS top FROM inbound_events`
      let ceiling = yield* passesUntil((below) => top === null || below > BigInt(top), undefined)

      // A: taken its id, not committed (its transaction waits on `release`).
      const taken = yield* Deferred.make<number>()
      const release = yield* Deferred.make<void>()
      const a = yield* sql.withTransaction(Effect.gen(function* () {
        const [inserted] = yield* inbox.insertMany([row(tenantId, 0)])
        yield* Deferred.succeed(taken, inserted!.envelope.inboxId)
        yield* Deferred.await(release)
      })).pipe(Effect.fork)
      const idA = yield* Deferred.await(taken)

      // B and C: later ids, committed, reconciled; D: committed, not reconciled yet.
      const later = yield* inbox.insertMany([row(tenantId, 1), row(tenantId, 2), row(tenantId, 3)])
      const [idB, idC, idD] = later.map((r) => r!.envelope.inboxId)
      expect(idB).toBeGreaterThan(idA)
      yield* reconcile([idB!, idC!])
      yield* backdate([idD!])
      ceiling = yield* passes(4, ceiling)
      expect(yield* mark).toBeLessThanOrEqual(BigInt(idA))
      expect((yield* inbox.unreconciled(100)).map((r) => r.id)).toEqual([idD])

      // A commits (received a minute ago, never published): the sweeper finds it, and the mark still waits for D.
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      yield* backdate([idA])
      expect((yield* inbox.unreconciled(100)).map((r) => r.id)).toEqual([idA, idD])
      ceiling = yield* passes(2, ceiling)
      expect(yield* mark).toBeLessThanOrEqual(BigInt(idA))

      // A reconciled: the mark goes up to D; D given up (poison): past every row.
      yield* reconcile([idA])
      ceiling = yield* passesUntil((below) => below >= BigInt(idD!), ceiling)
      expect(yield* mark).toBe(BigInt(idD!))
      yield* sql`UPDATE inbound_events SET gave_up_at = now() WHERE id = ${idD!}`
      ceiling = yield* passesUntil((below) => below > BigInt(idD!), ceiling)
      expect(yield* mark).toBeGreaterThan(BigInt(idD!))
      expect(yield* inbox.unreconciled(100)).toEqual([])

      // The sweeper's read can start at the mark on the key (no index names reconciled_at any more). A test's inbox is
      // small enough for a sequential scan to be cheaper, so that plan is ruled out here.
      const plan = yield* sql.withTransaction(Effect.zipRight(sql`SET LOCAL enable_seqscan = off`, sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT id FROM inbound_events
        WHERE id >= (SELECT below_id FROM inbox_sweep_mark) AND reconciled_at IS NULL AND gave_up_at IS NULL ORDER BY id LIMIT 1000`))
      const text = plan.map((p) => p["QUERY PLAN"]).join("\n")
      expect(text).toMatch(/Index Scan (using|on) inbound_events_pkey/)
      expect(text).toMatch(/Cond: \(id >= \$\d\)/)
    }))

  it.effect("marking rows reconciled writes no column an index names, and is HOT for most rows", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* Inbox
      const indexes = yield* sql<{ def: string }>`SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'inbound_events'::regclass`
      expect(indexes.length).toBeGreaterThan(0)
      for (const { def } of indexes) expect(def).not.toMatch(/reconciled_at|published_at/)

      // As the reconciler does: rows committed by the receiver, then marked in batches, each its own transaction.
      const tenantId = `ten_${crypto.randomBytes(4).toString("hex")}`
      const ids = (yield* inbox.insertMany(Array.from({ length: 120 }, (_, i) => row(tenantId, i)))).map((r) => r!.envelope.inboxId)
      let updated = 0
      let hot = 0
      for (let i = 0; i < ids.length; i += 20) {
        const n = yield* updatesIn(sql, "inbound_events",
          sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ANY(${ids.slice(i, i + 20)}::bigint[])`)
        updated += n.updated
        hot += n.hot
      }
      expect(updated).toBe(ids.length)
      expect(hot).toBeGreaterThanOrEqual(ids.length * 0.8)
    }))
})
