import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { jetstream } from "@nats-io/jetstream"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { WorkersLive } from "../../src/Services.js"
import { Nats, NatsLive } from "../../streams/Nats.js"
import { RECONCILER_ACK_WAIT_MS, RECONCILER_DURABLE, streamNames } from "../../streams/Topology.js"
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

layer(makeTestApp({ workers: false }).pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "progress acks: a delivery whose process died",
  (it) => {
    it.effect(`is redelivered after about ack_wait (${RECONCILER_ACK_WAIT_MS / 1000} s)`, () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const topology = yield* appTopology
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "dead-1", "John Adeyemi")
        const sent = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 54_321 })
        expect(sent.body.result).toBe("processed")
        // A "process" takes the delivery on its own connection and dies with it: no ack, no nak, no progress.
        const taken = yield* Effect.scoped(
          Effect.gen(function* () {
            const nc = yield* Nats
            const consumer = yield* Effect.promise(() => jetstream(nc).consumers.get(streamNames(topology).deposits, RECONCILER_DURABLE))
            const m = yield* Effect.promise(() => consumer.next({ expires: 10_000 }))
            if (m === null) return yield* Effect.die(new Error("no delivery within 10 s"))
            return { seq: m.seq, at: Date.now() }
          }).pipe(Effect.provide(NatsLive(TEST_NATS_URL, "doomed-worker")))
        )
        // The real workers start at once, and get it only when ack_wait has run out.
        const elapsed = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(WorkersLive)
            yield* waitForTransactions(t.tenantId, 1)
            const at = Date.now()
            yield* waitForConsumerIdle(topology)
            return at - taken.at
          })
        )
        expect(elapsed).toBeGreaterThan(RECONCILER_ACK_WAIT_MS - 1_000)
        expect(elapsed).toBeLessThan(RECONCILER_ACK_WAIT_MS + 4_000)
        const info = yield* reconcilerInfo(topology)
        // Two deliveries of the one message: the dead one and the redelivery.
        expect(info.delivered.stream_seq).toBe(taken.seq)
        expect(info.delivered.consumer_seq).toBe(2)
        expect(info.ack_floor.stream_seq).toBe(taken.seq)
        const txns = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(txns).toEqual([{ reference: sent.sessionId }])
        yield* assertLedgerInvariant
      })
    )
  }
)
