import { Context, Effect, Layer, PubSub } from "effect"
import type { EventEnvelope } from "../services/Outbox.js"
import { publish } from "./JetStream.js"
import { Nats } from "./Nats.js"
import { reconciledSubject, type Topology } from "./Topology.js"

export interface ReconciledMessage {
  readonly tenantId: string
  readonly subjectKey: string
  readonly envelope: EventEnvelope
}

/** Where committed events go for internal subscribers: the RECONCILED stream, or an in-process PubSub. */
export interface ReconciledBusShape {
  readonly publish: (m: ReconciledMessage) => Effect.Effect<void, { readonly message: string }>
  readonly local: PubSub.PubSub<ReconciledMessage>
}
export class ReconciledBus extends Context.Tag("streams/ReconciledBus")<ReconciledBus, ReconciledBusShape>() {}

export const InProcessReconciledBusLive = Layer.effect(
  ReconciledBus,
  Effect.map(PubSub.sliding<ReconciledMessage>(10_000), (local) => ({
    local,
    publish: (m: ReconciledMessage) => PubSub.publish(local, m).pipe(Effect.asVoid)
  }))
)

/** reconciled.<tenantId>.<mode>.<accountRef>, de-duplicated by event id; also fanned out in-process. */
export const JetStreamReconciledBusLive = (topology: Topology) =>
  Layer.effect(
    ReconciledBus,
    Effect.gen(function* () {
      const nats = yield* Nats
      const local = yield* PubSub.sliding<ReconciledMessage>(10_000)
      return {
        local,
        publish: (m: ReconciledMessage) =>
          publish(reconciledSubject(topology, m.tenantId, m.envelope.mode, m.subjectKey), JSON.stringify({ ...m.envelope, tenantId: m.tenantId }), m.envelope.id).pipe(
            Effect.provideService(Nats, nats),
            Effect.zipRight(PubSub.publish(local, m)),
            Effect.asVoid
          )
      }
    })
  )
