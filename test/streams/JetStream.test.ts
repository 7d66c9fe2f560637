import { AckPolicy, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import { nanos } from "@nats-io/nats-core"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Queue, Scope, Stream } from "effect"
import * as fc from "fast-check"
import net from "node:net"
import { consumeEach, replayFrom } from "../../streams/Consume.js"
import { deleteTopology, streamInfo } from "../../streams/JetStream.js"
import { publish, publishMany } from "../../streams/Publish.js"
import { Nats, NatsError, NatsLive } from "../../streams/Nats.js"
import {
  decodeToken,
  depositMsgId,
  depositPartition,
  depositPartitionFilter,
  depositSubject,
  ensureTopology,
  isolatedTopology,
  legacyDepositFilter,
  parseDepositSubject,
  parsePartitionConsumer,
  parseReconciledSubject,
  partitionConsumerConfig,
  partitionConsumerName,
  RECONCILER_ACK_WAIT_MS,
  reconciledFilter,
  reconciledSubject,
  streamNames,
  token,
  type Topology
} from "../../streams/Topology.js"

// The shared development server (nats-server 2.9.10 with JetStream). Every test gets its own random
// prefix, so its streams are private, and deletes them when it ends.
const NATS_URL = process.env.NATS_URL ?? "127.0.0.1:4222"

const withTopology = Effect.acquireRelease(
  Effect.sync(isolatedTopology).pipe(Effect.tap(ensureTopology)),
  (t) => Effect.ignore(deleteTopology(t))
)

/** Live clock (publish/replay timeouts must really elapse); the topology is torn down before the connection. */
const natsTest = <A, E>(name: string, body: (t: Topology) => Effect.Effect<A, E, Nats | Scope.Scope>) =>
  it.live(name, () =>
    Effect.flatMap(withTopology, body).pipe(Effect.scoped, Effect.provide(NatsLive(NATS_URL)))
  )

const jsm = Effect.flatMap(Nats, (nc) => Effect.promise(() => jetstreamManager(nc)))

/** Fails the test instead of hanging it if a stream never ends. */
const collect = <E, R>(s: Stream.Stream<JsMsg, E, R>) =>
  Stream.runCollect(s).pipe(
    Effect.map(Chunk.toArray),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("stream did not end") })
  )

/** A durable consumer's messages as a Stream: `consumeEach`'s callback onto a queue, the stream failing as it does. */
const consumed = (stream: string, durable: string, maxMessages: number): Stream.Stream<JsMsg, NatsError, Nats> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const queue = yield* Effect.acquireRelease(Queue.unbounded<JsMsg>(), Queue.shutdown)
      const reading = yield* Effect.forkScoped(consumeEach(stream, durable, { maxMessages }, (m) => void queue.unsafeOffer(m)))
      return Stream.fromQueue(queue, { maxChunkSize: maxMessages }).pipe(Stream.interruptWhen(Fiber.join(reading)))
    })
  )

const publishAll = (items: ReadonlyArray<readonly [subject: string, body: string]>) =>
  Effect.forEach(items, ([subject, body]) => publish(subject, body, `id-${body}`))

/** Deposit partitions in these tests. */
const P = 8

const AWKWARD_REFS = [
  "plain-ref_1",
  "has.dot",
  "star*",
  ">",
  "a.>",
  "white space",
  "tab\there",
  "new\nline",
  "",
  "%",
  "%25",
  "naïra ₦",
  "🙂",
  "..."
]

describe("Topology", () => {
  it("stream names are prefix-safe (no dots)", () => {
    expect(streamNames({ prefix: "" })).toEqual({ deposits: "DEPOSITS", reconciled: "RECONCILED" })
    expect(streamNames({ prefix: "t1a2b." })).toEqual({ deposits: "T1A2B_DEPOSITS", reconciled: "T1A2B_RECONCILED" })
  })

  it("builds subjects and message ids", () => {
    const t = { prefix: "t1." }
    expect(depositSubject(t, "ten_1", "test", "9930000737", P)).toBe("t1.deposits.p6.ten_1.test.9930000737")
    expect(reconciledSubject({ prefix: "" }, "ten_1", "live", "deposit.reconciled", "ord-7")).toBe("reconciled.ten_1.live.deposit%2Ereconciled.ord-7")
    expect(parseReconciledSubject(t, "t1.reconciled.ten_1.live.deposit%2Ereconciled.ord%2E7")).toEqual(
      Option.some({ tenantId: "ten_1", mode: "live", eventType: "deposit.reconciled", accountRef: "ord.7" })
    )
    expect(reconciledFilter(t, "ten_1", "live")).toBe("t1.reconciled.ten_1.live.*.*")
    expect(reconciledFilter(t, "ten_1", "live", { eventType: "deposit.reversed", accountRef: "a b" })).toBe("t1.reconciled.ten_1.live.deposit%2Ereversed.a%20b")
    expect(depositMsgId("ten_1", "live", "sandbox", "000013")).toBe("ten_1:live:sandbox:000013")
    expect(parseDepositSubject(t, "t1.deposits.p6.ten_1.test.9930000737")).toEqual(
      Option.some({ partition: 6, tenantId: "ten_1", mode: "test", accountNumber: "9930000737" })
    )
    // The subjects of earlier versions (no partition level) still parse.
    expect(parseDepositSubject(t, "t1.deposits.ten_1.test.9930000737")).toEqual(
      Option.some({ partition: null, tenantId: "ten_1", mode: "test", accountNumber: "9930000737" })
    )
    expect(parseDepositSubject(t, "t2.deposits.p6.ten_1.test.9930000737")).toEqual(Option.none())
    expect(parseDepositSubject(t, "t1.deposits.x6.ten_1.test.9930000737")).toEqual(Option.none())
    expect(depositPartitionFilter(t, 6)).toBe("t1.deposits.p6.*.*.*")
    expect(legacyDepositFilter(t)).toBe("t1.deposits.*.*.*")
    expect(partitionConsumerName(6, 12)).toBe("reconciler-p6-12")
    expect(parsePartitionConsumer("reconciler-p6-12")).toEqual(Option.some({ partition: 6, epoch: 12 }))
    expect(parsePartitionConsumer("reconciler")).toEqual(Option.none())
    expect(parsePartitionConsumer("reconciler-p06-1")).toEqual(Option.none())
  })

  it("an account key's partition is fixed (the same in every process and version) and accounts spread over all partitions", () => {
    // Pinned: publishers and the partitions' owners must agree, across processes and across upgrades.
    expect(["9930000737", "1000000001", "1000000002", "1000000003"].map((n) => depositPartition("ten_1", "test", n, P))).toEqual([6, 2, 7, 4])
    expect(depositPartition("ten", "live", "1000000002", P)).toBe(5)
    const counts = Array(P).fill(0) as Array<number>
    for (let i = 0; i < 8_000; i++) counts[depositPartition("ten_1", "test", String(9_930_000_000 + i), P)]!++
    for (const n of counts) expect(Math.abs(n - 1_000)).toBeLessThan(150)
    fc.assert(fc.property(fc.string(), fc.string(), fc.integer({ min: 1, max: 64 }), (tenant, nuban, partitions) => {
      const p = depositPartition(tenant, "test", nuban, partitions)
      expect(Number.isInteger(p) && p >= 0 && p < partitions).toBe(true)
    }))
  })

  it("encodes awkward accountRefs as one valid, distinct, reversible token", () => {
    const tokens = AWKWARD_REFS.map(token)
    for (const [i, tok] of tokens.entries()) {
      expect(tok).toMatch(/^[A-Za-z0-9_%-]+$/)
      expect(decodeToken(tok)).toBe(AWKWARD_REFS[i])
      const subject = reconciledSubject({ prefix: "p." }, "ten", "test", "deposit.reconciled", AWKWARD_REFS[i]!)
      expect(subject.split(".")).toHaveLength(6)
    }
    expect(new Set(tokens).size).toBe(tokens.length)
    expect(token("has.dot")).toBe("has%2Edot")
    expect(token("plain-ref_1")).toBe("plain-ref_1")
    expect(token("")).toBe("%")
  })

  it("token is injective and reversible for any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        const ta = token(a)
        expect(ta).toMatch(/^[A-Za-z0-9_%-]+$/)
        expect(decodeToken(ta)).toBe(a)
        if (a !== b) expect(token(b)).not.toBe(ta)
      }),
      { numRuns: 2000 }
    )
  })
})

describe("JetStream (live nats-server)", () => {
  natsTest("ensureTopology is idempotent, repairs a drifted config, and makes no consumer", (t) =>
    Effect.gen(function* () {
      const names = streamNames(t)
      yield* ensureTopology(t)
      yield* ensureTopology(t)
      const m = yield* jsm
      // Drift: someone shortened max_age by hand.
      const si = yield* Effect.promise(() => m.streams.info(names.deposits))
      yield* Effect.promise(() => m.streams.update(names.deposits, { ...si.config, max_age: nanos(3_600_000) }))
      yield* ensureTopology(t)

      for (const name of [names.deposits, names.reconciled]) {
        const { config } = yield* Effect.promise(() => m.streams.info(name))
        expect(config.max_age).toBe(nanos(30 * 24 * 3_600_000))
        expect(config.duplicate_window).toBe(nanos(600_000))
        expect(config.storage).toBe("file")
        expect(config.retention).toBe("limits")
        expect(config.discard).toBe("old")
      }
      expect((yield* Effect.promise(() => m.streams.info(names.reconciled))).config.subjects).toEqual([`${t.prefix}reconciled.*.*.*.*`])
      expect((yield* Effect.promise(() => m.streams.info(names.deposits))).config.subjects).toEqual([`${t.prefix}deposits.>`])
      // The partitions' consumers are their owners' to make (JetStreamDepositBus), never a connecting process's.
      expect(yield* Effect.promise(() => m.consumers.list(names.deposits).next())).toEqual([])
      expect(yield* streamInfo(names.deposits)).toEqual({ messages: 0, firstSeq: 0, lastSeq: 0 })
      // What an owner makes: a partition's consumer for one ownership.
      yield* Effect.promise(() => m.consumers.add(names.deposits, partitionConsumerConfig(t, 3, 7, 42)))
      const ci = yield* Effect.promise(() => m.consumers.info(names.deposits, "reconciler-p3-7"))
      expect(ci.config).toMatchObject({
        durable_name: "reconciler-p3-7",
        ack_policy: "explicit",
        deliver_policy: "by_start_sequence",
        opt_start_seq: 42,
        filter_subject: `${t.prefix}deposits.p3.*.*.*`,
        max_deliver: 8,
        ack_wait: nanos(RECONCILER_ACK_WAIT_MS),
        max_ack_pending: 1024
      })
      expect(partitionConsumerConfig(t, 3, 7, undefined)).toMatchObject({ deliver_policy: "all" })
      expect(partitionConsumerConfig(t, 3, 7, 1)).toMatchObject({ deliver_policy: "all" })
    })
  )

  natsTest("publishing the same msgId twice stores one message", (t) =>
    Effect.gen(function* () {
      const subject = depositSubject(t, "ten", "test", "9930000737", P)
      const id = depositMsgId("ten", "test", "sandbox", "000013251121100000000000000001")
      const first = yield* publish(subject, "a", id)
      const again = yield* publish(subject, "a", id)
      const other = yield* publish(subject, new TextEncoder().encode("b"), `${id}-2`)
      expect(first).toEqual({ seq: 1, duplicate: false })
      expect(again).toEqual({ seq: 1, duplicate: true })
      expect(other).toEqual({ seq: 2, duplicate: false })
      expect(yield* streamInfo(streamNames(t).deposits)).toEqual({ messages: 2, firstSeq: 1, lastSeq: 2 })
    })
  )

  natsTest("publishMany: pipelined in order, a repeat id is acked and stored once, an uncaptured subject is not acked", (t) =>
    Effect.gen(function* () {
      const subjects = ["1000000001", "1000000002", "1000000003"].map((n) => depositSubject(t, "ten", "test", n, P))
      const batch = Array.from({ length: 300 }, (_, i) => ({ subject: subjects[i % 3]!, data: `m${i}`, msgId: `pm-${i}` }))
      expect(yield* publishMany(batch)).toEqual(batch.map(() => true))
      expect(yield* streamInfo(streamNames(t).deposits)).toEqual({ messages: 300, firstSeq: 1, lastSeq: 300 })
      const stored = yield* collect(replayFrom(streamNames(t).deposits, { seq: 1 }))
      expect(stored.map((m) => m.string())).toEqual(batch.map((m) => m.data))

      // Repeats (within the duplicate window) are acked, so their rows get marked, but stored once; a subject no stream
      // captures gets no PubAck (its row is kept for the next pass) and does not hold up the others.
      const mixed = [batch[0]!, { subject: `${t.prefix}nowhere.ten.test.1`, data: "lost", msgId: "pm-x" }, { subject: subjects[0]!, data: "new", msgId: "pm-new" }]
      expect(yield* publishMany(mixed)).toEqual([true, false, true])
      expect(yield* streamInfo(streamNames(t).deposits)).toEqual({ messages: 301, firstSeq: 1, lastSeq: 301 })
    })
  )

  natsTest("awkward accountRefs publish to distinct one-token subjects", (t) =>
    Effect.gen(function* () {
      // Alternating event types: the type has its own level, so one filter_subject can pick a type.
      const typeOf = (i: number) => (i % 2 === 0 ? "deposit.reconciled" : "deposit.reversed")
      const subjects = AWKWARD_REFS.map((ref, i) => reconciledSubject(t, "ten", "live", typeOf(i), ref))
      yield* Effect.forEach(subjects, (s, i) => publish(s, AWKWARD_REFS[i]!, `evt-${i}`))
      const got = yield* collect(replayFrom(streamNames(t).reconciled, { seq: 1 }))
      expect(got.map((m) => m.subject)).toEqual(subjects)
      // Each lands exactly at depth 6, so `reconciled.<tenant>.<mode>.*.*` sees them all.
      const wildcard = yield* collect(replayFrom(streamNames(t).reconciled, { seq: 1 }, reconciledFilter(t, "ten", "live")))
      expect(wildcard.map((m) => decodeToken(m.subject.split(".").at(-1)!))).toEqual(AWKWARD_REFS)
      const reversals = yield* collect(replayFrom(streamNames(t).reconciled, { seq: 1 }, reconciledFilter(t, "ten", "live", { eventType: "deposit.reversed" })))
      expect(reversals.map((m) => m.string())).toEqual(AWKWARD_REFS.filter((_, i) => i % 2 === 1))
    })
  )

  natsTest("durable consumer: per-subject order, ack after processing, nak redelivers", (t) =>
    Effect.gen(function* () {
      const accounts = ["1000000001", "1000000002", "1000000003"]
      const items = Array.from({ length: 30 }, (_, i) => {
        const acct = accounts[i % 3]!
        return [depositSubject(t, "ten", "test", acct, P), `${acct}-${String(i).padStart(2, "0")}`] as const
      })
      yield* publishAll(items)
      const DURABLE = "test-durable"
      yield* Effect.flatMap(jsm, (m) => Effect.promise(() =>
        m.consumers.add(streamNames(t).deposits, { durable_name: DURABLE, ack_policy: AckPolicy.Explicit, filter_subject: `${t.prefix}deposits.>` })))

      const got = yield* collect(
        consumed(streamNames(t).deposits, DURABLE, 8).pipe(
          Stream.mapEffect((m) => Effect.as(Effect.promise(() => m.ackAck()), m)),
          Stream.take(30)
        )
      )
      for (const acct of accounts) {
        const bodies = got.filter((m) => m.subject.endsWith(acct)).map((m) => m.string())
        expect(bodies).toEqual(items.filter(([s]) => s.endsWith(acct)).map(([, b]) => b))
      }
      const m = yield* jsm
      const after = yield* Effect.promise(() => m.consumers.info(streamNames(t).deposits, DURABLE))
      expect(after.num_pending).toBe(0)
      expect(after.num_ack_pending).toBe(0)
      expect(after.ack_floor.stream_seq).toBe(30)

      // A failed attempt: nak the first delivery of "nak-me", which must come back as delivery 2.
      yield* publishAll([[depositSubject(t, "ten", "test", accounts[0]!, P), "nak-me"]])
      const seen = yield* collect(
        consumed(streamNames(t).deposits, DURABLE, 8).pipe(
          Stream.mapEffect((msg) =>
            msg.info.deliveryCount === 1 ? Effect.as(Effect.sync(() => msg.nak()), msg) : Effect.as(Effect.promise(() => msg.ackAck()), msg)
          ),
          Stream.take(2)
        )
      )
      expect(seen.map((msg) => [msg.string(), msg.info.deliveryCount, msg.redelivered])).toEqual([
        ["nak-me", 1, false],
        ["nak-me", 2, true]
      ])
    })
  )

  natsTest("replayFrom by sequence ends after the messages present at start", (t) =>
    Effect.gen(function* () {
      const stream = streamNames(t).deposits
      expect(yield* collect(replayFrom(stream, { seq: 1 }))).toEqual([]) // empty stream
      const a = depositSubject(t, "ten", "test", "1000000001", P)
      const b = depositSubject(t, "ten", "live", "1000000002", P)
      yield* publishAll([[a, "m1"], [b, "m2"], [a, "m3"], [b, "m4"], [b, "m5"]])

      const fromThree = yield* collect(replayFrom(stream, { seq: 3 }))
      expect(fromThree.map((m) => [m.seq, m.string()])).toEqual([[3, "m3"], [4, "m4"], [5, "m5"]])
      expect((yield* collect(replayFrom(stream, { seq: 0 }))).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5])
      expect(yield* collect(replayFrom(stream, { seq: 6 }))).toEqual([])

      // Filtered: the last matching message (seq 3) is before the stream's last_seq (5).
      const onlyA = yield* collect(replayFrom(stream, { seq: 1 }, a))
      expect(onlyA.map((m) => m.string())).toEqual(["m1", "m3"])
      expect(yield* collect(replayFrom(stream, { seq: 4 }, a))).toEqual([])

      // Messages published while a replay runs are not part of it, and it still ends.
      const during = yield* collect(
        replayFrom(stream, { seq: 1 }).pipe(
          Stream.tap((m) => (m.seq === 1 ? publishAll([[a, "late1"], [b, "late2"]]) : Effect.void))
        )
      )
      expect(during.map((m) => m.string())).toEqual(["m1", "m2", "m3", "m4", "m5"])
      expect(yield* streamInfo(stream)).toEqual({ messages: 7, firstSeq: 1, lastSeq: 7 })

      // Replays leave no consumers behind.
      const m = yield* jsm
      const consumers = yield* Effect.promise(() => m.consumers.list(stream).next())
      expect(consumers.map((c) => c.name)).toEqual([])
    })
  )

  natsTest("replayFrom by time ends and yields the messages from that time on", (t) =>
    Effect.gen(function* () {
      const stream = streamNames(t).deposits
      const a = depositSubject(t, "ten", "test", "1000000001", P)
      yield* publishAll([[a, "old1"], [a, "old2"]])
      yield* Effect.sleep("50 millis")
      const since = new Date()
      yield* Effect.sleep("50 millis")
      yield* publishAll([[a, "new1"], [a, "new2"], [a, "new3"]])

      const got = yield* collect(replayFrom(stream, { since }))
      expect(got.map((m) => m.string())).toEqual(["new1", "new2", "new3"])
      expect(yield* collect(replayFrom(stream, { since: new Date(Date.now() + 60_000) }))).toEqual([])
      expect((yield* collect(replayFrom(stream, { since: new Date(0) }))).length).toBe(5)
    })
  )

  it.live("connecting to an unreachable server fails fast with a NatsError", () =>
    Effect.gen(function* () {
      const started = Date.now()
      const error = yield* Effect.flip(Effect.scoped(Layer.build(NatsLive("127.0.0.1:1"))))
      expect(error).toBeInstanceOf(NatsError)
      expect(error._tag).toBe("NatsError")
      expect(error.message).toContain("cannot connect to NATS at 127.0.0.1:1")
      expect(Date.now() - started).toBeLessThan(2_000)
    })
  )

  it.live("publish fails within the bounded timeout while NATS is unreachable", () =>
    Effect.gen(function* () {
      const proxy = yield* tcpProxy(4222)
      const t = isolatedTopology()
      const outcome = yield* Effect.gen(function* () {
        yield* ensureTopology(t)
        const subject = depositSubject(t, "ten", "test", "1000000001", P)
        expect(yield* publish(subject, "before", "m-before")).toEqual({ seq: 1, duplicate: false })
        yield* proxy.cut // the connection drops; the client now retries every 500 ms forever
        const started = Date.now()
        const error = yield* Effect.flip(publish(subject, "during", "m-during"))
        return { error, elapsed: Date.now() - started }
      }).pipe(Effect.provide(NatsLive(`127.0.0.1:${proxy.port}`)))
      expect(outcome.error).toBeInstanceOf(NatsError)
      expect(outcome.error.message).toContain("cannot publish")
      expect(outcome.elapsed).toBeLessThan(3_500)
      yield* deleteTopology(t).pipe(Effect.provide(NatsLive(NATS_URL)))
    }).pipe(Effect.scoped)
  )
})

/** A TCP pass-through to the real server whose `cut` simulates an outage (connections dropped, port closed). */
const tcpProxy = (targetPort: number) =>
  Effect.acquireRelease(
    Effect.async<{ server: net.Server; sockets: Set<net.Socket> }>((resume) => {
      const sockets = new Set<net.Socket>()
      const server = net.createServer((client) => {
        const upstream = net.connect(targetPort, "127.0.0.1")
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on("error", () => s.destroy())
          s.on("close", () => sockets.delete(s))
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, sockets })))
    }),
    ({ server, sockets }) =>
      Effect.sync(() => {
        for (const s of sockets) s.destroy()
        server.close()
      })
  ).pipe(
    Effect.map(({ server, sockets }) => ({
      port: (server.address() as net.AddressInfo).port,
      cut: Effect.sync(() => {
        server.close()
        for (const s of sockets) s.destroy()
      })
    }))
  )
