import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Logger, Option } from "effect"
import { isMainThread, parentPort } from "node:worker_threads"
import { AppConfigTag } from "./Config.js"
import { DatabaseMigrated, makeDatabaseLive } from "./db/Database.js"
import { NodeServerLive } from "./http/NodeServer.js"
import { ReceiverFastPathLive } from "./http/ReceiverFastPath.js"
import { HttpLive } from "./http/Server.js"
import { AppConfigLive, LoggingLive } from "./Runtime.js"
import { TracingLive } from "./Tracing.js"
import { DownstreamWorkersLive, ServicesLive, ThreadWorkersLive, WorkersLive } from "./Services.js"
import { isReconcilerThread, MetricsToParentLive, NoWorkerThread, runAsWorkerThread, WorkerThreadLive, WorkerThreadWatch } from "./WorkerThread.js"
import { forwardNudgesToThreads, OutboxWakeups } from "../services/outbox/Wakeups.js"

const HttpServerLive = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) => NodeServerLive({ port: c.port, host: c.host }))
)

const Announce = Layer.effectDiscard(
  Effect.gen(function* () {
    const c = yield* AppConfigTag
    const stores = `(database: ${Option.isSome(c.databaseUrl) ? "DATABASE_URL" : `embedded under ${c.dataDir}`}, ` +
      `bus: ${Option.isSome(c.natsUrl) ? c.natsUrl.value : "in-process"})`
    if (c.role === "worker" && isReconcilerThread) return yield* Effect.logInfo(`collections reconciler thread running ${stores}`)
    if (c.role === "worker") return yield* Effect.logInfo(`collections worker running: reconciler, sweeper, outbox relay, webhook dispatch ${stores}`)
    yield* Effect.logInfo(
      `collections ${c.role === "api" ? "API (no workers) " : ""}listening on http://${c.host === "0.0.0.0" ? "localhost" : c.host}:${c.port} ` +
        `${stores}; docs at /docs`
    )
  })
)

/**
 * What SERVICE_ROLE asks this process to run (see Config). `all` on a real Postgres and NATS runs the reconciler on a
 * second thread and everything else on this one (WORKER_THREAD, on by default; see WorkerThread); the embedded
 * default keeps all of it on this thread (its in-process bus and single database connection live in one thread).
 */
const Roles = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) => {
    const api = Layer.merge(HttpLive, ReceiverFastPathLive).pipe(Layer.provide(HttpServerLive))
    if (c.role === "api") return Layer.merge(api, NoWorkerThread)
    if (c.role === "worker" && isReconcilerThread && parentPort !== null) {
      // The thread's metrics go to the main thread when a batch has staged events (its wake-up hub), else seldom.
      const metricsOut = Layer.unwrapEffect(Effect.map(OutboxWakeups, (hub) => MetricsToParentLive(parentPort!, (wake) => hub.listen({ eventTypes: "all" }, wake))))
      return Layer.mergeAll(ThreadWorkersLive, metricsOut, NoWorkerThread)
    }
    if (c.role === "worker") return Layer.merge(isReconcilerThread ? ThreadWorkersLive : WorkersLive, NoWorkerThread)
    if (c.workerThread && Option.isSome(c.databaseUrl) && Option.isSome(c.natsUrl)) {
      // The reconciler holds one transaction per partition at a time (plus a poison write now and then), the actor one,
      // the insights consumer two (its runner and its cursor; the one-time build takes its turn between them).
      const threadPool = Math.min(c.dbPoolSize, c.reconcilerPartitions + 5)
      // The thread's runners (the automation actor, the insights consumer) wait for this thread's staging nudges.
      const nudgesToThread = Layer.effectDiscard(Effect.sync(forwardNudgesToThreads))
      return Layer.mergeAll(api, DownstreamWorkersLive, nudgesToThread, WorkerThreadLive(new URL(import.meta.url), { DB_POOL_SIZE: String(threadPool) }))
    }
    return Layer.mergeAll(api, WorkersLive, NoWorkerThread)
  })
)

const Main = Announce.pipe(
  // Announced once the roles are built: the HTTP server's layer is only built when it listens, so "listening" is true.
  Layer.provideMerge(Roles.pipe(
    Layer.provide(ServicesLive),
    // The main thread migrated before it started the reconciler's thread, which only connects.
    Layer.provide(isReconcilerThread ? makeDatabaseLive("service") : DatabaseMigrated("service"))
  )),
  // Before everything it traces (a no-op without OTEL_EXPORTER_OTLP_ENDPOINT): src/Tracing.ts.
  Layer.provide(TracingLive),
  Layer.provide(LoggingLive),
  Layer.provideMerge(AppConfigLive)
)

/** The listen error when the port is taken (the server's ServeError wraps Node's EADDRINUSE). */
const portInUse = (cause: Cause.Cause<unknown>) => {
  for (const e of Cause.failures(cause)) {
    const inner = (e as { readonly _tag?: string; readonly cause?: { code?: string; port?: number; address?: string } })
    if (inner._tag === "ServeError" && inner.cause?.code === "EADDRINUSE") return inner.cause
  }
  return undefined
}

/** One clear line for a taken port (exit code 1); any other failure keeps runMain's full report. */
const reportStartFailure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchAllCause(self, (cause) => {
    const taken = portInUse(cause)
    if (!taken) return Effect.failCause(cause)
    return Effect.logError(
      `PORT ${taken.port ?? process.env.PORT ?? 8080} is already in use on ${taken.address ?? "HOST"}: stop the other process or set PORT to a free port.`
    ).pipe(Effect.zipRight(Effect.sync(() => process.exit(1))))
  })

/** Runs until stopped; a worker thread that goes away stops the service (with a failure) rather than leave it half there. */
const program = Effect.scoped(
  Effect.flatMap(Layer.build(Main), (context) => Effect.flatMap(WorkerThreadWatch, (watch) => watch.failed).pipe(Effect.provide(context)))
)

if (isMainThread || parentPort === null) program.pipe(reportStartFailure, NodeRuntime.runMain)
// The same pretty log lines runMain gives the main thread, marked as the worker thread's.
else runAsWorkerThread(program.pipe(Effect.annotateLogs("thread", "worker"), Effect.provide(Logger.pretty)), parentPort)
