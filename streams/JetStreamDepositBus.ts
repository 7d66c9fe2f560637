import type { JsMsg } from "@nats-io/jetstream"
import { Effect, Layer, Stream } from "effect"
import { consume, publishMany } from "./JetStream.js"
import { Nats } from "./Nats.js"
import { BusError, decodeEnvelope, DepositBus, encodeEnvelope, type Delivery } from "./DepositBus.js"
import { depositMsgId, depositSubject, ensureTopology, RECONCILER_DURABLE, reconcilerConsumerConfig, streamNames, type Topology } from "./Topology.js"

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
}

const toDelivery = (m: JsMsg): Delivery => new JetStreamDelivery(m)

/** The deposit stream on JetStream: subject deposits.<tenant>.<mode>.<nuban>, Nats-Msg-Id tenant:mode:provider:reference. */
export const JetStreamDepositBusLive = (topology: Topology) =>
  Layer.effect(
    DepositBus,
    Effect.gen(function* () {
      const nats = yield* Nats
      yield* ensureTopology(topology).pipe(Effect.orDie)
      const provide = Effect.provideService(Nats, nats)
      return DepositBus.of({
        kind: "jetstream",
        maxDeliver: reconcilerConsumerConfig(topology).max_deliver,
        // Pipelined: one round trip for the batch. A message without its PubAck fails the call, so the caller leaves
        // the batch's inbox rows unmarked and the sweeper re-feeds them (those that did go are de-duplicated by id).
        publish: (envelopes) =>
          publishMany(envelopes.map((e) => ({
            subject: depositSubject(topology, e.tenantId, e.mode, e.accountNumber),
            data: encodeEnvelope(e),
            msgId: depositMsgId(e.tenantId, e.mode, e.provider, e.reference)
          }))).pipe(
            provide,
            Effect.flatMap((acked) => {
              const failed = acked.filter((ok) => !ok).length
              return failed === 0 ? Effect.void : Effect.fail(new BusError({ message: `${failed} of ${acked.length} deposit messages got no PubAck from JetStream` }))
            })
          ),
        deliveries: consume(streamNames(topology).deposits, RECONCILER_DURABLE, { maxMessages: 512 }).pipe(
          Stream.map(toDelivery),
          Stream.mapError((cause) => new BusError({ message: cause.message, cause })),
          Stream.provideService(Nats, nats)
        )
      })
    })
  )
