import { Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Queue } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { isMainThread, type MessagePort, Worker, workerData } from "node:worker_threads"
import { Metrics, type MetricsShape } from "./Metrics.js"
import { outageLog } from "./OutageLog.js"
import { type Pace, pacedPasses } from "./Pacing.js"

/** Whether this thread is the reconciler's thread that WorkerThreadLive started (the workerData it gives). */
export const isReconcilerThread = !isMainThread && (workerData as { reconcilerOnly?: unknown } | null)?.reconcilerOnly === true

/** What the parent posts to ask the worker thread to stop (it finishes what it holds, then exits). */
const STOP = "stop"
/** How long a stop may take before the thread is terminated. */
const STOP_TIMEOUT_MS = 15_000

/** The URL of tsx's ESM API (`tsx/esm/api` under the import condition), read from its package's exports map. */
const tsxEsmApi = () => {
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json")
  const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }
  return pathToFileURL(path.join(path.dirname(manifest), pkg.exports["./esm/api"]!.import.default)).href
}

/**
 * How a worker thread loads `entry`. TypeScript sources (the service runs under tsx) need tsx's loader in that thread
 * first: Node 20 does not carry `--import tsx` hooks into a worker's entry, so a two-line bootstrap registers them.
 */
const workerEntry = (entry: URL): [string | URL, { eval: true } | {}] => {
  if (!entry.pathname.endsWith(".ts")) return [entry, {}]
  return [`import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}) })`, { eval: true }]
}

/**
 * How the process learns that its worker thread has gone: `failed` fails once the thread exits or errors while the
 * service is running (never, when there is no worker thread).
 */
export class WorkerThreadWatch extends Context.Tag("src/WorkerThreadWatch")<WorkerThreadWatch, { readonly failed: Effect.Effect<never, Error> }>() {}

export const NoWorkerThread = Layer.succeed(WorkerThreadWatch, { failed: Effect.never })

/**
 * The reconciler on a second thread of this process, with its own event loop: `entry` is run there with
 * SERVICE_ROLE=worker (and `workerData.reconcilerOnly`), as a worker process would run it, but with the reconciler
 * and the capabilities' thread workers alone (the automation actor, the insight roll-ups: src/Services.ts); the main
 * thread keeps the API, the receiver and the workers downstream of the reconciler (sweeper, outbox relay, webhook
 * dispatch, table statistics). The two sides share nothing but Postgres and NATS, as split processes do.
 *
 * Why: on one thread the service's event loop was the bottleneck (runnable about nine tenths of a run, the machine
 * 16% idle). With the reconciler alone on the second thread the two threads carry about the same load (the receiver
 * ran ahead when the downstream workers sat with the reconciler).
 *
 * `env` adds to the thread's environment (the caller gives it a smaller DB_POOL_SIZE: it runs one transaction per
 * partition at a time).
 *
 * Closing the scope asks the thread to stop and waits for it (terminating it after STOP_TIMEOUT_MS). Should the
 * thread end on its own, `failed` fails, and the caller stops the service rather than run without its reconciler.
 */
export const WorkerThreadLive = (entry: URL, env: Record<string, string> = {}) =>
  Layer.scoped(
    WorkerThreadWatch,
    Effect.gen(function* () {
      const gone = yield* Deferred.make<never, Error>()
      const metrics = yield* Metrics
      let stopping = false
      const worker = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const [source, how] = workerEntry(entry)
          const w = new Worker(source, { ...how, name: "collections-worker", env: { ...process.env, ...env, SERVICE_ROLE: "worker" }, workerData: { reconcilerOnly: true } })
          // The thread's counts (the reconciler's): summed into this thread's /metrics (MetricsToParentLive).
          w.on("message", (m: unknown) => {
            if (isMetricsMessage(m)) metrics.setThreadSnapshot(m.values)
          })
          w.on("error", (e) => void Deferred.unsafeDone(gone, Exit.fail(new Error(`the worker thread failed: ${e.message}`))))
          w.on("exit", (code) => {
            if (!stopping) Deferred.unsafeDone(gone, Exit.fail(new Error(`the worker thread exited (code ${code})`)))
          })
          return w
        }),
        (w) =>
          Effect.async<void>((resume) => {
            stopping = true
            if (w.threadId === -1) return resume(Effect.void)
            const timer = setTimeout(() => void w.terminate(), STOP_TIMEOUT_MS)
            w.once("exit", () => {
              clearTimeout(timer)
              resume(Effect.void)
            })
            w.postMessage(STOP)
          })
      )
      yield* Effect.logInfo(`reconciler running on thread ${worker.threadId}`)
      return { failed: Deferred.await(gone) }
    })
  )

interface MetricsMessage {
  readonly type: "metrics"
  readonly values: Parameters<MetricsShape["setThreadSnapshot"]>[0]
}
const isMetricsMessage = (m: unknown): m is MetricsMessage => typeof m === "object" && m !== null && (m as { type?: unknown }).type === "metrics"

/**
 * How the thread looks at its counts: every second while they change; after a look that found them unchanged, twice as
 * long each time up to 30 s (issue 33: a snapshot a second was a share of the idle CPU).
 */
const METRICS_PACE: Pace = { baseMs: 1_000, idleMaxMs: 30_000 }

/**
 * The worker thread's side of /metrics: its registry's counts so far (not deltas, so a message lost changes nothing) go
 * to the main thread over the thread's own message port, which sums them into each scrape (prom-client's
 * AggregatorRegistry, made for cluster workers), only when they changed, paced by METRICS_PACE (src/Pacing.ts).
 * `listen` (the thread's staging wake-ups: a batch applied) ends a long wait: the next look comes a second later.
 * Nothing per deposit.
 */
export const MetricsToParentLive = (parent: MessagePort, listen?: (wake: () => void) => () => void) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const news = yield* Queue.sliding<void>(1)
      if (listen !== undefined) {
        const stop = listen(() => news.unsafeOffer(undefined))
        yield* Effect.addFinalizer(() => Effect.sync(stop))
      }
      let last = ""
      const post = Effect.map(Effect.promise(() => metrics.snapshot()), (values) => {
        const text = JSON.stringify(values)
        if (text === last) return false
        last = text
        parent.postMessage({ type: "metrics", values } satisfies MetricsMessage)
        return true
      })
      const wake = Queue.take(news).pipe(Effect.zipRight(Effect.sleep(Duration.millis(METRICS_PACE.baseMs))))
      yield* Effect.forkScoped(pacedPasses(METRICS_PACE, post, (changed) => changed, { outages: yield* outageLog("reconciler thread metrics"), wake }))
    })
  )

/**
 * The worker thread's side: runs `program` until the parent posts STOP (interrupting it, so every finaliser runs),
 * then lets the thread end; a program that fails ends the thread with code 1.
 */
export const runAsWorkerThread = (program: Effect.Effect<never, unknown>, parent: MessagePort) => {
  const fiber = Effect.runFork(program)
  parent.on("message", (m) => {
    if (m === STOP) Effect.runFork(Fiber.interrupt(fiber))
  })
  fiber.addObserver((exit) => {
    if (Exit.isFailure(exit) && !Exit.isInterrupted(exit)) {
      console.error("worker thread stopped", exit.cause)
      process.exitCode = 1
    }
    parent.close()
  })
}
