import { Data, Either, type Effect } from "effect"
import { DATA_DECODERS, type DataOf, type EventType, isEventType } from "../../src/contract/Events.js"
import type { Mode } from "../../src/domain/Mode.js"
import type { Subscription } from "./Registry.js"

// What a consumer of the outbox is and sees (services/outbox/Runner.ts runs them), and how the runner decodes its data.

/** One committed outbox event as a consumer sees it. */
export interface ConsumedEvent {
  readonly outboxId: number
  readonly eventId: string
  readonly tenantId: string
  readonly mode: Mode
  readonly eventType: string
  readonly subjectKey: string
  /** Failed attempts so far. */
  readonly attempts: number
  /** The envelope as the JSON text Postgres holds, when the consumer asks for it (`withEnvelope`); else "". */
  readonly envelopeJson: string
  /** The staging span's W3C trace context, read only with tracing on (null when it was staged without). */
  readonly traceparent?: string | null
}

/** A consumed event whose `data` the runner decoded with its type's schema: one member per type of T, by `eventType`. */
export type DecodedEvent<T extends EventType = EventType> = T extends EventType
  ? Omit<ConsumedEvent, "eventType"> & { readonly eventType: T; readonly data: DataOf<T> }
  : never

/**
 * An event that will never be handled as it is (its data does not match its type's schema): the runner dead-letters it
 * at once, without retries. The runner's own decoding makes these; a handler that reads data itself may fail with one.
 */
export class MalformedEvent extends Data.TaggedError("MalformedEvent")<{ readonly eventType: string; readonly reason: string }> {
  override get message() {
    return `${this.eventType} event does not decode: ${this.reason}`
  }
}

/** A consumer of a consumer runner: it reads the events' columns (and envelope text), or their decoded data. */
export type Consumer<R = never, T extends EventType = EventType> = RawConsumer<R> | DecodingConsumer<R, T>

/** A consumer that reads only the events' columns and, with `withEnvelope`, the envelope's JSON text. */
export interface RawConsumer<R = never> extends Subscription {
  /** Read each event's envelope text in the claim (the relay does; the webhook stager reads only what it needs). */
  readonly withEnvelope?: boolean
  readonly decode?: undefined
  /**
   * Handles events (outbox id order) inside the runner's transaction; failing rolls back its writes and the events
   * are tried one by one. It may return how many events, from the first, it did: the rest stay pending for the next
   * pass (the relay: only an unbroken run of published events is done).
   */
  readonly handle: (events: ReadonlyArray<ConsumedEvent>) => Effect.Effect<number | void, unknown, R>
}

/** A consumer that reads its events' data, decoded by the runner (see above). */
export interface DecodingConsumer<R = never, T extends EventType = EventType> extends Subscription {
  /** Also keep each event's envelope text in `envelopeJson`. */
  readonly withEnvelope?: boolean
  /** The types whose data it reads: every type it subscribes to (checked when its runner is made). */
  readonly decode: ReadonlyArray<T>
  /** As RawConsumer's `handle`, with each event's data decoded; malformed events never reach it. */
  readonly handle: (events: ReadonlyArray<DecodedEvent<T>>) => Effect.Effect<number | void, unknown, R>
}


/**
 * A decoding consumer's decoding (undefined for a raw one): each event's data through its type's decoder, into a
 * DecodedEvent or a MalformedEvent. Throws if the consumer subscribes to a type it does not decode.
 */
export const decodingOf = <R, T extends EventType>(consumer: Consumer<R, T>) => {
  if (consumer.decode === undefined) return undefined
  const decoders = new Map<string, (data: unknown) => Either.Either<unknown, { readonly message: string }>>(
    consumer.decode.map((t) => [t, DATA_DECODERS[t]])
  )
  const missing = consumer.eventTypes === "all" ? ["all"] : consumer.eventTypes.filter((t) => !decoders.has(t))
  if (missing.length > 0) throw new Error(`consumer ${consumer.name} subscribes to ${missing.join(", ")} but decodes only ${consumer.decode.join(", ")}`)
  const decodeOne = (e: ConsumedEvent): Either.Either<DecodedEvent<T>, MalformedEvent> => {
    const decoder = decoders.get(e.eventType)
    if (decoder === undefined) {
      const reason = isEventType(e.eventType) ? `consumer ${consumer.name} does not read this type` : "not a type of the event catalogue"
      return Either.left(new MalformedEvent({ eventType: e.eventType, reason }))
    }
    return Either.map(decodeData(e, decoder), (decoded) => ({ ...e, envelopeJson: consumer.withEnvelope ? e.envelopeJson : "", data: decoded } as DecodedEvent<T>))
  }
  return { decodeOne, handle: consumer.handle }
}

/**
 * The `data` of an event's envelope text through a decoder, or the `MalformedEvent` the runner dead-letters at once: the
 * runner's decoding, and a consumer's own with a schema of just what it reads (the automation planner's).
 */
export const decodeData = <A>(e: ConsumedEvent, decoder: (data: unknown) => Either.Either<A, { readonly message: string }>): Either.Either<A, MalformedEvent> => {
  let data: unknown
  try {
    data = (JSON.parse(e.envelopeJson) as { readonly data?: unknown }).data
  } catch (error) {
    return Either.left(new MalformedEvent({ eventType: e.eventType, reason: `its envelope is not JSON: ${String(error)}` }))
  }
  return Either.mapLeft(decoder(data), (error) => new MalformedEvent({ eventType: e.eventType, reason: error.message }))
}

