import type { NatsConnection } from "@nats-io/nats-core"
import { Context, Effect, Layer, Option, Queue, Stream } from "effect"
import type { EventEnvelope } from "../src/contract/Events.js"
import type { Mode } from "../src/domain/Mode.js"
import { NatsLink } from "./Nats.js"
import { ReconciledBus } from "./ReconciledBus.js"
import { parseReconciledSubject, reconciledFilter, type Topology } from "./Topology.js"

/** One committed change, as a live subscriber (checkout's live stream) sees it. */
export interface Change {
  readonly eventId: string
  readonly type: string
  readonly tenantId: string
  readonly mode: Mode
  /** The account reference the event is about (its subject's last level). */
  readonly subjectKey: string
  /** The event as webhooks carry it: `{ id, type, createdAt, mode, data }`. */
  readonly envelope: EventEnvelope
}

export interface SubscribeShape {
  /**
   * Every change committed from now on for a tenant and mode (one account's only, given `accountRef`), as long as
   * the stream is read. Live only: no replay of what came before, and a reader too slow for 10,000 buffered changes
   * loses the oldest (a live view re-reads the state it shows; webhooks are the durable feed).
   */
  readonly subscribe: (tenantId: string, mode: Mode, accountRef?: string) => Stream.Stream<Change>
}

/** The `subscribe` port: where a live view hears committed changes, whichever process committed them. */
export class Subscribe extends Context.Tag("streams/Subscribe")<Subscribe, SubscribeShape>() {}

const BUFFER = 10_000

/**
 * The embedded default: the ReconciledBus's in-process PubSub, which the outbox relay of this same process feeds
 * (there is only one process when the bus is in-process).
 */
export const InProcessSubscribeLive = Layer.effect(
  Subscribe,
  Effect.map(ReconciledBus, (bus) =>
    Subscribe.of({
      subscribe: (tenantId, mode, accountRef) =>
        Stream.fromPubSub(bus.local).pipe(
          Stream.filter((m) => m.tenantId === tenantId && m.mode === mode && (accountRef === undefined || m.subjectKey === accountRef)),
          Stream.filterMap((m) => {
            try {
              const envelope = JSON.parse(m.envelopeJson) as EventEnvelope
              return Option.some<Change>({ eventId: m.eventId, type: m.eventType, tenantId: m.tenantId, mode: m.mode, subjectKey: m.subjectKey, envelope })
            } catch {
              return Option.none()
            }
          })
        )
    })
  )
)

/** A message on a reconciled subject as a Change; None for anything that is not one of ours. */
export const changeOf = (topology: Topology, subject: string, body: string): Option.Option<Change> =>
  Option.flatMap(parseReconciledSubject(topology, subject), (parts) => {
    try {
      const { tenantId: _, ...envelope } = JSON.parse(body) as EventEnvelope & { readonly tenantId?: string }
      if (typeof envelope.id !== "string" || typeof envelope.type !== "string") return Option.none()
      if (parts.mode !== "test" && parts.mode !== "live") return Option.none()
      return Option.some<Change>({
        eventId: envelope.id, type: envelope.type, tenantId: parts.tenantId, mode: parts.mode, subjectKey: parts.accountRef, envelope
      })
    } catch {
      return Option.none()
    }
  })

/**
 * On NATS: a core subscription on the reconciled subjects (not a JetStream consumer: nothing durable is created per
 * viewer, and the server forgets it when the reader goes), so any process, an API-only one included, hears the changes
 * every relay publishes. The client re-subscribes by itself when it reconnects; should the link hand out a new
 * connection, the stream subscribes again on it. While NATS is down nothing arrives (and what was published meanwhile
 * is not replayed: see SubscribeShape).
 */
export const NatsSubscribeLive = (topology: Topology) =>
  Layer.effect(
    Subscribe,
    Effect.map(NatsLink, (link) => {
      const on = (nc: NatsConnection, filter: string) =>
        Stream.unwrapScoped(
          Effect.gen(function* () {
            const queue = yield* Effect.acquireRelease(Queue.sliding<Change>(BUFFER), Queue.shutdown)
            yield* Effect.acquireRelease(
              Effect.sync(() =>
                nc.subscribe(filter, {
                  callback: (err, msg) => {
                    if (err) return
                    Option.map(changeOf(topology, msg.subject, msg.string()), (c) => queue.unsafeOffer(c))
                  }
                })
              ),
              (sub) => Effect.sync(() => sub.unsubscribe())
            )
            return Stream.fromQueue(queue)
          })
        )
      return Subscribe.of({
        subscribe: (tenantId, mode, accountRef) => {
          const filter = reconciledFilter(topology, tenantId, mode, { accountRef })
          return link.changes.pipe(
            Stream.filterMap((s) => (s._tag === "Up" ? Option.some(s.nc) : Option.none())),
            Stream.changes,
            Stream.flatMap((nc) => on(nc, filter), { switch: true })
          )
        }
      })
    })
  )
