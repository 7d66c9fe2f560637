import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import pg from "pg"
import { Effect, Layer, Option, Redacted, String as Str } from "effect"
import { migrations } from "../../migrations/index.js"
import { AppConfigTag } from "../Config.js"
import { boundedMemo } from "../domain/BoundedMemo.js"
import { embeddedOrRunning, startEmbeddedPostgres } from "./Embedded.js"
import { pgTypes } from "./PgTypes.js"
import { PreparingClient } from "./PreparedStatements.js"

/**
 * A name transform that remembers its answers. Column names are few, and every row of every result has its keys
 * renamed: `snakeToCamel` builds each name a character at a time, and V8 then flattens and interns the string to use
 * it as a key, per key per row (the reconciler's lock read returns 26 columns per account). A remembered name is
 * already an interned string. At most `max` names are kept (names come from our own statements, so the bound is
 * never reached in practice; past it the memo starts again).
 */
export const rememberedNames = (f: (name: string) => string, max = 10_000) => boundedMemo(max, f)

const clientOptions = {
  transformQueryNames: rememberedNames(Str.camelToSnake),
  transformResultNames: rememberedNames(Str.snakeToCamel),
  // Column names only: what json columns hold (payloads, envelopes, risk reasons) is written from our own
  // camelCase objects, so renaming inside it changed nothing and walked every nested key of every row (a visible share
  // of the worker's CPU, on the inbox payloads the reconciler reads back; docs/performance.md).
  transformJson: false
} as const

/**
 * A client on a Postgres server: its pool's connections run repeated statements as named prepared statements
 * (`PreparingClient`) unless `prepare` is false. The first connection is opened at once, so a wrong address fails the
 * start-up.
 */
export const pgClientLayer = (url: Redacted.Redacted<string>, maxConnections: number, prepare = true) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const pool = new pg.Pool({
            connectionString: Redacted.value(url), max: maxConnections, types: pgTypes, application_name: "collections",
            Client: prepare ? PreparingClient : pg.Client,
            // Without it a checkout waits for ever while Postgres is unreachable; with it the request fails, and is
            // answered 503 database_unavailable with Retry-After (src/http/DatabaseUnavailable.ts).
            connectionTimeoutMillis: 5_000
          })
          // An idle connection's error (the server restarted) must not crash the process; the next query reconnects.
          pool.on("error", () => undefined)
          try {
            await pool.query("SELECT 1")
          } catch (cause) {
            await pool.end().catch(() => undefined)
            throw cause
          }
          return pool
        },
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new SqlError({ cause: undefined, message: "PgClient: Connection timed out" }) })),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000))
    ),
    ...clientOptions
  })

/** A client on the embedded PGlite: one connection, statements unnamed (its socket server is the simplest path). */
const embeddedClientLayer = (url: Redacted.Redacted<string>) =>
  PgClient.layer({ url, maxConnections: 1, ...clientOptions, types: pgTypes, applicationName: "collections" })

/**
 * The configured Postgres, or the embedded one under DATA_DIR. The service owns the embedded database (a second
 * service on the same DATA_DIR fails with "in use by pid N"); the operator CLI joins the one a running service serves.
 */
export const makeDatabaseLive = (role: "service" | "cli") =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const config = yield* AppConfigTag
      // PGlite is one backend: its socket server interleaves the extended-protocol messages of concurrent
      // connections ("unnamed prepared statement does not exist", or one query answered with another's rows).
      // One connection per process serialises statements correctly; transactions were serial there anyway.
      const pool = Option.isSome(config.databaseUrl) ? config.dbPoolSize : 1
      const url = yield* Option.match(config.databaseUrl, {
        onSome: (u) => Effect.succeed(u),
        onNone: () =>
          (role === "service"
            ? startEmbeddedPostgres(config.dataDir, { maxConnections: pool })
            : embeddedOrRunning(config.dataDir, { maxConnections: 2 })
          ).pipe(
            Effect.tap((e) => Effect.logInfo(`Using the embedded Postgres under ${config.dataDir} (${e.url})`)),
            Effect.map((e) => Redacted.make(e.url)),
            Effect.orDie
          )
      })
      return Option.isSome(config.databaseUrl) ? pgClientLayer(url, pool, config.dbPreparedStatements) : embeddedClientLayer(url)
    })
  )

/** The numbered migrations under migrations/, for PgMigrator.layer (start-up) and PgMigrator.run (`collections migrate`). */
export const migratorOptions = { loader: PgMigrator.fromRecord(migrations as never) }

export const MigratorLive = PgMigrator.layer(migratorOptions).pipe(
  Layer.provide(NodeContext.layer)
)

/** Postgres with every migration applied. */
export const DatabaseMigrated = (role: "service" | "cli") => MigratorLive.pipe(Layer.provideMerge(makeDatabaseLive(role)))
