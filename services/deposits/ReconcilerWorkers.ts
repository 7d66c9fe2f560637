import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Layer, Queue, Schedule, Stream } from "effect"
import { makeDeliveryApplier } from "./DeliveryApplier.js"
import { type Item, makePartitionOwnership } from "./PartitionOwnership.js"
import { Reconciler } from "./Reconciler.js"
import { AppConfigTag, DEFAULT_RECONCILER_LEASE_MS } from "../../src/Config.js"
import { tracingOn, withBatchSpan } from "../../src/TraceContext.js"
import { DepositBus, isDecoded, type PartitionedDeliveries } from "../../streams/DepositBus.js"
import { depositPartition } from "../../streams/Topology.js"
import { Metrics } from "../../src/Metrics.js"
import { outageLog } from "../../src/OutageLog.js"

const PARTITION_BUFFER = 1024
/**
 * The most deliveries one partition reconciles in one transaction. Smaller caps fell behind a receiver that answers right
 * after its commit (docs/performance.md, "Batch cap"); batches grow only when work queues up, so a quiet service still reconciles each deposit on its own.
 */
export const MAX_BATCH = 256

const make = Effect.gen(function* () {
  const bus = yield* DepositBus
  const reconciler = yield* Reconciler
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfigTag
  // Few fibers, each long-lived: what queues up in one is reconciled as one batch (one transaction), so fewer make
  // bigger batches. Too many make small batches, too few fall behind the receiver (docs/performance.md, "Batch size").
  const fibers = config.reconcilerPartitions

  // Ownership (partitioned bus only; the in-process bus is one process's whole): PartitionOwnership.ts.
  const partitioned: PartitionedDeliveries | undefined = bus.partitioned
  const leaseMs = config.reconcilerLeaseMs ?? DEFAULT_RECONCILER_LEASE_MS
  const ownership = partitioned === undefined ? undefined : yield* makePartitionOwnership(partitioned, leaseMs)

  // Applying: DeliveryApplier.ts.
  const { handleBatch } = makeDeliveryApplier({ bus, reconciler, sql, ownership, metrics: yield* Metrics, outages: yield* outageLog("reconciler", "deposit batches") })
  const consumerOutages = yield* outageLog("deposit consumer", "restarts")
  // Tracing on: a batch's span is a child of its first message's publisher (the webhook that brought it), linked to the others'.
  const traced = yield* tracingOn
  const traceBatch = (batch: ReadonlyArray<Item>) =>
    traced
      ? withBatchSpan("Reconciler.batch", batch.map((i) => i.d.traceparent), { kind: "consumer", attributes: { "messaging.system": bus.kind === "jetstream" ? "nats" : "in-process" } })(handleBatch(batch))
      : handleBatch(batch)

  /**
   * Every delivery this process holds (queued, or in its running batch) until it is settled. On a bus with an
   * ack_wait, each gets a progress ack every `progressEveryMs`: a slow batch is never redelivered meanwhile, while a
   * delivery whose process died comes back after one short ack_wait.
   */
  const held = new Set<Item>()
  if (bus.progressEveryMs !== undefined) {
    yield* Effect.sync(() => {
      for (const i of held) if (!i.owned || i.owned.live) i.d.working?.()
    }).pipe(Effect.repeat(Schedule.spaced(bus.progressEveryMs)), Effect.forkScoped)
  }
  const settled = (items: ReadonlyArray<Item>) =>
    Effect.sync(() => {
      for (const i of items) {
        held.delete(i)
        if (i.owned) i.owned.inFlight--
      }
    })

  // One queue and one fiber each; a fiber applies its queue a batch at a time, in order, so whatever goes into one
  // queue in stream order is applied in stream order.
  // On a partitioned bus each delivery is put on its queue from the bus's callback, so those queues are unbounded: what
  // a partition holds is bounded by the broker (the consumer's max_ack_pending). The in-process bus is read a chunk at a
  // time, with backpressure from a bounded queue.
  const queues = yield* Effect.forEach(Array.from({ length: fibers }), () => (partitioned === undefined ? Queue.bounded<Item>(PARTITION_BUFFER) : Queue.unbounded<Item>()))
  for (const q of queues) {
    yield* Queue.takeBetween(q, 1, MAX_BATCH).pipe(
      Effect.flatMap((chunk) => {
        const batch = Chunk.toReadonlyArray(chunk)
        return traceBatch(batch).pipe(Effect.ensuring(settled(batch)))
      }),
      Effect.forever,
      Effect.forkScoped
    )
  }

  if (ownership !== undefined) {
    // The partitioned bus: own some partitions (leases in Postgres), read only those.
    return yield* ownership.run(queues, held)
  }

  // One process reads the whole bus: keyed by account, so an account's deposits stay in one queue, in order.
  // A chunk at a time (whatever the bus has buffered): one offer per queue, not an effect per message.
  yield* bus.deliveries.pipe(
    Stream.runForEachChunk((chunk) => {
      const byQueue = queues.map((): Array<Item> => [])
      for (const d of chunk) {
        const e = d.envelope
        const q = isDecoded(e) ? depositPartition(e.tenantId, e.mode, e.accountNumber, fibers) : depositPartition(d.subject, "", "", fibers)
        const item: Item = { d, owned: undefined }
        byQueue[q]!.push(item)
        held.add(item)
      }
      return Effect.zipRight(consumerOutages.succeeded(), Effect.forEach(queues, (q, i) => {
        const items = byQueue[i]!
        return items.length === 0 ? Effect.void : Queue.offerAll(q, items)
      }, { discard: true }))
    }),
    Effect.tapErrorCause((c) => consumerOutages.failed(c)),
    Effect.retry(Schedule.spaced("1 second")),
    Effect.forkScoped
  )
  yield* Effect.logDebug(`reconciler running: ${fibers} fibers on the ${bus.kind} deposit bus`)
})

/**
 * The reconciler: consumes the deposit stream into per-account-key queues; acks after commit. On a partitioned bus
 * (JetStream) it reads only the partitions this process owns, by lease, so one account's deposits apply in stream order
 * across processes and through a crash (docs/deposits.md, "Partitions and owners").
 */
export const ReconcilerWorkersLive = Layer.scopedDiscard(make)
