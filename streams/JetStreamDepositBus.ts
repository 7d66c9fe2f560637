import type { JsMsg } from "@nats-io/jetstream"
import { Effect, Layer, Stream } from "effect"
import { consume, publish } from "./JetStream.js"
import { Nats } from "./Nats.js"
import { BusError, decodeEnvelope, DepositBus, encodeEnvelope, type Delivery } from "./DepositBus.js"
import { depositMsgId, depositSubject, ensureTopology, RECONCILER_DURABLE, reconcilerConsumerConfig, streamNames, type Topology } from "./Topology.js"

const toDelivery = (m: JsMsg): Delivery => ({
  envelope: decodeEnvelope(m.string()),
  subject: m.subject,
  streamSeq: m.seq,
  deliveryCount: m.info.deliveryCount,
  ack: Effect.sync(() => m.ack()),
  nak: (delayMs) => Effect.sync(() => m.nak(delayMs)),
  term: Effect.sync(() => m.term())
})

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
        publish: (envelopes) =>
          Effect.forEach(
            envelopes,
            (e) =>
              publish(depositSubject(topology, e.tenantId, e.mode, e.accountNumber), encodeEnvelope(e), depositMsgId(e.tenantId, e.mode, e.provider, e.reference)),
            { concurrency: 32, discard: true }
          ).pipe(provide, Effect.mapError((cause) => new BusError({ message: cause.message, cause }))),
        deliveries: consume(streamNames(topology).deposits, RECONCILER_DURABLE, { maxMessages: 512 }).pipe(
          Stream.map(toDelivery),
          Stream.mapError((cause) => new BusError({ message: cause.message, cause })),
          Stream.provideService(Nats, nats)
        )
      })
    })
  )
