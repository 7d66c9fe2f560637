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
    const stores = `(database: ${Option.isSome(c.databaseUrl) ? "DATABASE_URL" : `embedded under ${c.dataDir}`}, ` +
      `bus: ${Option.isSome(c.natsUrl) ? c.natsUrl.value : "in-process"})`
    if (c.role === "worker") return yield* Effect.logInfo(`collections worker running: reconciler, sweeper, outbox relay, webhook dispatch ${stores}`)
    yield* Effect.logInfo(
      `collections ${c.role === "api" ? "API (no workers) " : ""}listening on http://${c.host === "0.0.0.0" ? "localhost" : c.host}:${c.port} ` +
        `${stores}; docs at /docs`
    )
  })
)

/** What SERVICE_ROLE asks this process to run (see Config). */
const Roles = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) => {
    const api = Layer.merge(HttpLive, ReceiverFastPathLive).pipe(Layer.provide(HttpServerLive))
    if (c.role === "api") return api
    if (c.role === "worker") return WorkersLive
    return Layer.merge(api, WorkersLive)
  })
)

const Main = Roles.pipe(
  Layer.provide(ServicesLive),
  Layer.provide(DatabaseMigrated("service")),
  Layer.merge(Announce),
  Layer.provide(LoggingLive),
  Layer.provideMerge(AppConfigLive)
)

Layer.launch(Main).pipe(NodeRuntime.runMain)
