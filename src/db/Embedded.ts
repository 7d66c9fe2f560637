/**
 * The "embedded default" database: PGlite (Postgres compiled to wasm) persisted under
 * `${DATA_DIR}/pgdata`, served on 127.0.0.1 through `PGLiteSocketServer`, so the ordinary
 * `@effect/sql-pg` PgClient talks to it exactly like a real Postgres.
 *
 * PGlite is single-process and has NO lock of its own: two processes that open the same data
 * directory corrupt it for good (seen in a test: "WAL file is from different database system",
 * then every later open aborts). `${DATA_DIR}/embedded-postgres.json` is therefore both the lock
 * and the address of the running server:
 *
 *   - it is created exclusively (hard link of a complete temp file, so readers never see half a
 *     file) with `port: null` BEFORE PGlite is opened, and rewritten with the real port
 *     (temp + rename) once the socket server listens;
 *   - it is removed on scope close, only if it still holds our pid and startedAt;
 *   - a file left by a killed process is stale when its pid is dead, when its pid is our own
 *     (pid reuse, e.g. pid 1 in a container) and we have not opened the directory, or when its
 *     pid is alive but nothing accepts connections on its port (pid reused by another program).
 *
 * The lock is host-local: it relies on pids and 127.0.0.1, so it does not protect a data
 * directory shared by processes in different pid/network namespaces (two containers on one
 * volume).
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { type Duration, Effect, Option, Schedule, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as v8 from "node:v8"
import {
  claim,
  CONNECTION_SLACK,
  DEFAULT_POOL_SIZE,
  EmbeddedDbError,
  type EmbeddedInfo,
  infoPath,
  ioError,
  openedHere,
  PGDATA_DIR_NAME,
  pidAlive,
  probeTcp,
  readInfoSync,
  realDir,
  release,
  replaceAtomicSync
} from "./EmbeddedLock.js"

export { CONNECTION_SLACK, DEFAULT_POOL_SIZE, EmbeddedDbError, type EmbeddedDbErrorReason, INFO_FILE_NAME, PGDATA_DIR_NAME } from "./EmbeddedLock.js"

export interface EmbeddedPostgres {
  readonly url: string
  readonly port: number
}

export interface RunningEmbedded extends EmbeddedPostgres {
  readonly pid: number
}

export interface EmbeddedConnection extends RunningEmbedded {
  /** true: joined a server that another process (or an earlier scope of this one) runs; false: started here, closed with the scope. */
  readonly attached: boolean
}

export interface EmbeddedOptions {
  /** Client pool size the server must serve; the socket allows this + CONNECTION_SLACK. Default 8 (socket allows 12). */
  readonly maxConnections?: number
}

/**
 * PGlite's wasm runs on V8's baseline compiler (Liftoff) only, never tiered up to TurboFan. Tier-up compiles each
 * function of the Postgres module that gets hot, on background threads: after a start that was half of the process's
 * CPU at rest for minutes (perf, issue 33: 330 of 670 ms a minute; `bench:idle` 1.1% of a core, 0.53% without it).
 * The price under load is small: the simulator's deposits on the embedded default, 2 pairs, 37 and 39 a second
 * against 38 and 42 (docs/performance.md). Set before the module is compiled, in the process that opens PGlite only:
 * a service on a real Postgres never loads the wasm, and keeps V8's defaults.
 */
const baselineWasmOnly = () => v8.setFlagsFromString("--liftoff-only")

export const embeddedUrl = (port: number): string => `postgres://postgres@127.0.0.1:${port}/postgres`

/**
 * Opens PGlite under `${dataDir}/pgdata` and serves it on 127.0.0.1 (a free port) until the scope
 * closes. Fails with EmbeddedDbError("InUse") if a live process already has `dataDir` open.
 */
export const startEmbeddedPostgres = (
  dataDir: string,
  opts?: EmbeddedOptions
): Effect.Effect<EmbeddedPostgres, EmbeddedDbError, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = opts?.maxConnections ?? DEFAULT_POOL_SIZE
    if (!Number.isInteger(pool) || pool < 1) {
      return yield* new EmbeddedDbError({ reason: "StartFailed", dataDir, message: `maxConnections must be a positive integer, got ${pool}` })
    }
    const pgdata = path.join(dataDir, PGDATA_DIR_NAME)
    yield* Effect.try({ try: () => fs.mkdirSync(pgdata, { recursive: true }), catch: ioError(dataDir, `cannot create ${pgdata}`) })
    const dir = realDir(dataDir)

    const held = yield* Effect.acquireRelease(claim(dataDir, dir), release)

    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          baselineWasmOnly()
          return PGlite.create({ dataDir: path.join(dir, PGDATA_DIR_NAME) })
        },
        catch: (cause) =>
          new EmbeddedDbError({
            reason: "StartFailed",
            dataDir,
            message:
              `Embedded Postgres: PGlite could not open ${path.join(dir, PGDATA_DIR_NAME)} ` +
              `(${cause instanceof Error ? cause.message : String(cause)}); see its log above — "Aborted()" usually means a damaged data directory`,
            cause
          })
      }),
      (db) =>
        Effect.tryPromise(() => db.close()).pipe(
          Effect.timeout("15 seconds"),
          Effect.catchAll((e) => Effect.logWarning("Embedded Postgres: PGlite did not close cleanly", e))
        )
    )

    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: pool + CONNECTION_SLACK })
          await server.start()
          return server
        },
        catch: (cause) =>
          new EmbeddedDbError({
            reason: "StartFailed",
            dataDir,
            message: `Embedded Postgres: the socket server did not start (${cause instanceof Error ? cause.message : String(cause)})`,
            cause
          })
      }),
      (server) =>
        Effect.tryPromise(() => server.stop()).pipe(
          Effect.timeout("5 seconds"),
          Effect.catchAll((e) => Effect.logWarning("Embedded Postgres: the socket server did not stop cleanly", e))
        )
    )

    // getServerConn() is "host:port"; the port is the real one once start() resolved.
    const port = Number(server.getServerConn().split(":").at(-1))
    if (!Number.isInteger(port) || port <= 0) {
      return yield* new EmbeddedDbError({
        reason: "StartFailed",
        dataDir,
        message: `Embedded Postgres: cannot read the listening port from ${JSON.stringify(server.getServerConn())}`
      })
    }

    const info: EmbeddedInfo = { port, pid: process.pid, startedAt: held.info.startedAt }
    yield* Effect.try({
      try: () => replaceAtomicSync(held.file, JSON.stringify(info) + "\n"),
      catch: ioError(dataDir, `cannot write ${held.file}`)
    })
    yield* Effect.logDebug(`Embedded Postgres: ${path.join(dir, PGDATA_DIR_NAME)} on 127.0.0.1:${port}`)
    return { url: embeddedUrl(port), port }
  })

/**
 * The embedded server a live process runs for `dataDir`, if any: its info file names a live pid
 * and a TCP connect to its port succeeds within ~1 s. Never opens the data directory.
 */
export const findRunningEmbedded = (dataDir: string): Effect.Effect<Option.Option<RunningEmbedded>> =>
  Effect.gen(function* () {
    const dir = realDir(dataDir)
    const read = yield* Effect.try(() => readInfoSync(infoPath(dir))).pipe(Effect.orElseSucceed(() => ({ _tag: "Missing" }) as const))
    if (read._tag !== "Valid" || read.info.port === null) return Option.none()
    const { pid, port } = read.info
    const alive = pid === process.pid ? openedHere.has(dir) : pidAlive(pid)
    if (!alive) return Option.none()
    const probe = yield* probeTcp(port, "1 second")
    return probe === "connected" ? Option.some({ url: embeddedUrl(port), port, pid }) : Option.none()
  })

/**
 * For the service and the operator CLI alike: the url of the embedded server already running
 * for `dataDir` (attached: true; nothing to close), or else a new one started in this scope.
 * If another process is starting one right now, waits up to `waitForStartup` for it.
 */
export const embeddedOrRunning = (
  dataDir: string,
  opts?: EmbeddedOptions & { readonly waitForStartup?: Duration.DurationInput }
): Effect.Effect<EmbeddedConnection, EmbeddedDbError, Scope.Scope> => {
  const attached = (r: RunningEmbedded): EmbeddedConnection => ({ ...r, attached: true })
  return findRunningEmbedded(dataDir).pipe(
    Effect.flatMap(
      Option.match({
        onSome: (r) => Effect.succeed(attached(r)),
        onNone: () =>
          startEmbeddedPostgres(dataDir, opts).pipe(
            Effect.map((s): EmbeddedConnection => ({ ...s, pid: process.pid, attached: false })),
            Effect.catchIf(
              (e) => e.reason === "InUse",
              (inUse) =>
                // Someone else holds it, perhaps still booting: wait for its server to answer.
                findRunningEmbedded(dataDir).pipe(
                  Effect.flatMap(Option.match({ onNone: () => Effect.fail(inUse), onSome: (r) => Effect.succeed(attached(r)) })),
                  Effect.retry(Schedule.spaced("250 millis")),
                  Effect.timeoutFail({ duration: opts?.waitForStartup ?? "20 seconds", onTimeout: () => inUse })
                )
            )
          )
      })
    )
  )
}
