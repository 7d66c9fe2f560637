import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  JetStreamApiCodes,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
  type OrderedConsumerOptions
} from "@nats-io/jetstream"
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core"
import { Effect, Option, Queue, Stream } from "effect"
import { Nats, NatsError, tryNats } from "./Nats.js"
import { streamNames, type Topology } from "./Topology.js"

/**
 * How long a publish may wait for its PubAck. While NATS is down the client buffers and keeps
 * reconnecting, so without a bound a publish would hang for the whole outage; failing fast lets
 * the caller answer (the event is already in the Postgres inbox) and the sweeper retry later.
 */
export const PUBLISH_TIMEOUT_MS = 2_000

/** One JetStream client per connection: a client is a view over it, so it need not be made per message. */
const clients = new WeakMap<NatsConnection, JetStreamClient>()
const clientOf = (nc: NatsConnection) => {
  let js = clients.get(nc)
  if (!js) clients.set(nc, (js = jetstream(nc)))
  return js
}

/**
 * Publishes with `Nats-Msg-Id` = msgId. A repeat within the stream's duplicate window is not
 * stored again: the PubAck then says `duplicate: true` and carries the ORIGINAL sequence.
 *
 * A subject that no stream captures fails with the library's misleading
 * "jetstream is not enabled" (it is really "no responders").
 */
export const publish = (
  subject: string,
  data: Uint8Array | string,
  msgId: string
): Effect.Effect<{ readonly seq: number; readonly duplicate: boolean }, NatsError, Nats> =>
  Effect.flatMap(Nats, (nc) =>
    tryNats(`cannot publish to ${subject}`, () =>
      clientOf(nc).publish(subject, data, { msgID: msgId, timeout: PUBLISH_TIMEOUT_MS })
    ).pipe(
      Effect.map((ack) => ({ seq: ack.seq, duplicate: ack.duplicate })),
      // The library's own timeout covers the request; this one also bounds anything before it.
      Effect.timeoutFail({
        duration: PUBLISH_TIMEOUT_MS + 500,
        onTimeout: () => new NatsError({ message: `cannot publish to ${subject}: timed out`, cause: undefined })
      })
    )
  )

export interface Publication {
  readonly subject: string
  readonly data: Uint8Array | string
  readonly msgId: string
}

/**
 * Where the PubAcks of `publishMany` come back: one wildcard inbox subscription per connection, each publish a token
 * under it. (The library's `js.publish` is a request per message: a mux entry, a timer and a deferred for each, and
 * an Error object made whenever one completes. It showed in the service's profile; docs/performance.md, "NATS".)
 */
interface AckInbox {
  readonly prefix: string
  readonly waiting: Map<string, (ok: boolean) => void>
  next: number
}
const ackInboxes = new WeakMap<NatsConnection, AckInbox>()

/** A PubAck is `{"stream":..,"seq":..}`; anything else (a 503 "no responders" status, an API error) is a failure. */
const isPubAck = (msg: Msg): boolean => {
  if (msg.headers?.hasError) return false
  try {
    const ack = JSON.parse(msg.string()) as { stream?: unknown; seq?: unknown; error?: unknown }
    return typeof ack.stream === "string" && typeof ack.seq === "number" && ack.error === undefined
  } catch {
    return false
  }
}

const ackInboxOf = (nc: NatsConnection): AckInbox => {
  let inbox = ackInboxes.get(nc)
  if (!inbox) {
    const created: AckInbox = { prefix: createInbox(), waiting: new Map(), next: 0 }
    nc.subscribe(`${created.prefix}.*`, {
      callback: (err, msg) => {
        if (err) return
        const token = msg.subject.slice(created.prefix.length + 1)
        const done = created.waiting.get(token)
        if (done) {
          created.waiting.delete(token)
          done(isPubAck(msg))
        }
      }
    })
    ackInboxes.set(nc, (inbox = created))
  }
  return inbox
}

/**
 * Publishes several messages pipelined: every publish is written to the connection at once, in order (so the stream
 * stores them in that order), then the PubAcks are awaited together, under one timeout: one round trip for the lot.
 * Per message, in order: whether its PubAck came (a repeat within the duplicate window counts: it is stored once).
 * Never fails; the caller keeps what did not go (an inbox or outbox row) for a later pass.
 */
export const publishMany = (messages: ReadonlyArray<Publication>): Effect.Effect<ReadonlyArray<boolean>, never, Nats> =>
  messages.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(Nats, (nc) =>
      Effect.async<ReadonlyArray<boolean>>((resume) => {
        const inbox = ackInboxOf(nc)
        const acked = messages.map(() => false)
        const tokens: Array<string> = []
        let left = messages.length
        let finished = false
        const forget = () => {
          clearTimeout(timer)
          for (const t of tokens) inbox.waiting.delete(t)
        }
        const finish = () => {
          if (finished) return
          finished = true
          forget()
          resume(Effect.succeed(acked))
        }
        const timer = setTimeout(finish, PUBLISH_TIMEOUT_MS)
        messages.forEach((m, i) => {
          const token = (inbox.next++).toString(36)
          tokens.push(token)
          inbox.waiting.set(token, (ok) => {
            acked[i] = ok
            if (--left === 0) finish()
          })
          try {
            const h = natsHeaders()
            h.set("Nats-Msg-Id", m.msgId)
            nc.publish(m.subject, m.data, { headers: h, reply: `${inbox.prefix}.${token}` })
          } catch {
            // Closed or draining: this one never goes; the others may.
            inbox.waiting.delete(token)
            if (--left === 0) finish()
          }
        })
        return Effect.sync(forget)
      })
    )

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
 * A durable pull consumer as a Stream. The consumer must exist (see `ensureTopology`); messages
 * are NOT acked for you: ack after the work has committed, nak to have one redelivered.
 * `maxMessages` is how many messages the client pulls ahead. Closing the scope (or interrupting
 * the stream) stops the pull; un-acked messages are redelivered after ack_wait.
 *
 * The library's callback form, not its iterator: the iterator cost a promise and a fiber resumption per message;
 * here the callback puts each message on a queue and the stream takes whatever has arrived as one chunk (with the
 * reconciler offering a chunk per partition; docs/performance.md, "Consumer"). The
 * queue needs no bound of its own: the server never has more than the consumer's max_ack_pending messages un-acked.
 * Should the consumer stop (deleted, or the connection closed for good), the stream fails, and what it had not yet
 * taken is redelivered after ack_wait.
 */
export const consume = (
  stream: string,
  durable: string,
  opts: { readonly maxMessages: number }
): Stream.Stream<JsMsg, NatsError, Nats> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const js = jetstream(yield* Nats)
      const consumer = yield* tryNats(`cannot open consumer ${durable} on ${stream}`, () =>
        js.consumers.get(stream, durable)
      )
      const queue = yield* Effect.acquireRelease(Queue.unbounded<JsMsg>(), Queue.shutdown)
      const messages = yield* Effect.acquireRelease(
        tryNats(`cannot consume ${durable} on ${stream}`, () =>
          consumer.consume({ max_messages: opts.maxMessages, callback: (m) => void queue.unsafeOffer(m) })),
        stopMessages
      )
      const stopped = Effect.promise(() => messages.closed()).pipe(
        Effect.flatMap((cause) => new NatsError({ message: `consumer ${durable} on ${stream} stopped${cause ? `: ${String(cause)}` : ""}`, cause }))
      )
      return Stream.fromQueue(queue, { maxChunkSize: opts.maxMessages }).pipe(Stream.interruptWhen(stopped))
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
