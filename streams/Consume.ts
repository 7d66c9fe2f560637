import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JsMsg,
  type OrderedConsumerOptions
} from "@nats-io/jetstream"
import { Effect, Option, Stream } from "effect"
import { Nats, NatsError, tryNats } from "./Nats.js"

/**
 * Stops pulling. `stop()` (inside `close()`) is synchronous: it unsubscribes and clears the timers. The promise
 * `close()` returns settles only when the message iterator runs once more, which never happens once the reading
 * fiber has been interrupted (or is parked downstream), so it is not awaited: awaiting it hung every shutdown.
 */
const stopMessages = (m: ConsumerMessages) =>
  Effect.sync(() => {
    m.close().then(
      () => undefined,
      () => undefined
    )
  })

/**
 * The messages as a Stream. Not `Stream.fromAsyncIterable`: on interruption that awaits the iterator's `return()`,
 * which an async generator queues behind the pending `next()`, and a consumer with nothing to deliver never answers
 * that `next()`, so closing the scope (service shutdown, end of a test) hung for good. Here the pending `next()` is
 * simply abandoned; `stopMessages` then ends the iterator.
 */
const fromMessages = (messages: ConsumerMessages, onError: (cause: unknown) => NatsError): Stream.Stream<JsMsg, NatsError> =>
  Stream.suspend(() => {
    const iterator = messages[Symbol.asyncIterator]()
    return Stream.repeatEffectOption(
      Effect.tryPromise({ try: () => iterator.next(), catch: (cause) => Option.some(onError(cause)) }).pipe(
        Effect.flatMap((r) => (r.done ? Effect.fail(Option.none()) : Effect.succeed(r.value)))
      )
    )
  })

/**
 * A durable pull consumer, each message handed to `onMessage` from the client's callback as it arrives: no queue, fiber
 * or stream between (the deposit reconciler puts each straight on its partition's queue; docs/performance.md,
 * "Consumer"). The consumer must exist (see `ensureTopology`); messages are NOT acked for you: ack after the work has
 * committed, nak to have one redelivered. `maxMessages` is how many messages the client pulls ahead. Runs until
 * interrupted, which stops the pull (un-acked messages are redelivered after ack_wait); fails should the consumer stop
 * (deleted, or the connection closed for good). `onMessage` must not throw.
 */
export const consumeEach = (
  stream: string,
  durable: string,
  opts: { readonly maxMessages: number },
  onMessage: (m: JsMsg) => void
): Effect.Effect<never, NatsError, Nats> =>
  Effect.scoped(
    Effect.gen(function* () {
      const js = jetstream(yield* Nats)
      const consumer = yield* tryNats(`cannot open consumer ${durable} on ${stream}`, () =>
        js.consumers.get(stream, durable)
      )
      const messages = yield* Effect.acquireRelease(
        tryNats(`cannot consume ${durable} on ${stream}`, () => consumer.consume({ max_messages: opts.maxMessages, callback: onMessage })),
        stopMessages
      )
      const cause = yield* Effect.promise(() => messages.closed())
      return yield* new NatsError({ message: `consumer ${durable} on ${stream} stopped${cause ? `: ${String(cause)}` : ""}`, cause })
    })
  )

export type ReplayStart = { readonly seq: number } | { readonly since: Date }

/**
 * Re-reads a stream from a sequence or a time, optionally limited to one subject filter, and ENDS
 * once it has delivered every matching message that was in the stream when it started; messages
 * published meanwhile are left out, so an operator's replay is a bounded batch.
 *
 * Uses an ordered consumer (ephemeral, in memory, no acks, deleted when the stream closes), so a
 * replay never disturbs durable offsets. Termination: the stream's last sequence is read first;
 * the replay stops at the first message beyond it, at that sequence itself, or at a message the
 * server reports nothing pending after (which is how a filtered replay ends before last_seq).
 */
export const replayFrom = (
  stream: string,
  start: ReplayStart,
  filterSubject?: string
): Stream.Stream<JsMsg, NatsError, Nats> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const nc = yield* Nats
      const jsm = yield* tryNats("JetStream unavailable", () => jetstreamManager(nc))
      const info = yield* tryNats(`cannot read stream ${stream}`, () => jsm.streams.info(stream))
      const lastSeq = info.state.last_seq
      if (info.state.messages === 0 || ("seq" in start && start.seq > lastSeq)) return Stream.empty

      const options: Partial<OrderedConsumerOptions> =
        "seq" in start
          ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, start.seq) }
          : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: start.since.toISOString() }
      // A plain string becomes the single `filter_subject` that nats-server 2.9 understands.
      if (filterSubject !== undefined) options.filter_subjects = filterSubject

      const consumer = yield* Effect.acquireRelease(
        tryNats(`cannot create replay consumer on ${stream}`, () => jetstream(nc).consumers.get(stream, options)),
        // The server would drop it after its inactive threshold anyway; deleting it is tidier.
        (c) => Effect.promise(() => c.delete().then(() => undefined, () => undefined))
      )
      const pending = (yield* tryNats("cannot read replay consumer", () => consumer.info(true))).num_pending
      if (pending === 0) return Stream.empty

      const messages = yield* Effect.acquireRelease(
        tryNats(`cannot replay ${stream}`, () => consumer.consume({ max_messages: Math.min(256, pending) })),
        stopMessages
      )
      return fromMessages(messages, (cause) => new NatsError({ message: `replay of ${stream} failed: ${String(cause)}`, cause })).pipe(
        Stream.takeWhile((m) => m.seq <= lastSeq),
        Stream.takeUntil((m) => m.seq === lastSeq || m.info.pending === 0)
      )
    })
  )
