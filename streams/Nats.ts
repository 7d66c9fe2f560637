import { connect } from "@nats-io/transport-node"
import type { NatsConnection } from "@nats-io/nats-core"
import { Context, Data, Effect, Layer } from "effect"

/** The shared NATS connection. One per process; JetStream clients are cheap views over it. */
export class Nats extends Context.Tag("streams/Nats")<Nats, NatsConnection>() {}

/**
 * Any failure talking to NATS / JetStream. `message` is written for an operator; `cause` keeps the
 * library error (its `code` / `apiError()` when JetStream answered with an API error).
 */
export class NatsError extends Data.TaggedError("NatsError")<{
  readonly message: string
  readonly cause: unknown
}> {}

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** Wraps a promise-returning NATS call; the failure message is `${what}: ${cause.message}`. */
export const tryNats = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, NatsError> =>
  Effect.tryPromise({ try: f, catch: (cause) => new NatsError({ message: `${what}: ${describe(cause)}`, cause }) })

/**
 * Scoped connection. `servers` is one URL or a comma-separated list ("nats://a:4222,nats://b:4222").
 *
 * Once connected, the client reconnects forever (`maxReconnectAttempts: -1`): a NATS outage must
 * delay deposits, never kill the process (the Postgres inbox is the durable record and the sweeper
 * republishes). The FIRST connect, though, fails at once, so a misconfigured URL stops startup
 * with a clear error instead of a silent retry loop.
 */
export const NatsLive = (servers: string, name = "collections-service"): Layer.Layer<Nats, NatsError> =>
  Layer.scoped(
    Nats,
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect({
            servers: servers.split(",").map((s) => s.trim()).filter((s) => s !== ""),
            name,
            maxReconnectAttempts: -1,
            reconnectTimeWait: 500,
            // Every request (each JetStream publish is one) otherwise builds two Error objects up front, only for their
            // stack traces: ~3% of the service's CPU per deposit in a profile. Failures still carry their message.
            noAsyncTraces: true
          }),
        catch: (cause) => new NatsError({ message: `cannot connect to NATS at ${servers}: ${describe(cause)}`, cause })
      }),
      // drain() flushes pending publishes and lets subscriptions finish; it rejects at once when the
      // connection is down, and then close() is needed to stop the endless reconnect loop, which
      // would otherwise keep the process alive.
      // Bounded: a drain stuck behind an open pull consumer must not hold up shutdown.
      (nc) =>
        Effect.promise(() =>
          nc.drain().then(
            () => undefined,
            () => nc.close().then(() => undefined, () => undefined)
          )
        ).pipe(
          Effect.timeout("5 seconds"),
          Effect.catchAll(() => Effect.promise(() => nc.close().then(() => undefined, () => undefined)))
        )
    )
  )
