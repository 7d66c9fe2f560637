import { connect } from "@nats-io/transport-node"
import type { NatsConnection } from "@nats-io/nats-core"
import { Context, Data, type Duration, Effect, Layer, Option, Queue, Schedule, Stream, SubscriptionRef } from "effect"

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
 * Scoped connection that fails at once when NATS cannot be reached: for tools and tests (the operator CLI's
 * replay, test fixtures), where a clear error beats a wait. The service itself uses `NatsLinkLive`, which never
 * stops anything for NATS. `servers` is one URL or a comma-separated list ("nats://a:4222,nats://b:4222").
 *
 * Once connected, the client reconnects forever (`maxReconnectAttempts: -1`).
 */
export const NatsLive = (servers: string, name = "collections-service"): Layer.Layer<Nats, NatsError> =>
  Layer.scoped(
    Nats,
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          connect({
            servers: parseServers(servers),
            name,
            maxReconnectAttempts: -1,
            reconnectTimeWait: 500,
            // Every request (each JetStream publish is one) otherwise builds two Error objects up front, only for their
            // stack traces: they showed in the service's profile (docs/performance.md). Failures still carry their message.
            noAsyncTraces: true
          }),
        catch: (cause) => new NatsError({ message: `cannot connect to NATS at ${servers}: ${describe(cause)}`, cause })
      }),
      closeQuietly
    )
  )

/** Where the shared connection stands: down (not reached yet, or lost), or up with the connection to use. */
export type NatsState =
  | { readonly _tag: "Down"; readonly since: number; readonly reason: string }
  | { readonly _tag: "Up"; readonly nc: NatsConnection; readonly since: number }

/**
 * The process's NATS connection as a service that is there whether or not NATS is: it connects in the background
 * (with backoff, forever), reconnects forever once connected, and re-runs `onConnect` (the JetStream topology) on
 * every (re)connect before it reports the link up. Users ask for the connection when they need it:
 * `current` answers at once (None while down: a publisher answers "not sent" without waiting), `await` waits for it
 * (a consumer), `changes` follows it (a consumer that must restart on a new connection).
 */
export interface NatsLinkShape {
  readonly servers: string
  /** The connection while the link is up; None while NATS is down (or the topology is being ensured). */
  readonly current: Effect.Effect<Option.Option<NatsConnection>>
  /** Waits until the link is up. */
  readonly await: Effect.Effect<NatsConnection>
  /** The state now and every change after. */
  readonly changes: Stream.Stream<NatsState>
  readonly state: Effect.Effect<NatsState>
}
export class NatsLink extends Context.Tag("streams/NatsLink")<NatsLink, NatsLinkShape>() {}

export interface NatsLinkOptions {
  readonly name?: string
  /** Run on every (re)connect before the link is reported up (retried while connected). */
  readonly onConnect?: (nc: NatsConnection) => Effect.Effect<void, NatsError>
  /** The wait between failed first-connect attempts grows from this... */
  readonly minBackoff?: Duration.DurationInput
  /** ...to this. */
  readonly maxBackoff?: Duration.DurationInput
}

const parseServers = (servers: string) => servers.split(",").map((s) => s.trim()).filter((s) => s !== "")

/**
 * drain() flushes pending publishes and lets subscriptions finish; it rejects at once when the connection is down, and
 * then close() is needed to stop the endless reconnect loop, which would otherwise keep the process alive. Bounded: a
 * drain stuck behind an open pull consumer must not hold up shutdown.
 */
const closeQuietly = (nc: NatsConnection) =>
  Effect.promise(() =>
    nc.drain().then(
      () => undefined,
      () => nc.close().then(() => undefined, () => undefined)
    )
  ).pipe(
    Effect.timeout("5 seconds"),
    Effect.catchAll(() => Effect.promise(() => nc.close().then(() => undefined, () => undefined)))
  )

/**
 * One connect attempt that fails fast (refused, or no handshake within 2 s). Interrupted while the library still
 * works on it, the connection it later makes is closed at once, so no stray reconnect loop keeps the process alive.
 */
const connectOnce = (servers: string, name: string) =>
  Effect.async<NatsConnection, NatsError>((resume) => {
    let abandoned = false
    connect({
      servers: parseServers(servers),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: 2_000,
      noAsyncTraces: true
    }).then(
      (nc) => {
        if (abandoned) void nc.close().catch(() => undefined)
        else resume(Effect.succeed(nc))
      },
      (cause) => {
        if (!abandoned) resume(Effect.fail(new NatsError({ message: `cannot connect to NATS at ${servers}: ${describe(cause)}`, cause })))
      }
    )
    return Effect.sync(() => {
      abandoned = true
    })
  })

/**
 * The background NATS link (see NatsLinkShape). Building it never waits for NATS and never fails: a service on it
 * starts, answers and keeps answering while NATS is down. Closing the scope stops the attempts and drains the
 * connection.
 */
export const NatsLinkLive = (servers: string, options: NatsLinkOptions = {}): Layer.Layer<NatsLink> =>
  Layer.scoped(
    NatsLink,
    Effect.gen(function* () {
      const name = options.name ?? "collections-service"
      const onConnect = options.onConnect ?? (() => Effect.void)
      const state = yield* SubscriptionRef.make<NatsState>({ _tag: "Down", since: Date.now(), reason: "not connected yet" })
      const setDown = (reason: string) =>
        SubscriptionRef.update(state, (s): NatsState => (s._tag === "Down" ? s : { _tag: "Down", since: Date.now(), reason }))

      /** `onConnect`, retried while this connection is up; then the link is up. Gives up quietly when it drops. */
      const ready = (nc: NatsConnection, isUp: () => boolean) =>
        onConnect(nc).pipe(
          Effect.tapError((e) => Effect.logWarning(`NATS connected, but setting up JetStream failed; retrying: ${e.message}`)),
          Effect.retry({ schedule: Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("3 seconds"))), while: () => isUp() }),
          Effect.zipRight(Effect.suspend(() => (isUp() ? SubscriptionRef.set(state, { _tag: "Up", nc, since: Date.now() }) : Effect.void))),
          Effect.catchAll(() => Effect.void)
        )

      /** One connection's life: up (after onConnect), down and up again as the client reconnects, until it closes. */
      const session = (nc: NatsConnection) =>
        Effect.gen(function* () {
          let up = true
          const events = yield* Queue.unbounded<"up" | "down">()
          // Ends when the connection closes.
          const statuses = nc.status()
          yield* Effect.forkScoped(Effect.promise(async () => {
            for await (const s of statuses) {
              if (s.type === "disconnect") {
                up = false
                events.unsafeOffer("down")
              } else if (s.type === "reconnect") {
                up = true
                events.unsafeOffer("up")
              }
            }
          }))
          yield* Effect.logInfo(`connected to NATS at ${servers}`)
          yield* events.offer("up")
          const handle = Queue.take(events).pipe(
            Effect.flatMap((e) =>
              e === "down"
                ? Effect.logWarning(`lost NATS at ${servers}; reconnecting`).pipe(Effect.zipRight(setDown("NATS connection lost")))
                : ready(nc, () => up)
            ),
            Effect.forever
          )
          // The client reconnects forever; `closed` settles only if the connection ends for good.
          yield* Effect.raceFirst(handle, Effect.promise(() => nc.closed()))
        }).pipe(Effect.scoped)

      let live: NatsConnection | undefined
      yield* Effect.addFinalizer(() => (live ? closeQuietly(live) : Effect.void))
      yield* connectOnce(servers, name).pipe(
        Effect.tapError((e) => setDown(e.message).pipe(Effect.zipRight(Effect.logWarning(`${e.message}; will keep trying`)))),
        Effect.retry(
          Schedule.exponential(options.minBackoff ?? "250 millis").pipe(Schedule.union(Schedule.spaced(options.maxBackoff ?? "5 seconds")))
        ),
        Effect.tap((nc) => Effect.sync(() => void (live = nc))),
        Effect.flatMap(session),
        Effect.zipRight(setDown("NATS connection closed")),
        Effect.forever,
        Effect.forkScoped
      )

      const current = Effect.map(SubscriptionRef.get(state), (s) => (s._tag === "Up" ? Option.some(s.nc) : Option.none()))
      return NatsLink.of({
        servers,
        current,
        state: SubscriptionRef.get(state),
        changes: state.changes,
        await: state.changes.pipe(
          Stream.filterMap((s) => (s._tag === "Up" ? Option.some(s.nc) : Option.none())),
          Stream.runHead,
          Effect.flatMap(Option.match({ onNone: () => Effect.never, onSome: Effect.succeed }))
        )
      })
    })
  )

/** Whether the process's bus can be used now: what `/readyz` reports. */
export interface BusHealthShape {
  readonly kind: "jetstream" | "in-process"
  /** None when the bus is usable; otherwise what is wrong, for an operator ("NATS is unreachable: ..."). */
  readonly problem: Effect.Effect<Option.Option<string>>
}
export class BusHealth extends Context.Tag("streams/BusHealth")<BusHealth, BusHealthShape>() {}

export const InProcessBusHealth = Layer.succeed(BusHealth, { kind: "in-process", problem: Effect.succeed(Option.none()) })

/** The link's state as health: up is healthy; down names how long and why. */
export const NatsBusHealth = Layer.effect(
  BusHealth,
  Effect.map(NatsLink, (link) => ({
    kind: "jetstream" as const,
    problem: Effect.map(link.state, (s) =>
      s._tag === "Up" ? Option.none() : Option.some(`NATS is unreachable (${s.reason}, for ${Math.round((Date.now() - s.since) / 1000)} s)`))
  }))
)
