import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { WorkersLive } from "../../src/Services.js"
import { Nats, NatsLive } from "../../streams/Nats.js"
import { DEFAULT_DEPOSIT_PARTITIONS } from "../../src/Config.js"
import { depositPartition, partitionConsumerConfig, partitionConsumerName, RECONCILER_ACK_WAIT_MS, streamNames } from "../../streams/Topology.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { appTopology, reconcilerInfo, TEST_NATS_URL, TestNatsLive, waitForConsumerIdle } from "../support/Resilience.js"
import { makeTestApp } from "../support/TestApp.js"

/** How long the test holds the account's row lock: the batch waiting on it takes more than twice the ack_wait. */
const HOLD_MS = 2 * RECONCILER_ACK_WAIT_MS + 2_000

layer(makeTestApp().pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "progress acks: a slow batch keeps its deliveries",
  (it) => {
    it.effect(`a batch that takes ${HOLD_MS / 1000} s (ack_wait ${RECONCILER_ACK_WAIT_MS / 1000} s) is delivered once and reconciled once`, () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const topology = yield* appTopology
        const t = yield* testTenant
        yield* createAccount(t.token, "slow-1", "John Adeyemi")
        const [va] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = 'slow-1'`
        // Another transaction holds the account's row lock, so the reconciler's batch for it waits (a slow batch).
        const locked = yield* Deferred.make<void>()
        const holder = yield* sql.withTransaction(
          sql`SELECT id FROM virtual_accounts WHERE id = ${va!.id} FOR UPDATE`.pipe(
            Effect.zipRight(Deferred.succeed(locked, undefined)),
            Effect.zipRight(Effect.sleep(HOLD_MS))
          )
        ).pipe(Effect.fork)
        yield* Deferred.await(locked)
        const started = Date.now()
        const sent = yield* sendSigned(t, { accountNumber: (yield* sql<{ nuban: string }>`SELECT nuban FROM virtual_accounts WHERE id = ${va!.id}`)[0]!.nuban, amountKobo: 12_345 })
        expect(sent.body.result).toBe("processed")
        yield* Fiber.join(holder)
        yield* waitForTransactions(t.tenantId, 1)
        const took = Date.now() - started
        expect(took).toBeGreaterThan(2 * RECONCILER_ACK_WAIT_MS)
        const info = yield* waitForConsumerIdle(topology)
        // One message, one delivery (the consumer's sequence counts deliveries, redeliveries included): the progress
        // acks kept JetStream from redelivering it while the batch waited.
        expect(info.delivered.stream_seq).toBe(1)
        expect(info.delivered.consumer_seq).toBe(1)
        const txns = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(txns).toEqual([{ reference: sent.sessionId }])
        yield* assertLedgerInvariant
      })
    )
  }
)

/** The owner's lease in the take-over case: short, so the test need not wait long for it to run out. */
const LEASE_MS = 3_000

layer(makeTestApp({ workers: false, config: { reconcilerLeaseMs: LEASE_MS } }).pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "take-over: a delivery whose owner died",
  (it) => {
    it.effect(`is redelivered, to the next owner, once the dead owner's lease (${LEASE_MS / 1000} s) has run out`, () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const topology = yield* appTopology
        const stream = streamNames(topology).deposits
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "dead-1", "John Adeyemi")
        const partition = depositPartition(t.tenantId, "test", acct.nuban, DEFAULT_DEPOSIT_PARTITIONS)
        const sent = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 54_321 })
        expect(sent.body.result).toBe("processed")
        // A "process" owns the account's partition (its lease, epoch 1), takes the delivery from its consumer on its
        // own connection and dies with it: no ack, no nak, no progress, no renewal.
        const taken = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* sql`
              INSERT INTO reconciler_partitions (stream, partition, owner, epoch, expires_at)
              VALUES (${stream}, ${partition}, 'doomed-worker', 1, now() + ${LEASE_MS}::int * interval '1 millisecond')`
            const nc = yield* Nats
            yield* Effect.promise(async () => (await jetstreamManager(nc)).consumers.add(stream, partitionConsumerConfig(topology, partition, 1, undefined)))
            const consumer = yield* Effect.promise(() => jetstream(nc).consumers.get(stream, partitionConsumerName(partition, 1)))
            const m = yield* Effect.promise(() => consumer.next({ expires: 10_000 }))
            if (m === null) return yield* Effect.die(new Error("no delivery within 10 s"))
            return { seq: m.seq, at: Date.now() }
          }).pipe(Effect.provide(NatsLive(TEST_NATS_URL, "doomed-worker")))
        )
        // The real workers start at once; they take the other partitions now, this one only when its lease has run
        // out, and then get the delivery at once: the new owner's consumer starts where the dead owner's had got to.
        const elapsed = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(WorkersLive)
            yield* waitForTransactions(t.tenantId, 1)
            const at = Date.now()
            yield* waitForConsumerIdle(topology)
            return at - taken.at
          })
        )
        expect(elapsed).toBeGreaterThan(LEASE_MS - 1_000)
        expect(elapsed).toBeLessThan(LEASE_MS + 4_000)
        // The dead owner's consumer is gone; the new owner's (epoch 2) delivered the message once, and acked it.
        const info = yield* reconcilerInfo(topology)
        expect(info.consumers).not.toContain(partitionConsumerName(partition, 1))
        expect(info.consumers).toContain(partitionConsumerName(partition, 2))
        expect(info.delivered.stream_seq).toBe(taken.seq)
        expect(info.delivered.consumer_seq).toBe(1)
        expect(info.ack_floor.stream_seq).toBe(taken.seq)
        const txns = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(txns).toEqual([{ reference: sent.sessionId }])
        yield* assertLedgerInvariant
      })
    )
  }
)
