import { jetstream, type JetStreamClient } from "@nats-io/jetstream"
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/nats-core"
import { Effect } from "effect"
import { Nats, NatsError, tryNats } from "./Nats.js"

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
  /** W3C trace context, sent as a `traceparent` header (tracing on only). */
  readonly traceparent?: string | undefined
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
            if (m.traceparent !== undefined) h.set("traceparent", m.traceparent)
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
