import { Context, Effect, Layer, Option, PubSub } from "effect"
import type { Mode } from "../src/domain/Mode.js"
import { publishMany } from "./Publish.js"
import { Nats, NatsLink } from "./Nats.js"
import { reconciledSubject, type Topology } from "./Topology.js"

/**
 * One committed outbox event on its way out. The envelope travels as the JSON text Postgres holds: the relay neither
 * parses nor re-serialises it (it showed in the service's profile; docs/performance.md).
 */
export interface ReconciledMessage {
  readonly tenantId: string
  readonly mode: Mode
  readonly eventId: string
  /** The event's type (`deposit.reconciled`, ...). */
  readonly eventType: string
  readonly subjectKey: string
  /** The event envelope (`{ id, type, createdAt, mode, data }`) as JSON. */
  readonly envelopeJson: string
}

/** The message body on the stream: the envelope with the tenant id added as its first member. */
export const reconciledBody = (m: ReconciledMessage) => `{"tenantId":${JSON.stringify(m.tenantId)},${m.envelopeJson.trimStart().slice(1)}`

/** Where committed events go for internal subscribers: the RECONCILED stream, or an in-process PubSub. */
export interface ReconciledBusShape {
  /** Publishes in order; per message, whether it went. Never fails: what did not go is published again later. */
  readonly publishMany: (ms: ReadonlyArray<ReconciledMessage>) => Effect.Effect<ReadonlyArray<boolean>>
  /** Whether a publish can go now (the NATS link is up; always, in process). */
  readonly ready: Effect.Effect<boolean>
  readonly local: PubSub.PubSub<ReconciledMessage>
}
export class ReconciledBus extends Context.Tag("streams/ReconciledBus")<ReconciledBus, ReconciledBusShape>() {}

export const InProcessReconciledBusLive = Layer.effect(
  ReconciledBus,
  Effect.map(PubSub.sliding<ReconciledMessage>(10_000), (local) => ({
    local,
    publishMany: (ms: ReadonlyArray<ReconciledMessage>) => PubSub.publishAll(local, ms).pipe(Effect.as(ms.map(() => true))),
    ready: Effect.succeed(true)
  }))
)

/**
 * reconciled.<tenantId>.<mode>.<eventType>.<accountRef>, de-duplicated by event id; also fanned out in-process.
 * While NATS is down (the link is not up) every message answers `false` at once, so the relay keeps its rows for a
 * later pass instead of waiting on a publish timeout.
 */
export const JetStreamReconciledBusLive = (topology: Topology) =>
  Layer.effect(
    ReconciledBus,
    Effect.gen(function* () {
      const link = yield* NatsLink
      const local = yield* PubSub.sliding<ReconciledMessage>(10_000)
      return {
        local,
        ready: Effect.map(link.current, Option.isSome),
        publishMany: (ms: ReadonlyArray<ReconciledMessage>) =>
          Effect.flatMap(link.current, Option.match({
            onNone: () => Effect.succeed(ms.map(() => false)),
            onSome: (nc) =>
              publishMany(ms.map((m) => ({
                subject: reconciledSubject(topology, m.tenantId, m.mode, m.eventType, m.subjectKey),
                data: reconciledBody(m),
                msgId: m.eventId
              }))).pipe(
                Effect.provideService(Nats, nc),
                Effect.tap((acked) => PubSub.publishAll(local, ms.filter((_, i) => acked[i])))
              )
          }))
      }
    })
  )
