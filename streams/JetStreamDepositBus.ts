import { type ConsumerInfo, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type JsMsg } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/nats-core"
import { Effect, Layer, Option, Stream } from "effect"
import { AppConfigTag, DEFAULT_DEPOSIT_PARTITIONS } from "../src/Config.js"
import { tracingOn } from "../src/TraceContext.js"
import { consumeEach, replayFrom } from "./Consume.js"
import { publishMany } from "./Publish.js"
import { Nats, NatsError, NatsLink, tryNats } from "./Nats.js"
import { BusError, decodeEnvelope, DepositBus, encodeEnvelope, isDecoded, PartitionSuperseded, type Delivery } from "./DepositBus.js"
import {
  depositMsgId,
  depositPartition,
  depositSubject,
  legacyDepositFilter,
  parseDepositSubject,
  parsePartitionConsumer,
  partitionConsumerConfig,
  partitionConsumerName,
  RECONCILER_DURABLE,
  RECONCILER_MAX_DELIVER,
  RECONCILER_PROGRESS_EVERY_MS,
  streamNames,
  type Topology
} from "./Topology.js"

/**
 * A message as a Delivery. The verbs are made when asked for (nearly every message is only ever acked), not three
 * effects and their closures per message up front.
 */
class JetStreamDelivery implements Delivery {
  readonly envelope: Delivery["envelope"]
  readonly subject: string
  readonly streamSeq: number
  readonly deliveryCount: number
  constructor(private readonly m: JsMsg) {
    this.envelope = decodeEnvelope(m.string())
    this.subject = m.subject
    this.streamSeq = m.seq
    this.deliveryCount = m.info.deliveryCount
  }
  get ack() {
    return Effect.sync(() => this.m.ack())
  }
  nak(delayMs: number) {
    return Effect.sync(() => this.m.nak(delayMs))
  }
  get term() {
    return Effect.sync(() => this.m.term())
  }
  working() {
    this.m.working()
  }
  /** Read (the headers parsed) only when the reconciler traces. */
  get traceparent() {
    return this.m.headers?.get("traceparent") || undefined
  }
}

const toDelivery = (m: JsMsg): Delivery => new JetStreamDelivery(m)

/** Messages a partition's consumer pulls ahead. */
const PULL = 256

/**
 * Where a consumer had got to: the stream sequence after its ack floor (everything up to the floor is done). A consumer
 * that has acked nothing reports a floor of 0, so then it is where it was made to start.
 */
const resumeFrom = (ci: ConsumerInfo): number =>
  Math.max(ci.config.opt_start_seq ?? 1, ci.ack_floor.consumer_seq > 0 ? ci.ack_floor.stream_seq + 1 : 1)

const notFound = (e: unknown) =>
  e instanceof JetStreamApiError && (e.code === JetStreamApiCodes.ConsumerNotFound || e.code === JetStreamApiCodes.StreamNotFound)

/**
 * A message of an earlier version's subject (`deposits.<tenant>.<mode>.<NUBAN>`), read once on upgrade by an ordered
 * replay: there is nothing to acknowledge. A failure leaves its inbox row unreconciled for the sweeper.
 */
const legacyDelivery = (m: JsMsg): Delivery => ({
  envelope: decodeEnvelope(m.string()),
  subject: m.subject,
  streamSeq: m.seq,
  deliveryCount: 1,
  ack: Effect.void,
  nak: () => Effect.void,
  term: Effect.void
})

/**
 * The deposit stream on JetStream, by partition: subject deposits.p<N>.<tenant>.<mode>.<nuban> (N from the account key,
 * DEPOSIT_PARTITIONS), Nats-Msg-Id tenant:mode:provider:reference. Built on the NatsLink, so it never waits for NATS:
 * while NATS is down `publish` fails at once (the receiver has already answered from the inbox; the sweeper re-feeds the
 * rows later) and a partition's deliveries wait; on every new connection the link has ensured the streams before it
 * hands the connection out.
 *
 * Take-over (`open`, see PartitionedDeliveries): each ownership of partition N has a durable consumer of its own,
 * `reconciler-p<N>-<epoch>` (filter deposits.p<N>.*.*.*). The new owner makes it starting where the previous
 * ownership's consumer had got to (its ack floor + 1; redeliveries of what the previous owner held then come first, in
 * stream order, instead of after ack_wait behind newer messages), then deletes the previous one. A partition that never
 * had a consumer starts at the stream's first message, or, on upgrade from the single shared `reconciler` durable of
 * earlier versions, where that one had got to: that partition's messages on the old subjects from there on are read
 * first, in stream order, by an ordered replay, and the old durable is deleted once every partition has a consumer.
 */
export const JetStreamDepositBusLive = (topology: Topology) =>
  Layer.effect(
    DepositBus,
    Effect.gen(function* () {
      const link = yield* NatsLink
      const partitions = (yield* AppConfigTag).depositPartitions ?? DEFAULT_DEPOSIT_PARTITIONS
      const stream = streamNames(topology).deposits
      const unavailable = new BusError({ message: "NATS is unreachable" })
      const asBusError = (e: NatsError) => new BusError({ message: e.message, cause: e })
      const traced = yield* tracingOn

      const consumersOf = (jsm: Awaited<ReturnType<typeof jetstreamManager>>) =>
        tryNats(`cannot list the consumers of ${stream}`, async () => {
          const out: Array<ConsumerInfo> = []
          for await (const ci of jsm.consumers.list(stream)) out.push(ci)
          return out
        })
      const deleteConsumer = (jsm: Awaited<ReturnType<typeof jetstreamManager>>, name: string) =>
        tryNats(`cannot delete consumer ${name} on ${stream}`, () =>
          jsm.consumers.delete(stream, name).then(() => undefined, (e: unknown) => {
            if (!notFound(e)) throw e
          }))

      /** Makes (or finds) this ownership's consumer; where to replay the old subjects from, on upgrade. */
      const takeOver = (nc: NatsConnection, partition: number, epoch: number) =>
        Effect.gen(function* () {
          const jsm = yield* tryNats("JetStream unavailable", () => jetstreamManager(nc))
          const infos = yield* consumersOf(jsm)
          const ofPartition = infos.flatMap((ci) =>
            Option.match(parsePartitionConsumer(ci.name), { onNone: () => [], onSome: (c) => (c.partition === partition ? [{ ci, epoch: c.epoch }] : []) }))
          if (ofPartition.some((c) => c.epoch > epoch)) return yield* new PartitionSuperseded({ partition, epoch })
          const earlier = ofPartition.filter((c) => c.epoch < epoch)
          const legacy = infos.find((ci) => ci.name === RECONCILER_DURABLE)
          let legacyFrom: number | undefined
          if (!ofPartition.some((c) => c.epoch === epoch)) {
            let start: number | undefined
            if (earlier.length > 0) start = Math.max(...earlier.map((c) => resumeFrom(c.ci)))
            else if (legacy) start = legacyFrom = resumeFrom(legacy)
            const cfg = partitionConsumerConfig(topology, partition, epoch, start)
            yield* tryNats(`cannot create consumer ${cfg.durable_name} on ${stream}`, () => jsm.consumers.add(stream, cfg))
          }
          for (const c of earlier) yield* deleteConsumer(jsm, c.ci.name)
          if (legacy) {
            // Listed again after this partition's consumer exists: of two owners taking over at once, the later one
            // sees both consumers.
            const covered = new Set((yield* consumersOf(jsm)).flatMap((ci) => Option.toArray(Option.map(parsePartitionConsumer(ci.name), (c) => c.partition))))
            if (Array.from({ length: partitions }, (_, p) => p).every((p) => covered.has(p))) {
              yield* deleteConsumer(jsm, RECONCILER_DURABLE)
              yield* Effect.logInfo(`every deposit partition has its consumer: deleted the shared consumer ${RECONCILER_DURABLE} of earlier versions`)
            }
          }
          return legacyFrom
        })

      /** On upgrade: the partition's messages on the earlier versions' subjects from `from` on, in stream order. */
      const legacyDeliveries = (partition: number, from: number) =>
        replayFrom(stream, { seq: from }, legacyDepositFilter(topology)).pipe(
          Stream.map(legacyDelivery),
          Stream.filter((d) => {
            const key = isDecoded(d.envelope) ? d.envelope : Option.getOrUndefined(parseDepositSubject(topology, d.subject))
            return (key ? depositPartition(key.tenantId, key.mode, key.accountNumber, partitions) : 0) === partition
          })
        )

      const openOn = (nc: NatsConnection, partition: number, epoch: number, deliver: (d: Delivery) => void): Effect.Effect<never, BusError | PartitionSuperseded> =>
        Effect.gen(function* () {
          const legacyFrom = yield* takeOver(nc, partition, epoch)
          if (legacyFrom !== undefined) {
            yield* Effect.logInfo(`deposit partition ${partition}: reading the earlier versions' subjects from ${legacyFrom} first`)
            yield* Stream.runForEach(legacyDeliveries(partition, legacyFrom), (d) => Effect.sync(() => deliver(d)))
          }
          return yield* consumeEach(stream, partitionConsumerName(partition, epoch), { maxMessages: PULL }, (m) => deliver(toDelivery(m)))
        }).pipe(
          Effect.mapError((e) => (e instanceof NatsError ? asBusError(e) : e)),
          Effect.provideService(Nats, nc)
        )

      // The connection while the link is up (None while down), each connection once.
      const connections = link.changes.pipe(
        Stream.map((s) => (s._tag === "Up" ? Option.some(s.nc) : Option.none<NatsConnection>())),
        Stream.changesWith((a, b) => Option.isNone(a) ? Option.isNone(b) : Option.isSome(b) && a.value === b.value)
      )

      return DepositBus.of({
        kind: "jetstream",
        maxDeliver: RECONCILER_MAX_DELIVER,
        progressEveryMs: RECONCILER_PROGRESS_EVERY_MS,
        // Pipelined: one round trip for the batch. A message without its PubAck fails the call, so the caller leaves
        // the batch's inbox rows unmarked and the sweeper re-feeds them (those that did go are de-duplicated by id).
        publish: (envelopes, traceparents) => {
          const sent = Effect.flatMap(link.current, Option.match({
            onNone: () => Effect.fail(unavailable),
            onSome: (nc) =>
              publishMany(envelopes.map((e, i) => ({
                subject: depositSubject(topology, e.tenantId, e.mode, e.accountNumber, partitions),
                data: encodeEnvelope(e),
                msgId: depositMsgId(e.tenantId, e.mode, e.provider, e.reference),
                traceparent: traceparents?.[i]
              }))).pipe(
                Effect.provideService(Nats, nc),
                Effect.flatMap((acked) => {
                  const failed = acked.filter((ok) => !ok).length
                  return failed === 0 ? Effect.void : Effect.fail(new BusError({ message: `${failed} of ${acked.length} deposit messages got no PubAck from JetStream` }))
                })
              )
          }))
          return traced
            ? Effect.withSpan(sent, "DepositBus.publish", {
              kind: "producer",
              attributes: { "messaging.system": "nats", "messaging.destination.name": stream, "messaging.batch.message_count": envelopes.length }
            })
            : sent
        },
        deliveries: Stream.empty,
        partitioned: {
          count: partitions,
          key: stream,
          connected: Effect.map(link.current, Option.isSome),
          // Consumes while the link is up; stops when it goes down (the client would only buffer pulls meanwhile) and
          // starts again on the connection it comes back with (the same ownership's consumer: no take-over then).
          // Messages already taken stay with the reconciler, whose acks go out on the same connection once it is back
          // (or are redelivered after ack_wait).
          open: (partition, epoch, deliver) =>
            connections.pipe(
              Stream.flatMap(Option.match({ onNone: () => Stream.empty, onSome: (nc) => Stream.fromEffect(openOn(nc, partition, epoch, deliver)) }), { switch: true }),
              Stream.runDrain,
              // The link's changes never end while the bus's scope is open.
              Effect.zipRight(Effect.never)
            )
        }
      })
    })
  )
