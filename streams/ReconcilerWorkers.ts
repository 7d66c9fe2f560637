import { SqlClient } from "@effect/sql"
import { Cause, Chunk, Effect, Exit, Layer, Queue, Schedule, Stream } from "effect"
import { Reconciler, type ReconcileResult } from "../services/deposits/Reconciler.js"
import { AppConfigTag } from "../src/Config.js"
import { type Delivery, DepositBus, type DepositEnvelope, isDecoded } from "./DepositBus.js"

const PARTITION_BUFFER = 1024
/**
 * The most deliveries one partition reconciles in one transaction. Smaller caps fell behind a receiver that answers right
 * after its commit (docs/performance.md, "Batch cap"); batches grow only when work queues up, so a quiet service still reconciles each deposit on its own.
 */
export const MAX_BATCH = 256

/** FNV-1a of the account key: one account key always lands on the same partition, so its deposits apply in order. */
const partitionOf = (key: string, partitions: number) => {
  let h = 2166136261
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619)
  return (h >>> 0) % partitions
}

const make = Effect.gen(function* () {
  const bus = yield* DepositBus
  const reconciler = yield* Reconciler
  const sql = yield* SqlClient.SqlClient
  // Few partitions, each a long-lived fiber: what queues up in one is reconciled as one batch (one transaction), so
  // fewer partitions make bigger batches. Too many make small batches, too few fall
  // behind the receiver (docs/performance.md, "Batch size").
  const partitions = (yield* AppConfigTag).reconcilerPartitions

  const recordPoison = (d: Delivery, reason: string) =>
    sql`INSERT INTO poison_messages ${sql.insert({
      source: `deposits:${bus.kind}`, subject: d.subject, streamSeq: d.streamSeq, reason,
      payload: isDecoded(d.envelope) ? JSON.stringify(d.envelope) : d.envelope.undecodable
    })}`.pipe(
      Effect.zipRight(isDecoded(d.envelope)
        ? Effect.asVoid(sql`UPDATE inbound_events SET gave_up_at = now() WHERE id = ${d.envelope.inboxId} AND reconciled_at IS NULL`)
        : Effect.void),
      Effect.zipRight(Effect.logError(`deposit message terminated as poison: ${reason}`, { subject: d.subject, seq: d.streamSeq })),
      Effect.zipRight(d.term),
      Effect.catchAllCause((c) => Effect.logError("could not record a poison message; leaving it for redelivery", c))
    )

  // Transient failures are retried in place first, so one account's later deposits do not overtake an earlier one.
  const retryInPlace = Schedule.exponential("50 millis").pipe(Schedule.intersect(Schedule.recurs(3)))

  /** After a reconcile: ack, or, when its inbox row does not exist, record the message as poison. */
  const settle = (d: Delivery, envelope: DepositEnvelope, result: ReconcileResult) =>
    result === "missing-inbox-row" ? recordPoison(d, `no inbox row ${envelope.inboxId} for ${envelope.reference}`) : d.ack

  const handle = (d: Delivery): Effect.Effect<void> => {
    if (!isDecoded(d.envelope)) return recordPoison(d, "undecodable deposit message")
    const envelope = d.envelope
    return reconciler.reconcile(envelope).pipe(
      Effect.retry(retryInPlace),
      Effect.exit,
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) return settle(d, envelope, exit.value)
        if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
        if (d.deliveryCount >= bus.maxDeliver) return recordPoison(d, `failed ${d.deliveryCount} deliveries: ${Cause.pretty(exit.cause).slice(0, 500)}`)
        return Effect.logWarning(`deposit ${envelope.reference} failed; redelivering`, exit.cause).pipe(
          Effect.zipRight(d.nak(Math.min(30_000, 500 * 2 ** d.deliveryCount)))
        )
      })
    )
  }

  /**
   * What has queued up in a partition is reconciled together: one transaction and one commit for the batch, each
   * message acked after that commit. If the batch fails as a whole, its deliveries go one by one through `handle`,
   * so one bad deposit is retried, nak'ed or recorded as poison on its own and never holds back the others.
   */
  const handleBatch = (batch: ReadonlyArray<Delivery>): Effect.Effect<void> => {
    const decoded = batch.flatMap((d) => (isDecoded(d.envelope) ? [{ delivery: d, envelope: d.envelope }] : []))
    if (decoded.length <= 1) return Effect.forEach(batch, handle, { discard: true })
    return reconciler.reconcileBatch(decoded.map((d) => d.envelope)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) {
          return Effect.zipRight(
            Effect.forEach(decoded, ({ delivery, envelope }, i) => settle(delivery, envelope, exit.value[i]!), { discard: true }),
            Effect.forEach(batch.filter((d) => !isDecoded(d.envelope)), handle, { discard: true })
          )
        }
        if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
        return Effect.logDebug(`a batch of ${decoded.length} deposits failed; applying them one by one`, exit.cause).pipe(
          Effect.zipRight(Effect.forEach(batch, handle, { discard: true }))
        )
      })
    )
  }

  /**
   * Every delivery a partition holds (queued, or in its running batch) until it is settled. On a bus with an
   * ack_wait, each gets a progress ack every `progressEveryMs`: a slow batch is never redelivered to another process
   * meanwhile, while a delivery whose process died is redelivered after one short ack_wait.
   */
  const held = new Set<Delivery>()
  if (bus.progressEveryMs !== undefined) {
    yield* Effect.sync(() => {
      for (const d of held) d.working?.()
    }).pipe(Effect.repeat(Schedule.spaced(bus.progressEveryMs)), Effect.forkScoped)
  }

  const queues = yield* Effect.forEach(Array.from({ length: partitions }), () => Queue.bounded<Delivery>(PARTITION_BUFFER))
  for (const q of queues) {
    yield* Queue.takeBetween(q, 1, MAX_BATCH).pipe(
      Effect.flatMap((chunk) => {
        const batch = Chunk.toReadonlyArray(chunk)
        return handleBatch(batch).pipe(Effect.ensuring(Effect.sync(() => batch.forEach((d) => held.delete(d)))))
      }),
      Effect.forever,
      Effect.forkScoped
    )
  }
  // A chunk at a time (whatever the bus has buffered): one offer per partition, not an effect per message.
  yield* bus.deliveries.pipe(
    Stream.runForEachChunk((chunk) => {
      const byPartition = queues.map((): Array<Delivery> => [])
      for (const d of chunk) {
        const key = isDecoded(d.envelope) ? `${d.envelope.tenantId}:${d.envelope.mode}:${d.envelope.accountNumber}` : d.subject
        byPartition[partitionOf(key, partitions)]!.push(d)
        held.add(d)
      }
      return Effect.forEach(queues, (q, i) => {
        const ds = byPartition[i]!
        return ds.length === 0 ? Effect.void : Queue.offerAll(q, ds)
      }, { discard: true })
    }),
    Effect.tapErrorCause((c) => Effect.logError("deposit consumer stopped; restarting", c)),
    Effect.retry(Schedule.spaced("1 second")),
    Effect.forkScoped
  )
  yield* Effect.logDebug(`reconciler running: ${partitions} partitions on the ${bus.kind} deposit bus`)
})

/** The reconciler: consumes the deposit stream into per-account-key partitions; acks after commit. */
export const ReconcilerWorkersLive = Layer.scopedDiscard(make)
