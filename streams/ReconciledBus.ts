import { Context, Effect, Layer, PubSub } from "effect"
import type { EventEnvelope } from "../services/Outbox.js"
import { publishMany } from "./JetStream.js"
import { Nats } from "./Nats.js"
import { reconciledSubject, type Topology } from "./Topology.js"

export interface ReconciledMessage {
  readonly tenantId: string
  readonly subjectKey: string
  readonly envelope: EventEnvelope
}

/** Where committed events go for internal subscribers: the RECONCILED stream, or an in-process PubSub. */
export interface ReconciledBusShape {
  /** Publishes in order; per message, whether it went. Never fails: what did not go is published again later. */
  readonly publishMany: (ms: ReadonlyArray<ReconciledMessage>) => Effect.Effect<ReadonlyArray<boolean>>
  readonly local: PubSub.PubSub<ReconciledMessage>
}
export class ReconciledBus extends Context.Tag("streams/ReconciledBus")<ReconciledBus, ReconciledBusShape>() {}

export const InProcessReconciledBusLive = Layer.effect(
  ReconciledBus,
  Effect.map(PubSub.sliding<ReconciledMessage>(10_000), (local) => ({
    local,
    publishMany: (ms: ReadonlyArray<ReconciledMessage>) => PubSub.publishAll(local, ms).pipe(Effect.as(ms.map(() => true)))
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
        publishMany: (ms: ReadonlyArray<ReconciledMessage>) =>
          publishMany(ms.map((m) => ({
            subject: reconciledSubject(topology, m.tenantId, m.envelope.mode, m.subjectKey),
            data: JSON.stringify({ ...m.envelope, tenantId: m.tenantId }),
            msgId: m.envelope.id
          }))).pipe(
            Effect.provideService(Nats, nats),
            Effect.tap((acked) => PubSub.publishAll(local, ms.filter((_, i) => acked[i])))
          )
      }
    })
  )
