import { NodeContext } from "@effect/platform-node"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted, String as Str } from "effect"
import { migrations } from "../../migrations/index.js"
import { AppConfigTag } from "../Config.js"
import { embeddedOrRunning } from "./Embedded.js"
import { pgTypes } from "./PgTypes.js"

export const pgClientLayer = (url: Redacted.Redacted<string>, maxConnections: number) =>
  PgClient.layer({
    url,
    maxConnections,
    transformQueryNames: Str.camelToSnake,
    transformResultNames: Str.snakeToCamel,
    types: pgTypes,
    applicationName: "collections"
  })

/** The configured Postgres, or the embedded one under DATA_DIR (started here, or joined if a service already runs it). */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    const url = yield* Option.match(config.databaseUrl, {
      onSome: (u) => Effect.succeed(u),
      onNone: () =>
        embeddedOrRunning(config.dataDir).pipe(
          Effect.tap((e) => Effect.logInfo(`Using the embedded Postgres under ${config.dataDir} (${e.url})`)),
          Effect.map((e) => Redacted.make(e.url)),
          Effect.orDie
        )
    })
    // The embedded server serialises transactions, so a big pool only queues; keep it small there.
    const pool = Option.isSome(config.databaseUrl) ? config.dbPoolSize : Math.min(config.dbPoolSize, 6)
    return pgClientLayer(url, pool)
  })
)

export const MigratorLive = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations as never) }).pipe(
  Layer.provide(NodeContext.layer)
)

/** Postgres with every migration applied. */
export const DatabaseMigrated = MigratorLive.pipe(Layer.provideMerge(DatabaseLive))
