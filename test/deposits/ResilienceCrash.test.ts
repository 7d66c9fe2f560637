import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import { Effect, Layer } from "effect"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { decodeEnvelope, type DepositEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { Nats } from "../../streams/Nats.js"
import { DEFAULT_DEPOSIT_PARTITIONS } from "../../src/Config.js"
import { depositPartition, partitionConsumerConfig, partitionConsumerName, streamNames, type Topology } from "../../streams/Topology.js"
import { WorkersLive } from "../../src/Services.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant } from "../support/Pipeline.js"
import { accountBalance, appTopology, reconcilerInfo, snapshot, TestNatsLive, waitForConsumerIdle } from "../support/Resilience.js"
import { waitFor } from "../support/Wait.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * Exactly ONE message of the account's deposit partition, from the consumer the partition's first owner reads
 * (`reconciler-p<N>-1`, made here as that owner makes it; the real workers, started later, take the partition at epoch
 * 1 and read the same consumer): a one-message pull, so nothing else is buffered and left un-acked behind our back.
 * Fails if none arrives within 5 s.
 */
const nextDelivery = (t: Topology, tenantId: string, nuban: string) =>
  Effect.gen(function* () {
    const nc = yield* Nats
    const stream = streamNames(t).deposits
    const partition = depositPartition(tenantId, "test", nuban, DEFAULT_DEPOSIT_PARTITIONS)
    yield* Effect.promise(async () => (await jetstreamManager(nc)).consumers.add(stream, partitionConsumerConfig(t, partition, 1, undefined)))
    const consumer = yield* Effect.promise(() => jetstream(nc).consumers.get(stream, partitionConsumerName(partition, 1)))
    const m = yield* Effect.promise(() => consumer.next({ expires: 5_000 }))
    if (m === null) return yield* Effect.die(new Error("no delivery within 5 s"))
    return m
  })

const envelopeOf = (m: JsMsg): DepositEnvelope => {
  const e = decodeEnvelope(m.string())
  if (!isDecoded(e)) throw new Error(`undecodable: ${m.string()}`)
  return e
}

/*
 * The app WITHOUT its workers: the test plays the reconciler worker by hand, crashes it between commit and ack, and
 * only then starts the real workers. Live clock (excludeTestServices).
 */
layer(makeTestApp({ workers: false }).pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "deposit pipeline resilience: crash between commit and ack",
  (it) => {
    it.effect("a crash between commit and ack redelivers the deposit as a no-op", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const reconciler = yield* Reconciler
        const topology = yield* appTopology
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "crash-1", "John Adeyemi", 200_000)
        const sent = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 75_000 })
        expect(sent.body.result).toBe("processed")

        // Delivery 1: the worker commits the deposit...
        const first = yield* nextDelivery(topology, t.tenantId, acct.nuban)
        expect(first.info.deliveryCount).toBe(1)
        expect(yield* reconciler.reconcile(envelopeOf(first))).toBe("reconciled")
        const committed = yield* snapshot
        expect(yield* accountBalance(t.tenantId, "crash-1")).toBe(75_000)
        // ...and "crashes" before acking. A dead process never acks, so JetStream redelivers the message once ack_wait
        // (RECONCILER_ACK_WAIT_MS) has passed. `nak()` is that same redelivery without the wait: the server learns only "not done".
        first.nak()

        // Delivery 2, by hand: the unique reference (and the reconciled inbox row) make it a no-op.
        const second = yield* nextDelivery(topology, t.tenantId, acct.nuban)
        expect(second.seq).toBe(first.seq)
        expect(second.info.deliveryCount).toBe(2)
        expect(second.redelivered).toBe(true)
        expect(yield* reconciler.reconcile(envelopeOf(second))).toBe("already-reconciled")
        expect(yield* snapshot).toEqual(committed)
        // Crash again, and let the real workers (ack after commit) take delivery 3.
        second.nak()

        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(WorkersLive)
            const info = yield* waitForConsumerIdle(topology)
            expect(info.ack_floor.stream_seq).toBeGreaterThanOrEqual(first.seq)
            expect(info.delivered.stream_seq).toBe(first.seq)
          })
        )
        expect(yield* snapshot).toEqual(committed)
        expect(yield* accountBalance(t.tenantId, "crash-1")).toBe(75_000)
        const txns = yield* sql<{ reference: string; reconciliationStatus: string }>`
          SELECT reference, reconciliation_status FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(txns).toEqual([{ reference: sent.sessionId, reconciliationStatus: "Underpaid" }])
        const events = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'deposit.reconciled'`
        expect(Number(events[0]!.n)).toBe(1)
        yield* assertLedgerInvariant
      })
    )

    it.effect("two workers racing on one delivery (redelivered while the first still runs) record it once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const reconciler = yield* Reconciler
        const topology = yield* appTopology
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "race-1", "John Adeyemi")
        const matched = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 33_000 })
        // An unknown NUBAN has no account row to lock: the unique key alone must hold the line.
        const unmatched = yield* sendSigned(t, { accountNumber: "0000000019", amountKobo: 44_000 })
        expect([matched.body.result, unmatched.body.result]).toEqual(["processed", "unmatched"])

        for (const [sent, nuban] of [[matched, acct.nuban], [unmatched, "0000000019"]] as const) {
          const m = yield* nextDelivery(topology, t.tenantId, nuban)
          const envelope = envelopeOf(m)
          expect(envelope.reference).toBe(sent.sessionId)
          // Ten concurrent attempts, each retried as the worker retries a failure in place.
          const results = yield* Effect.forEach(
            Array.from({ length: 10 }),
            () => reconciler.reconcile(envelope).pipe(Effect.retry({ times: 3 })),
            { concurrency: "unbounded" }
          )
          expect(results.filter((r) => r === "reconciled")).toHaveLength(1)
          expect(results.filter((r) => r === "already-reconciled")).toHaveLength(9)
          m.ack()
        }
        const txns = yield* sql<{ reference: string; status: string; reconciliationStatus: string }>`
          SELECT reference, status, reconciliation_status FROM transactions WHERE tenant_id = ${t.tenantId} ORDER BY id`
        expect(txns).toEqual([
          { reference: matched.sessionId, status: "Completed", reconciliationStatus: "Credited" },
          { reference: unmatched.sessionId, status: "PendingReview", reconciliationStatus: "Unmatched" }
        ])
        expect(yield* accountBalance(t.tenantId, "race-1")).toBe(33_000)
        yield* waitFor("no message awaiting an ack", reconcilerInfo(topology), { until: (i) => i.num_ack_pending === 0, timeoutMs: 30_000, intervalMs: 100 })
        yield* assertLedgerInvariant
      })
    )
  }
)
