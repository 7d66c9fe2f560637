import { Effect, Fiber, type Queue, Runtime, Schedule } from "effect"
import type { Delivery, PartitionedDeliveries } from "../../streams/DepositBus.js"
import { type Claim, makePartitionLeases } from "../../streams/PartitionLeases.js"
import { outageLog } from "../../src/OutageLog.js"

/**
 * One ownership of a partition of a partitioned bus, in this process: live until the lease is lost or handed back.
 * `inFlight` counts its deliveries taken from the bus and not yet settled (acked, nak'd, terminated or dropped).
 */
export interface Owned {
  readonly claim: Claim
  live: boolean
  releasing: boolean
  inFlight: number
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/** A delivery and, on a partitioned bus, the ownership it came under. */
export interface Item {
  readonly d: Delivery
  readonly owned: Owned | undefined
}

export type PartitionOwnership = Effect.Effect.Success<ReturnType<typeof makePartitionOwnership>>

/**
 * The reconciler's ownership of a partitioned bus (JetStream): some partitions, by lease in Postgres, read only while
 * owned (docs/deposits.md, "Partitions and owners"). `run` takes and reads partitions into the reconciler's queues.
 */
export const makePartitionOwnership = (partitioned: PartitionedDeliveries, leaseMs: number) =>
  Effect.gen(function* () {
    // Postgres or NATS away: one warning per component and one recovery line (src/OutageLog.ts), not one per beat.
    const leaseOutages = yield* outageLog("partition leases", "lease beats")
    const readOutages = yield* outageLog("deposit partitions", "partition consumers")
    /** The partitions this process owns now, by partition. */
    const owned = new Map<number, Owned>()
    const leases = yield* makePartitionLeases({ key: partitioned.key, partitions: partitioned.count, leaseMs })
    // Added before anything is forked, so it runs after every fiber has stopped (nothing of ours is applying any more):
    // the leases go back at once rather than making the next owner wait for them to run out.
    yield* Effect.addFinalizer(() =>
      leases.leave.pipe(Effect.timeout("3 seconds"), Effect.catchAllCause((c) => Effect.logDebug("could not hand the deposit partitions back; they will expire", c)))
    )

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
      const claims = [...new Set(items.flatMap((i) => (i.owned ? [i.owned] : [])))].map((o) => o.claim)
      return claims.length === 0 ? undefined : leases.fence(claims)
    }

    /**
     * Owns some partitions (leases in Postgres) and reads only those, each into its fiber's queue (partition mod the
     * number of queues); `held` is every delivery the reconciler holds until it is settled.
     */
    const run = (queues: ReadonlyArray<Queue.Queue<Item>>, held: Set<Item>) =>
      Effect.gen(function* () {
        const fibers = queues.length
        const scope = yield* Effect.scope
        const runtime = yield* Effect.runtime<never>()

        /**
         * Reads an owned partition into its fiber's queue (partition mod RECONCILER_PARTITIONS): the partition's messages
         * arrive in stream order and stay in one queue, so they are applied in stream order, one batch at a time. Each
         * goes on the queue from the bus's callback (an unbounded queue: the broker's max_ack_pending bounds what a
         * partition holds), with no stream between (docs/performance.md, "Consumer").
         */
        const read = (o: Owned): Effect.Effect<void> => {
          const queue = queues[o.claim.partition % fibers]!
          // After a failure, the first delivery again ends this partition's consumer outage (one recovery line).
          let recovering = false
          const deliver = (d: Delivery) => {
            if (!o.live) return
            const item: Item = { d, owned: o }
            held.add(item)
            o.inFlight++
            queue.unsafeOffer(item)
            if (recovering) {
              recovering = false
              Runtime.runFork(runtime)(readOutages.succeeded(`partition ${o.claim.partition}`))
            }
          }
          return partitioned.open(o.claim.partition, o.claim.epoch, deliver).pipe(
            Effect.catchTag("PartitionSuperseded", () => dropLost([o.claim], [o])),
            Effect.tapErrorCause((c) => Effect.zipRight(Effect.sync(() => { recovering = true }), readOutages.failed(c, `partition ${o.claim.partition}`))),
            Effect.retry({ schedule: Schedule.spaced("1 second"), while: () => o.live }),
            Effect.catchAllCause(() => Effect.void)
          )
        }

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
            yield* leases.release(o.claim)
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
          const { alive, held: renewed } = yield* leases.beat
          const still = new Set(renewed.map((c) => `${c.partition}:${c.epoch}`))
          yield* dropLost([...owned.values()].filter((o) => !still.has(`${o.claim.partition}:${o.claim.epoch}`)).map((o) => o.claim))
          const target = Math.ceil(partitioned.count / Math.max(1, alive))
          const keeping = [...owned.values()].filter((o) => !o.releasing).sort((a, b) => a.claim.partition - b.claim.partition)
          if (keeping.length > target) {
            for (const o of keeping.slice(target)) yield* Effect.forkIn(handBack(o), scope)
          } else if (keeping.length < target) {
            yield* Effect.forEach(yield* leases.acquire(target - keeping.length), start, { discard: true })
          }
          return true
        })
        // Every third of a lease; while the bus is unreachable (as at start-up, until the link is up) it looks again soon.
        const every = Math.max(100, Math.floor(leaseMs / 3))
        yield* tick.pipe(
          Effect.tap((ran) => (ran ? leaseOutages.succeeded() : Effect.void)),
          Effect.catchAllCause((c) => Effect.as(leaseOutages.failed(c), true)),
          Effect.flatMap((ran) => Effect.sleep(ran ? every : 100)),
          Effect.forever,
          Effect.forkScoped
        )
        yield* Effect.logDebug(`reconciler running: ${fibers} fibers, partitions of ${partitioned.count} owned by lease (${leaseMs} ms)`)
      })

    return { dropLost, fenceFor, run } as const
  })
