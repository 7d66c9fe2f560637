import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { AppConfigTag } from "./Config.js"
import { DatabaseMigrated } from "./db/Database.js"
import { NodeServerLive } from "./http/NodeServer.js"
import { ReceiverFastPathLive } from "./http/ReceiverFastPath.js"
import { HttpLive } from "./http/Server.js"
import { AppConfigLive, LoggingLive } from "./Runtime.js"
import { ServicesLive, WorkersLive } from "./Services.js"

const HttpServerLive = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) => NodeServerLive({ port: c.port, host: c.host }))
)

const Announce = Layer.effectDiscard(
  Effect.gen(function* () {
    const c = yield* AppConfigTag
    yield* Effect.logInfo(
      `collections listening on http://${c.host === "0.0.0.0" ? "localhost" : c.host}:${c.port} ` +
        `(database: ${Option.isSome(c.databaseUrl) ? "DATABASE_URL" : `embedded under ${c.dataDir}`}, ` +
        `bus: ${Option.isSome(c.natsUrl) ? c.natsUrl.value : "in-process"}); docs at /docs`
    )
  })
)

const Main = Layer.mergeAll(HttpLive, ReceiverFastPathLive, WorkersLive).pipe(
  Layer.provide(HttpServerLive),
  Layer.provide(ServicesLive),
  Layer.provide(DatabaseMigrated("service")),
  Layer.merge(Announce),
  Layer.provide(LoggingLive),
  Layer.provideMerge(AppConfigLive)
)

Layer.launch(Main).pipe(NodeRuntime.runMain)
