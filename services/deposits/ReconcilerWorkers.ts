import { SqlClient } from "@effect/sql"
import { Cause, Chunk, Effect, Exit, Fiber, Layer, Option, Queue, Schedule, Stream } from "effect"
import { Reconciler, type ReconcileResult } from "./Reconciler.js"
import { AppConfigTag, DEFAULT_RECONCILER_LEASE_MS } from "../../src/Config.js"
import { type Delivery, DepositBus, type DepositEnvelope, isDecoded, type PartitionedDeliveries } from "../../streams/DepositBus.js"
import { type Claim, LeaseLost, makePartitionLeases, type PartitionLeases } from "../../streams/PartitionLeases.js"
import { depositPartition } from "../../streams/Topology.js"

const PARTITION_BUFFER = 1024
/**
 * The most deliveries one partition reconciles in one transaction. Smaller caps fell behind a receiver that answers right
 * after its commit (docs/performance.md, "Batch cap"); batches grow only when work queues up, so a quiet service still reconciles each deposit on its own.
 */
export const MAX_BATCH = 256

/**
 * One ownership of a partition of a partitioned bus, in this process: live until the lease is lost or handed back.
 * `inFlight` counts its deliveries taken from the bus and not yet settled (acked, nak'd, terminated or dropped).
 */
interface Owned {
  readonly claim: Claim
  live: boolean
  releasing: boolean
  inFlight: number
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/** A delivery and, on a partitioned bus, the ownership it came under. */
interface Item {
  readonly d: Delivery
  readonly owned: Owned | undefined
}

const make = Effect.gen(function* () {
  const bus = yield* DepositBus
  const reconciler = yield* Reconciler
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfigTag
  // Few fibers, each long-lived: what queues up in one is reconciled as one batch (one transaction), so fewer make
  // bigger batches. Too many make small batches, too few fall behind the receiver (docs/performance.md, "Batch size").
  const fibers = config.reconcilerPartitions

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

  // ---- Ownership (partitioned bus only; the in-process bus is one process's whole) ----

  /** The partitions this process owns now, by partition. */
  const owned = new Map<number, Owned>()
  const partitioned: PartitionedDeliveries | undefined = bus.partitioned
  const leaseMs = config.reconcilerLeaseMs ?? DEFAULT_RECONCILER_LEASE_MS
  const leases: PartitionLeases | undefined = partitioned === undefined
    ? undefined
    : yield* makePartitionLeases({ key: partitioned.key, partitions: partitioned.count, leaseMs })
  if (leases !== undefined) {
    const theLeases = leases
    // Added before anything is forked, so it runs after every fiber has stopped (nothing of ours is applying any more):
    // the leases go back at once rather than making the next owner wait for them to run out.
    yield* Effect.addFinalizer(() =>
      theLeases.leave.pipe(Effect.timeout("3 seconds"), Effect.catchAllCause((c) => Effect.logDebug("could not hand the deposit partitions back; they will expire", c)))
    )
  }

  /**
   * Stops an ownership at once: its deliveries still queued are dropped unapplied and unacked (the next owner's consumer
   * starts before them), and it stops pulling.
   */
  const drop = (o: Owned) =>
    Effect.suspend(() => {
      o.live = false
      if (owned.get(o.claim.partition) === o) owned.delete(o.claim.partition)
      return o.fiber ? Effect.asVoid(Fiber.interruptFork(o.fiber)) : Effect.void
    })

  /** Drops the ownerships (among `candidates` and those owned now) whose claims were lost. */
  const dropLost = (lost: ReadonlyArray<Claim>, candidates: ReadonlyArray<Owned> = []) =>
    Effect.forEach([...new Set([...owned.values(), ...candidates])], (o) => {
      if (!o.live || !lost.some((c) => c.partition === o.claim.partition && c.epoch === o.claim.epoch)) return Effect.void
      return drop(o).pipe(Effect.zipRight(Effect.logWarning(`lost deposit partition ${o.claim.partition} (epoch ${o.claim.epoch}) to another reconciler`)))
    }, { discard: true })

  /** The fence for a batch's ownerships: run inside its transaction (see PartitionLeases.fence). */
  const fenceFor = (items: ReadonlyArray<Item>) => {
    if (leases === undefined) return undefined
    const claims = [...new Set(items.flatMap((i) => (i.owned ? [i.owned] : [])))].map((o) => o.claim)
    return claims.length === 0 ? undefined : leases.fence(claims)
  }

  const isLeaseLost = (e: unknown): e is LeaseLost => e instanceof LeaseLost

  // ---- Applying ----

  const handle = (item: Item): Effect.Effect<void> => {
    const d = item.d
    if (item.owned && !item.owned.live) return Effect.void
    if (!isDecoded(d.envelope)) return recordPoison(d, "undecodable deposit message")
    const envelope = d.envelope
    return reconciler.reconcile(envelope, fenceFor([item])).pipe(
      Effect.retry({ schedule: retryInPlace, while: (e) => !isLeaseLost(e) }),
      Effect.exit,
      Effect.flatMap((exit) => {
        if (Exit.isSuccess(exit)) return settle(d, envelope, exit.value)
        if (Cause.isInterruptedOnly(exit.cause)) return Effect.void
        const lost = Option.filter(Cause.failureOption(exit.cause), isLeaseLost)
        if (Option.isSome(lost)) return dropLost(lost.value.lost, item.owned ? [item.owned] : [])
        if (d.deliveryCount >= bus.maxDeliver) return recordPoison(d, `failed ${d.deliveryCount} deliveries: ${Cause.pretty(exit.cause).slice(0, 500)}`)
        return Effect.logWarning(`deposit ${envelope.reference} failed; redelivering`, exit.cause).pipe(
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
          return Effect.zipRight(
            Effect.forEach(decoded, ({ item, envelope }, i) => settle(item.d, envelope, exit.value[i]!), { discard: true }),
            Effect.forEach(batch.filter((i) => !isDecoded(i.d.envelope)), handle, { discard: true })
          )
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
  const queues = yield* Effect.forEach(Array.from({ length: fibers }), () => Queue.bounded<Item>(PARTITION_BUFFER))
  for (const q of queues) {
    yield* Queue.takeBetween(q, 1, MAX_BATCH).pipe(
      Effect.flatMap((chunk) => {
        const batch = Chunk.toReadonlyArray(chunk)
        return handleBatch(batch).pipe(Effect.ensuring(settled(batch)))
      }),
      Effect.forever,
      Effect.forkScoped
    )
  }

  if (partitioned === undefined || leases === undefined) {
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
        return Effect.forEach(queues, (q, i) => {
          const items = byQueue[i]!
          return items.length === 0 ? Effect.void : Queue.offerAll(q, items)
        }, { discard: true })
      }),
      Effect.tapErrorCause((c) => Effect.logError("deposit consumer stopped; restarting", c)),
      Effect.retry(Schedule.spaced("1 second")),
      Effect.forkScoped
    )
    yield* Effect.logDebug(`reconciler running: ${fibers} fibers on the ${bus.kind} deposit bus`)
    return
  }

  // ---- The partitioned bus: own some partitions (leases in Postgres), read only those ----
  const theLeases = leases
  const scope = yield* Effect.scope

  /**
   * Reads an owned partition into its fiber's queue (partition mod RECONCILER_PARTITIONS): the partition's messages
   * arrive in stream order and stay in one queue, so they are applied in stream order, one batch at a time.
   */
  const read = (o: Owned): Effect.Effect<void> =>
    partitioned.open(o.claim.partition, o.claim.epoch).pipe(
      Stream.runForEachChunk((chunk) => {
        if (!o.live) return Effect.interrupt
        const items = Chunk.toReadonlyArray(chunk).map((d): Item => ({ d, owned: o }))
        for (const i of items) held.add(i)
        o.inFlight += items.length
        return Queue.offerAll(queues[o.claim.partition % fibers]!, items)
      }),
      Effect.catchTag("PartitionSuperseded", () => dropLost([o.claim], [o])),
      Effect.tapErrorCause((c) => Effect.logError(`deposit partition ${o.claim.partition}: consumer stopped; restarting`, c)),
      Effect.retry({ schedule: Schedule.spaced("1 second"), while: () => o.live }),
      Effect.catchAllCause(() => Effect.void)
    )

  const start = (claim: Claim) =>
    Effect.gen(function* () {
      const o: Owned = { claim, live: true, releasing: false, inFlight: 0, fiber: undefined }
      owned.set(claim.partition, o)
      o.fiber = yield* Effect.forkIn(read(o), scope)
      yield* Effect.logInfo(`reconciling deposit partition ${claim.partition} (epoch ${claim.epoch})`)
    })

  /** Hands a partition back: stop pulling, let what it holds be applied and acked (bounded), then release the lease. */
  const handBack = (o: Owned) =>
    Effect.gen(function* () {
      o.releasing = true
      if (o.fiber) yield* Fiber.interrupt(o.fiber)
      for (let waited = 0; o.inFlight > 0 && o.live && waited < leaseMs; waited += 50) yield* Effect.sleep("50 millis")
      yield* drop(o)
      for (const i of held) if (i.owned === o) held.delete(i)
      yield* theLeases.release(o.claim)
      yield* Effect.logInfo(`handed deposit partition ${o.claim.partition} back (epoch ${o.claim.epoch})`)
    }).pipe(Effect.catchAllCause((c) => Effect.logWarning(`could not hand deposit partition ${o.claim.partition} back; its lease will expire`, c)))

  /**
   * Every third of a lease: renew, drop what was lost, then take the fair share (ceil(partitions / processes alive)) of
   * what is free, or hand the surplus back when another process has joined. Not while the bus is unreachable: a process
   * that cannot read its partitions lets its leases run out (and stops counting as alive), so the processes that can
   * read them take them over; should nobody have, its next beat renews them.
   */
  const tick = Effect.gen(function* () {
    if (!(yield* partitioned.connected)) return false
    const { alive, held: renewed } = yield* theLeases.beat
    const still = new Set(renewed.map((c) => `${c.partition}:${c.epoch}`))
    yield* dropLost([...owned.values()].filter((o) => !still.has(`${o.claim.partition}:${o.claim.epoch}`)).map((o) => o.claim))
    const target = Math.ceil(partitioned.count / Math.max(1, alive))
    const keeping = [...owned.values()].filter((o) => !o.releasing).sort((a, b) => a.claim.partition - b.claim.partition)
    if (keeping.length > target) {
      for (const o of keeping.slice(target)) yield* Effect.forkIn(handBack(o), scope)
    } else if (keeping.length < target) {
      yield* Effect.forEach(yield* theLeases.acquire(target - keeping.length), start, { discard: true })
    }
    return true
  })
  // Every third of a lease; while the bus is unreachable (as at start-up, until the link is up) it looks again soon.
  const every = Math.max(100, Math.floor(leaseMs / 3))
  yield* tick.pipe(
    Effect.catchAllCause((c) => Effect.as(Effect.logWarning("could not renew or take deposit partitions; trying again", c), true)),
    Effect.flatMap((ran) => Effect.sleep(ran ? every : 100)),
    Effect.forever,
    Effect.forkScoped
  )
  yield* Effect.logDebug(`reconciler running: ${fibers} fibers, partitions of ${partitioned.count} owned by lease (${leaseMs} ms)`)
})

/**
 * The reconciler: consumes the deposit stream into per-account-key queues; acks after commit. On a partitioned bus
 * (JetStream) it reads only the partitions this process owns, by lease, so one account's deposits apply in stream order
 * across processes and through a crash (docs/deposits.md, "Partitions and owners").
 */
export const ReconcilerWorkersLive = Layer.scopedDiscard(make)
