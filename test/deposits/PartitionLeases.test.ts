import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import * as crypto from "node:crypto"
import { Inbox } from "../../services/deposits/Inbox.js"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { decodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { replayFrom } from "../../streams/Consume.js"
import { type Claim, LeaseLost, makePartitionLeases } from "../../streams/PartitionLeases.js"
import { ReconcilerWorkersLive } from "../../services/deposits/ReconcilerWorkers.js"
import { streamNames } from "../../streams/Topology.js"
import { assertLedgerInvariant, createAccount, eventBody, sendSigned, testTenant, waitForInboxDrained, waitForTransactions } from "../support/Pipeline.js"
import { appTopology, NAMES, TestNatsLive } from "../support/Resilience.js"
import { waitFor } from "../support/Wait.js"
import { makeTestApp } from "../support/TestApp.js"

/*
 * The reconcilers' ownership of the deposit partitions (streams/PartitionLeases.ts): exclusive, expiring leases in
 * Postgres, a new epoch per take-over, the fence inside every reconcile transaction; and reconcilers sharing the
 * partitions and handing them over. The app without its workers (the tests start reconcilers themselves), on the
 * shared nats-server. Live clock: leases really expire.
 */

const LEASE_MS = 1_500

/** Lease managers of their own (their own key, so they never meet the app's reconcilers). */
const leasesOn = (key: string, leaseMs: number, partitions = 4) => makePartitionLeases({ key, partitions, leaseMs })
const freshKey = () => `TEST_LEASES_${crypto.randomBytes(4).toString("hex")}`
const partitionsOf = (claims: ReadonlyArray<Claim>) => claims.map((c) => c.partition)

layer(makeTestApp({ workers: false, config: { reconcilerLeaseMs: LEASE_MS } }).pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "deposit partitions: leases, fencing and hand-over",
  (it) => {
    it.effect("a lease is exclusive, renewed by its owner, handed back or taken over after it expires, with a new epoch each time", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const key = freshKey()
        const a = yield* leasesOn(key, 1_000)
        const b = yield* leasesOn(key, 1_000)
        expect(a.owner).not.toBe(b.owner)
        // Only a beat makes a process a member: a's first beat sees a alone.
        expect(yield* a.beat).toEqual({ alive: 1, held: [] })
        const mine = yield* a.acquire(4)
        expect(mine).toEqual([0, 1, 2, 3].map((partition) => ({ partition, epoch: 1 })))
        // b is alive (a beat within the last two thirds of a lease), but everything is held.
        expect((yield* b.beat).alive).toBe(2)
        expect(yield* b.acquire(4)).toEqual([])
        // Handed back: free at once, taken with the next epoch.
        yield* a.release(mine[3]!)
        expect(yield* b.acquire(4)).toEqual([{ partition: 3, epoch: 2 }])
        expect(partitionsOf((yield* a.beat).held)).toEqual([0, 1, 2])
        expect(partitionsOf((yield* b.beat).held)).toEqual([3])

        // The fence, inside a transaction: a holds 0..2 at epoch 1, not 3 any more.
        yield* sql.withTransaction(a.fence(mine.slice(0, 3)))
        const lost = yield* Effect.flip(sql.withTransaction(a.fence(mine)))
        expect(lost).toBeInstanceOf(LeaseLost)
        expect((lost as LeaseLost).lost).toEqual([mine[3]])

        // a stops renewing (a pause, a crash). Not before its leases have run out can b take them over.
        yield* b.beat
        expect(yield* b.acquire(4)).toEqual([])
        yield* Effect.sleep("1100 millis")
        const bBeat = yield* b.beat
        expect(bBeat.alive).toBe(1) // a has not beaten for more than two thirds of a lease
        expect(yield* b.acquire(4)).toEqual([0, 1, 2].map((partition) => ({ partition, epoch: 2 })))
        // a wakes up: its beat holds nothing, its fence fails: it can neither apply nor ack anything of theirs.
        expect(yield* a.beat).toEqual({ alive: 2, held: [] })
        expect(((yield* Effect.flip(a.fence(mine.slice(0, 1)))) as LeaseLost).lost).toEqual([mine[0]])
        // A graceful stop hands everything back at once.
        yield* b.leave
        expect(partitionsOf(yield* a.acquire(4))).toEqual([0, 1, 2, 3])
      })
    )

    it.effect("a take-over waits while a transaction of the old owner holds the fence; the owner's own renewals do not", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const key = freshKey()
        const a = yield* leasesOn(key, 800, 1)
        const b = yield* leasesOn(key, 800, 1)
        const [claim] = yield* a.acquire(1)
        const fenced = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const tx = yield* sql.withTransaction(
          a.fence([claim!]).pipe(Effect.zipRight(Deferred.succeed(fenced, undefined)), Effect.zipRight(Deferred.await(finish)))
        ).pipe(Effect.fork)
        yield* Deferred.await(fenced)
        // FOR KEY SHARE does not block the owner's renewal (an update of non-key columns)...
        expect(partitionsOf((yield* a.beat.pipe(Effect.timeout("2 seconds"))).held)).toEqual([0])
        yield* Effect.sleep("900 millis")
        // ...but the lease has run out, and still nobody takes the partition while that transaction is in flight.
        expect(yield* b.acquire(1)).toEqual([])
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(tx)
        expect(yield* b.acquire(1)).toEqual([{ partition: 0, epoch: 2 }])
        // And a transaction a starts now sees the change.
        expect(yield* Effect.flip(sql.withTransaction(a.fence([claim!])))).toBeInstanceOf(LeaseLost)
      })
    )

    it.effect("a reconcile whose fence fails applies nothing; the owner's applies", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const inbox = yield* Inbox
        const reconciler = yield* Reconciler
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "fenced-1", NAMES[0]!)
        const body = eventBody(t, { accountNumber: acct.nuban, amountKobo: 25_000, senderName: NAMES[0]! })
        const envelope = (yield* inbox.insert({
          tenantId: t.tenantId, mode: "test", provider: "sandbox", providerReference: body.sessionId, kind: "inflow", accountNumber: acct.nuban, payload: body
        }))!
        const key = freshKey()
        const a = yield* leasesOn(key, 5_000)
        const b = yield* leasesOn(key, 5_000)
        const [old] = yield* a.acquire(1)
        yield* a.release(old!)
        const [current] = yield* b.acquire(1)
        const refused = yield* Effect.flip(reconciler.reconcile(envelope, a.fence([old!])))
        expect(refused).toBeInstanceOf(LeaseLost)
        const none = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(none[0]!.n).toBe(0)
        expect(yield* reconciler.reconcileBatch([envelope], b.fence([current!]))).toEqual(["reconciled"])
        const rows = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(rows).toEqual([{ reference: body.sessionId }])
        yield* assertLedgerInvariant
      })
    )

    it.effect("two reconcilers share the partitions, apply each account in stream order, and one takes all when the other stops", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const topology = yield* appTopology
        const stream = streamNames(topology).deposits
        const owners = sql<{ owner: string; n: number }>`
          SELECT owner, count(*)::int AS n FROM reconciler_partitions WHERE stream = ${stream} AND owner IS NOT NULL GROUP BY owner ORDER BY owner`
        const shares = (expected: ReadonlyArray<number>) =>
          waitFor(`partitions by owner to be ${JSON.stringify(expected)}`, owners, {
            until: (rows) => JSON.stringify(rows.map((r) => r.n).sort()) === JSON.stringify(expected),
            timeoutMs: 20_000
          })

        // Two reconcilers in this process, each with leases of its own, as two worker processes have.
        const first = yield* Scope.make()
        yield* Layer.buildWithScope(ReconcilerWorkersLive, first)
        yield* shares([8])
        const second = yield* Scope.make()
        yield* Layer.buildWithScope(ReconcilerWorkersLive, second)
        yield* shares([4, 4])

        const t = yield* testTenant
        const accounts = yield* Effect.forEach(NAMES, (name, a) => createAccount(t.token, `shared-${a}`, name), { concurrency: 4 })
        const send = (n: number) =>
          Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
            sendSigned(t, { accountNumber: accounts[i % accounts.length]!.nuban, amountKobo: 1_000 + i, senderName: NAMES[i % accounts.length]! }).pipe(
              Effect.tap((r) => expect(r.body.result).toBe("processed"))
            ), { concurrency: 8 })
        yield* send(60)
        yield* waitForTransactions(t.tenantId, 60)

        // One stops (gracefully: its leases go back at once); the other takes everything and carries on.
        yield* Scope.close(first, Exit.void)
        yield* shares([8])
        yield* send(40)
        yield* waitForTransactions(t.tenantId, 100)
        yield* waitForInboxDrained

        // Each account's deposits were applied in the order of their messages on the stream.
        const messages = Chunk.toArray(yield* Stream.runCollect(replayFrom(stream, { seq: 1 })).pipe(Effect.orDie))
        const streamOrder = messages.flatMap((m) => {
          const e = decodeEnvelope(m.string())
          return isDecoded(e) && e.tenantId === t.tenantId ? [e.reference] : []
        })
        for (const acct of accounts) {
          const applied = (yield* sql<{ reference: string }>`
            SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId} AND nuban = ${acct.nuban} ORDER BY id`).map((r) => r.reference)
          expect(applied).toEqual(streamOrder.filter((ref) => applied.includes(ref)))
        }
        yield* Scope.close(second, Exit.void)
        yield* assertLedgerInvariant
      })
    )
  }
)
