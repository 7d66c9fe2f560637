import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Redacted, Schedule } from "effect"
import pg from "pg"
import { AppConfigTag } from "../../src/Config.js"
import { OutboxWakeups } from "./Wakeups.js"

/**
 * Wake-ups between processes (issue 33). Within a process, staging nudges the runners at once (Wakeups.ts); a process
 * that stages but runs no consumer (an API process, SERVICE_ROLE=api, or the operator CLI) tells the others with a
 * Postgres NOTIFY in its staging transaction (delivered when it commits, dropped if it rolls back), and every process
 * that runs the workers on a real Postgres LISTENs and nudges its own hub. So the runners can wait long at rest
 * (RunnerOptions.idlePollMs) without events from an API process waiting for that poll.
 *
 * NOTIFY is not on the deposit path: the reconciler stages its events in the process (and thread) whose hub its
 * runners listen to. It serialises the commits of notifying transactions (Postgres takes one lock for the queue),
 * which an API process's staging (accounts, payouts, replays) does not feel.
 */
export const WAKEUP_CHANNEL = "collections_wakeups"

/** In the caller's transaction: wakes other processes' runners that want these types once it commits. */
export const notifyOtherProcesses = (sql: SqlClient.SqlClient, types: Iterable<string>) =>
  Effect.asVoid(sql`SELECT pg_notify(${WAKEUP_CHANNEL}, ${[...new Set(types)].join(",")})`)

/**
 * After pending rows were put back outside staging (a replay of the reconciled stream, a dead letter requeued, by the
 * operator CLI or the API): wakes the runners of these types here and, through Postgres, in every other process. Rare,
 * so always both; runs as its own statement (after the caller's has committed).
 */
export const wakeEverywhere = (sql: SqlClient.SqlClient, types: ReadonlyArray<string>) =>
  types.length === 0
    ? Effect.void
    : Effect.flatMap(OutboxWakeups, (hub) => Effect.sync(() => hub.nudge(types))).pipe(
      Effect.zipRight(notifyOtherProcesses(sql, types)),
      Effect.orDie
    )

/** Whether this process's staging should NOTIFY (it runs no consumer runners of its own). */
export const stagesForOthers = (role: "all" | "api" | "worker") => role === "api"

/**
 * LISTENs on its own connection (outside the pool) while the layer lives, nudging this process's hub per notification.
 * A lost connection is opened again every 2 s; when it is back every runner is nudged once (it may have missed some).
 * One warning when the link goes, one line when it is back. Nothing on the embedded default (one process).
 */
export const CrossProcessWakeupsLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    if (Option.isNone(config.databaseUrl)) return
    const connectionString = Redacted.value(config.databaseUrl.value)
    const hub = yield* OutboxWakeups
    let failedSince: number | undefined

    const session = Effect.scoped(
      Effect.gen(function* () {
        const client = yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: async () => {
              const c = new pg.Client({ connectionString, application_name: "collections-wakeups" })
              c.on("error", () => undefined)
              try {
                await c.connect()
                await c.query(`LISTEN ${WAKEUP_CHANNEL}`)
              } catch (e) {
                await c.end().catch(() => undefined)
                throw e
              }
              return c
            },
            // pg's messages name the host and the failure, never the password.
            catch: (e) => new Error(e instanceof Error ? e.message : String(e))
          }),
          (c) => Effect.promise(() => c.end().catch(() => undefined)).pipe(Effect.timeoutOption("1 second"))
        )
        if (failedSince !== undefined) {
          yield* Effect.logInfo(`wake-ups from other processes: listening again after ${Math.round((Date.now() - failedSince) / 1000)} s`)
          failedSince = undefined
        }
        hub.nudgeAll()
        return yield* Effect.async<never, Error>((resume) => {
          const onNotification = (m: pg.Notification) => {
            if (m.payload) hub.nudge(m.payload.split(","))
          }
          const onGone = (e?: Error) => resume(Effect.fail(new Error(`the LISTEN connection ended${e ? `: ${e.message}` : ""}`)))
          client.on("notification", onNotification)
          client.on("error", onGone)
          client.on("end", onGone)
          return Effect.sync(() => {
            client.off("notification", onNotification)
            client.off("error", onGone)
            client.off("end", onGone)
          })
        })
      })
    )
    yield* session.pipe(
      Effect.tapError((e) =>
        failedSince === undefined
          ? Effect.sync(() => void (failedSince = Date.now())).pipe(
            Effect.zipRight(Effect.logWarning(`wake-ups from other processes: not listening (${e.message}); trying every 2 s, the runners poll meanwhile`))
          )
          : Effect.void
      ),
      Effect.retry(Schedule.spaced("2 seconds")),
      Effect.annotateLogs({ component: "wakeups" }),
      Effect.forkScoped
    )
  })
)
