import type { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Option, Schedule } from "effect"
import type { Reconciler, ReconcileResult } from "./Reconciler.js"
import type { Item, Owned, PartitionOwnership } from "./PartitionOwnership.js"
import { type Delivery, type DepositBusShape, type DepositEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { type Claim, LeaseLost } from "../../streams/PartitionLeases.js"
import type { MetricsShape } from "../../src/Metrics.js"
import { type OutageLog, outageOf } from "../../src/OutageLog.js"

const isLeaseLost = (e: unknown): e is LeaseLost => e instanceof LeaseLost

/**
 * How the reconciler applies what it took from the deposit bus: a batch in one transaction (fenced by its ownerships on
 * a partitioned bus), then each delivery acked, nak'd for redelivery, or recorded as poison and terminated.
 */
export const makeDeliveryApplier = (deps: {
  readonly bus: DepositBusShape
  readonly reconciler: Reconciler
  readonly sql: SqlClient.SqlClient
  /** Absent on a bus one process reads whole (the in-process bus). */
  readonly ownership: PartitionOwnership | undefined
  /** Counts reconciled deposits, once per committed batch. */
  readonly metrics: MetricsShape
  /** Postgres away: one warning and one recovery line, not a warning per deposit (src/OutageLog.ts). */
  readonly outages: OutageLog
}) => {
  const { bus, reconciler, sql, ownership, metrics, outages } = deps

  const fenceFor = (items: ReadonlyArray<Item>) => (ownership === undefined ? undefined : ownership.fenceFor(items))
  const dropLost = (lost: ReadonlyArray<Claim>, candidates: ReadonlyArray<Owned>) =>
    ownership === undefined ? Effect.void : ownership.dropLost(lost, candidates)

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

  const handle = (item: Item): Effect.Effect<void> => {
    const d = item.d
    if (item.owned && !item.owned.live) return Effect.void
    if (!isDecoded(d.envelope)) return recordPoison(d, "undecodable deposit message")
    const envelope = d.envelope
    return reconciler.reconcile(envelope, fenceFor([item])).pipe(
      Effect.retry({ schedule: retryInPlace, while: (e) => !isLeaseLost(e) }),
      Effect.exit,
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) {
          metrics.depositsReconciled.inc()
          return Effect.zipRight(outages.succeeded(), settle(d, envelope, exit.value))
        }
        if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
        const lost = Option.filter(Cause.failureOption(exit.cause), isLeaseLost)
        if (Option.isSome(lost)) return dropLost(lost.value.lost, item.owned ? [item.owned] : [])
        if (d.deliveryCount >= bus.maxDeliver) return recordPoison(d, `failed ${d.deliveryCount} deliveries: ${Cause.pretty(exit.cause).slice(0, 500)}`)
        const log = outageOf(exit.cause) === undefined ? Effect.logWarning(`deposit ${envelope.reference} failed; redelivering`, exit.cause) : outages.failed(exit.cause)
        return log.pipe(
          Effect.zipRight(d.nak(Math.min(30_000, 500 * 2 ** d.deliveryCount)))
        )
      })
    )
  }

  /**
   * What has queued up in a fiber is reconciled together: one transaction and one commit for the batch, each message
   * acked after that commit. If the batch fails as a whole, its deliveries go one by one through `handle`, so one bad
   * deposit is retried, nak'ed or recorded as poison on its own and never holds back the others. Deliveries of an
   * ownership that is no longer live are dropped (neither applied nor acked); when the fence finds one lost, the batch
   * runs again without its deliveries.
   */
  const handleBatch = (all: ReadonlyArray<Item>): Effect.Effect<void> => {
    const batch = all.filter((i) => !i.owned || i.owned.live)
    const decoded = batch.flatMap((i) => (isDecoded(i.d.envelope) ? [{ item: i, envelope: i.d.envelope }] : []))
    if (decoded.length <= 1) return Effect.forEach(batch, handle, { discard: true })
    return reconciler.reconcileBatch(decoded.map((d) => d.envelope), fenceFor(batch)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) {
          metrics.depositsReconciled.inc(decoded.length)
          return Effect.zipRight(outages.succeeded(), Effect.zipRight(
            Effect.forEach(decoded, ({ item, envelope }, i) => settle(item.d, envelope, exit.value[i]!), { discard: true }),
            Effect.forEach(batch.filter((i) => !isDecoded(i.d.envelope)), handle, { discard: true })
          ))
        }
        if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
        const lost = Option.filter(Cause.failureOption(exit.cause), isLeaseLost)
        if (Option.isSome(lost)) {
          return Effect.zipRight(dropLost(lost.value.lost, batch.flatMap((i) => (i.owned ? [i.owned] : []))), Effect.suspend(() => handleBatch(batch)))
        }
        return Effect.logDebug(`a batch of ${decoded.length} deposits failed; applying them one by one`, exit.cause).pipe(
          Effect.zipRight(Effect.forEach(batch, handle, { discard: true }))
        )
      })
    )
  }

  return { handleBatch } as const
}
