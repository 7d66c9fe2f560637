import { jetstreamManager, JetStreamApiError, JetStreamApiCodes } from "@nats-io/jetstream"
import { Effect } from "effect"
import { Nats, type NatsError, tryNats } from "./Nats.js"
import { streamNames, type Topology } from "./Topology.js"

/** Administration of the JetStream streams: their state, and deleting them. Publishing is in Publish.ts, reading in Consume.ts. */

export interface StreamState {
  readonly messages: number
  readonly firstSeq: number
  readonly lastSeq: number
}

export const streamInfo = (stream: string): Effect.Effect<StreamState, NatsError, Nats> =>
  Effect.gen(function* () {
    const nc = yield* Nats
    const jsm = yield* tryNats("JetStream unavailable", () => jetstreamManager(nc))
    const { state } = yield* tryNats(`cannot read stream ${stream}`, () => jsm.streams.info(stream))
    return { messages: state.messages, firstSeq: state.first_seq, lastSeq: state.last_seq }
  })

/** Deletes both streams (and so their consumers). For test cleanup; a missing stream is fine. */
export const deleteTopology = (t: Topology): Effect.Effect<void, NatsError, Nats> =>
  Effect.gen(function* () {
    const nc = yield* Nats
    const jsm = yield* tryNats("JetStream unavailable", () => jetstreamManager(nc))
    const names = streamNames(t)
    for (const name of [names.deposits, names.reconciled]) {
      yield* tryNats(`cannot delete stream ${name}`, () =>
        jsm.streams.delete(name).then(
          () => undefined,
          (e: unknown) => {
            if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) return undefined
            throw e
          }
        )
      )
    }
  })
