import type { JsMsg } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/nats-core"
import { Effect, Layer, Option, Stream } from "effect"
import { consume, publishMany } from "./JetStream.js"
import { Nats, NatsLink } from "./Nats.js"
import { BusError, decodeEnvelope, DepositBus, encodeEnvelope, type Delivery } from "./DepositBus.js"
import { depositMsgId, depositSubject, RECONCILER_DURABLE, RECONCILER_PROGRESS_EVERY_MS, reconcilerConsumerConfig, streamNames, type Topology } from "./Topology.js"

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
}

const toDelivery = (m: JsMsg): Delivery => new JetStreamDelivery(m)

/**
 * The deposit stream on JetStream: subject deposits.<tenant>.<mode>.<nuban>, Nats-Msg-Id tenant:mode:provider:reference.
 * Built on the NatsLink, so it never waits for NATS: while NATS is down `publish` fails at once (the receiver has
 * already answered from the inbox; the sweeper re-feeds the rows later) and `deliveries` waits; on every new
 * connection the link has ensured the topology before it hands the connection out.
 */
export const JetStreamDepositBusLive = (topology: Topology) =>
  Layer.effect(
    DepositBus,
    Effect.gen(function* () {
      const link = yield* NatsLink
      const unavailable = new BusError({ message: "NATS is unreachable" })
      const consumeOn = (nc: NatsConnection) =>
        consume(streamNames(topology).deposits, RECONCILER_DURABLE, { maxMessages: 512 }).pipe(
          Stream.map(toDelivery),
          Stream.mapError((cause) => new BusError({ message: cause.message, cause })),
          Stream.provideService(Nats, nc)
        )
      return DepositBus.of({
        kind: "jetstream",
        maxDeliver: reconcilerConsumerConfig(topology).max_deliver,
        progressEveryMs: RECONCILER_PROGRESS_EVERY_MS,
        // Pipelined: one round trip for the batch. A message without its PubAck fails the call, so the caller leaves
        // the batch's inbox rows unmarked and the sweeper re-feeds them (those that did go are de-duplicated by id).
        publish: (envelopes) =>
          Effect.flatMap(link.current, Option.match({
            onNone: () => Effect.fail(unavailable),
            onSome: (nc) =>
              publishMany(envelopes.map((e) => ({
                subject: depositSubject(topology, e.tenantId, e.mode, e.accountNumber),
                data: encodeEnvelope(e),
                msgId: depositMsgId(e.tenantId, e.mode, e.provider, e.reference)
              }))).pipe(
                Effect.provideService(Nats, nc),
                Effect.flatMap((acked) => {
                  const failed = acked.filter((ok) => !ok).length
                  return failed === 0 ? Effect.void : Effect.fail(new BusError({ message: `${failed} of ${acked.length} deposit messages got no PubAck from JetStream` }))
                })
              )
          })),
        // Consumes while the link is up; stops when it goes down (the client would only buffer pulls meanwhile) and
        // starts again on the connection it comes back with. Messages already taken stay with the reconciler, whose
        // acks go out on the same connection once it is back (or are redelivered after ack_wait).
        deliveries: link.changes.pipe(
          Stream.map((s) => (s._tag === "Up" ? Option.some(s.nc) : Option.none<NatsConnection>())),
          Stream.changesWith((a, b) => Option.isNone(a) ? Option.isNone(b) : Option.isSome(b) && a.value === b.value),
          Stream.flatMap(Option.match({ onNone: () => Stream.empty, onSome: consumeOn }), { switch: true })
        )
      })
    })
  )
