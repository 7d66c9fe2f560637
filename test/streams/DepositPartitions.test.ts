import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { type Delivery, DepositBus, type DepositEnvelope, encodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { publish } from "../../streams/Publish.js"
import { JetStreamDepositBusLive } from "../../streams/JetStreamDepositBus.js"
import { Nats, NatsLinkLive, NatsLive } from "../../streams/Nats.js"
import { depositPartition, ensureTopology, isolatedTopology, RECONCILER_DURABLE, streamNames, type Topology } from "../../streams/Topology.js"
import { testConfig } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

// The deposit bus by partition on the shared nats-server (2.9): how a partition changes hands (a consumer per
// ownership, starting where the previous one had got to) and how an earlier version's single shared durable is retired.

const NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"
const P = 2

/** NUBANs of tenant "ten" (test mode) in partition 0 and in partition 1 of 2. */
const nubanIn = (partition: number, skip = 0) => {
  let found = 0
  for (let i = 0; ; i++) {
    const nuban = String(9_930_000_000 + i)
    if (depositPartition("ten", "test", nuban, P) === partition && found++ === skip) return nuban
  }
}
const envelope = (n: number, accountNumber: string): DepositEnvelope => ({
  inboxId: n, tenantId: "ten", mode: "test", provider: "sandbox", reference: `ref-${n}`, accountNumber
})
const refOf = (d: Delivery) => (isDecoded(d.envelope) ? d.envelope.reference : "undecodable")

/** The bus on its own topology, with the test's own connection beside it; the topology is deleted at the end. */
const withBus = <A, E>(body: (t: Topology) => Effect.Effect<A, E, DepositBus | Nats>) =>
  Effect.gen(function* () {
    const t = isolatedTopology()
    const link = NatsLinkLive(NATS_URL, { onConnect: (nc) => ensureTopology(t).pipe(Effect.provideService(Nats, nc)) })
    const bus = JetStreamDepositBusLive(t).pipe(Layer.provide(link), Layer.provide(Layer.succeed(AppConfigTag, testConfig({ depositPartitions: P }))))
    yield* Effect.addFinalizer(() => Effect.ignore(deleteTopology(t)))
    yield* ensureTopology(t)
    return yield* body(t).pipe(Effect.provide(bus))
  }).pipe(Effect.scoped, Effect.provide(NatsLive(NATS_URL)))

/** The first `n` deliveries of partition `p` for ownership `epoch` (the reading stops after them). */
const take = (p: number, epoch: number, n: number) =>
  Effect.flatMap(DepositBus, (bus) =>
    Effect.gen(function* () {
      const got: Array<Delivery> = []
      const enough = yield* Deferred.make<void>()
      const reading = bus.partitioned!.open(p, epoch, (d) => {
        if (got.length < n) got.push(d)
        if (got.length === n) Deferred.unsafeDone(enough, Exit.void)
      })
      yield* Effect.raceFirst(reading, Deferred.await(enough))
      return got as ReadonlyArray<Delivery>
    }).pipe(
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`fewer than ${n} deliveries of partition ${p}`) })
    ))

/** Publishes through the bus once its link is up (it connects in the background). */
const busPublish = (envelopes: ReadonlyArray<DepositEnvelope>) =>
  Effect.flatMap(DepositBus, (bus) =>
    waitFor("the bus to take the publish (its link up)", bus.publish(envelopes).pipe(Effect.as(true)), { timeoutMs: 5_000, intervalMs: 50 })
  ).pipe(Effect.asVoid)

const consumerNames = (t: Topology) =>
  Effect.flatMap(Nats, (nc) => Effect.promise(async () => {
    const names: Array<string> = []
    for await (const ci of (await jetstreamManager(nc)).consumers.list(streamNames(t).deposits)) names.push(ci.name)
    return names.sort()
  }))

const ackFloor = (t: Topology, name: string) =>
  Effect.flatMap(Nats, (nc) => Effect.promise(async () => (await jetstreamManager(nc)).consumers.info(streamNames(t).deposits, name))).pipe(
    Effect.map((ci) => ci.ack_floor.stream_seq)
  )

describe("deposit partitions on JetStream (live nats-server)", () => {
  it.live("publish puts each account's deposits on its partition's subject; a partition delivers only its own, in stream order", () =>
    withBus((t) =>
      Effect.gen(function* () {
        const [a, b] = [nubanIn(0), nubanIn(1)]
        yield* busPublish(Array.from({ length: 10 }, (_, i) => envelope(i, i % 2 === 0 ? a : b)))
        const p0 = yield* take(0, 1, 5)
        const p1 = yield* take(1, 1, 5)
        expect(p0.map(refOf)).toEqual(["ref-0", "ref-2", "ref-4", "ref-6", "ref-8"])
        expect(p1.map(refOf)).toEqual(["ref-1", "ref-3", "ref-5", "ref-7", "ref-9"])
        expect(p0[0]!.subject).toBe(`${t.prefix}deposits.p0.ten.test.${a}`)
        expect(p0.map((d) => d.streamSeq)).toEqual([1, 3, 5, 7, 9])
        expect(yield* consumerNames(t)).toEqual(["reconciler-p0-1", "reconciler-p1-1"])
      })
    ), 60_000)

  it.live("a new ownership starts where the previous one had got to: what it held comes again first, in order; the previous one is gone", () =>
    withBus((t) =>
      Effect.gen(function* () {
        const a = nubanIn(0)
        const a2 = nubanIn(0, 1)
        yield* busPublish(Array.from({ length: 10 }, (_, i) => envelope(i, i % 3 === 0 ? a2 : a)))
        // Ownership 1 acks the first three and dies holding the next three (and whatever its pull had buffered).
        const held = yield* take(0, 1, 6)
        yield* Effect.forEach(held.slice(0, 3), (d) => d.ack, { discard: true })
        yield* waitFor("reconciler-p0-1's ack floor at 3", ackFloor(t, "reconciler-p0-1"), { until: (f) => f === 3, timeoutMs: 5_000, intervalMs: 50 })
        yield* busPublish(Array.from({ length: 4 }, (_, i) => envelope(10 + i, a)))

        // Ownership 2: the three held come again at once (not after ack_wait, not behind the newer ones), then the rest.
        const started = Date.now()
        const second = yield* take(0, 2, 11)
        expect(Date.now() - started).toBeLessThan(3_000)
        expect(second.map(refOf)).toEqual(Array.from({ length: 11 }, (_, i) => `ref-${i + 3}`))
        expect(second.map((d) => d.streamSeq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 4))
        expect(yield* consumerNames(t)).toEqual(["reconciler-p0-2"])

        // The earlier ownership cannot read the partition again: a later one exists.
        const stale = yield* Effect.flip(take(0, 1, 1))
        expect(stale).toMatchObject({ _tag: "PartitionSuperseded", partition: 0, epoch: 1 })

        // Ownership 2 acked nothing (its consumer's ack floor reads 0): ownership 3 starts where 2 was made to start,
        // not at the stream's first message.
        const third = yield* take(0, 3, 2)
        expect(third.map(refOf)).toEqual(["ref-3", "ref-4"])
        expect(yield* consumerNames(t)).toEqual(["reconciler-p0-3"])
      })
    ), 60_000)

  it.live("upgrade: the shared durable of earlier versions is read from where it had got to, the old subjects first, then deleted", () =>
    withBus((t) =>
      Effect.gen(function* () {
        const nc = yield* Nats
        const stream = streamNames(t).deposits
        const [a, b] = [nubanIn(0), nubanIn(1)]
        // An earlier version: deposits on deposits.<tenant>.<mode>.<NUBAN>, read by the one shared durable, which got
        // as far as the second message.
        const old = Array.from({ length: 6 }, (_, i) => envelope(i, i % 2 === 0 ? a : b))
        for (const e of old) yield* publish(`${t.prefix}deposits.ten.test.${e.accountNumber}`, encodeEnvelope(e), `old-${e.inboxId}`)
        yield* Effect.promise(async () => {
          await (await jetstreamManager(nc)).consumers.add(stream, { durable_name: RECONCILER_DURABLE, ack_policy: AckPolicy.Explicit, filter_subject: `${t.prefix}deposits.>` })
          const legacy = await jetstream(nc).consumers.get(stream, RECONCILER_DURABLE)
          for (let i = 0; i < 2; i++) await (await legacy.next({ expires: 5_000 }))!.ackAck()
        })
        // The upgraded API processes publish on the partitions' subjects meanwhile.
        yield* busPublish([envelope(10, a), envelope(11, b), envelope(12, a)])

        // Partition 0's first owner: its old-subject messages after the durable's floor, then its new ones.
        const p0 = yield* take(0, 1, 4)
        expect(p0.map(refOf)).toEqual(["ref-2", "ref-4", "ref-10", "ref-12"])
        expect(p0.slice(0, 2).map((d) => d.subject)).toEqual([`${t.prefix}deposits.ten.test.${a}`, `${t.prefix}deposits.ten.test.${a}`])
        // The shared durable stays while a partition has no consumer of its own...
        expect(yield* consumerNames(t)).toEqual([RECONCILER_DURABLE, "reconciler-p0-1"])
        const p1 = yield* take(1, 1, 3)
        expect(p1.map(refOf)).toEqual(["ref-3", "ref-5", "ref-11"])
        // ...and goes once every partition has one.
        expect(yield* consumerNames(t)).toEqual(["reconciler-p0-1", "reconciler-p1-1"])
        // The old subjects were read by an ordered replay (nothing to ack or keep alive), the rest by the consumer.
        expect(p0.map((d) => d.working === undefined)).toEqual([true, true, false, false])
        // A later owner of partition 0 reads on from the partition's consumer; the old subjects are not read again.
        const again = yield* take(0, 2, 2)
        expect(again.map(refOf)).toEqual(["ref-10", "ref-12"])
      })
    ), 60_000)
})
