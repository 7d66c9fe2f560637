import { Effect, Layer } from "effect"
import { WebhookDeliveries } from "../../services/webhooks/WebhookDeliveries.js"
import { DatabaseMigrated } from "../db/Database.js"
import { asCliFailure, CliFailure, type Command } from "./Command.js"
import { formatTable, printJson, printLine } from "./Output.js"
import { jsonOption } from "./TenantsCommands.js"

const DeliveriesLive = WebhookDeliveries.Default.pipe(Layer.provideMerge(DatabaseMigrated("cli")))
const withDeliveries = <A>(effect: Effect.Effect<A, CliFailure, WebhookDeliveries>) =>
  Effect.provide(effect, DeliveriesLive.pipe(Layer.catchAllCause((cause) => Layer.failCause(asCliFailure("cannot open the database")(cause)))))

const list: Command = {
  path: ["dead-letters", "list"],
  summary: "list dead-lettered webhook deliveries, newest first",
  positionals: [],
  options: [
    { name: "tenant", kind: "value", valueName: "ID", description: "only this tenant" },
    { name: "take", kind: "value", valueName: "N", description: "at most N (default 50, max 500)" },
    jsonOption
  ],
  run: (args) =>
    withDeliveries(
      Effect.gen(function* () {
        const take = args.values.get("take")
        if (take !== undefined && !/^\d+$/.test(take)) return yield* new CliFailure({ message: `--take must be a positive integer, got ${JSON.stringify(take)}` })
        const tenantId = args.values.get("tenant")
        const rows = yield* Effect.flatMap(WebhookDeliveries, (d) =>
          d.listDeadLetters({ ...(tenantId !== undefined ? { tenantId } : {}), ...(take !== undefined ? { take: Number(take) } : {}) })
        )
        if (args.flags.has("json")) return yield* printJson(rows)
        if (rows.length === 0) return yield* printLine("no dead letters")
        yield* printLine(formatTable(
          ["ID", "TENANT", "MODE", "EVENT", "ATTEMPTS", "LAST STATUS", "LAST ERROR"],
          rows.map((r) => [r.id, r.tenantId, r.mode, r.eventType, String(r.attempts), String(r.lastStatusCode ?? "-"), r.lastError ?? "-"])
        ))
      })
    )
}

const replay: Command = {
  path: ["dead-letters", "replay"],
  summary: "requeue one dead-lettered (or failed) webhook delivery for an immediate retry",
  positionals: ["id"],
  options: [],
  run: (args) =>
    withDeliveries(
      Effect.gen(function* () {
        const id = args.positionals[0]!
        const view = yield* Effect.flatMap(WebhookDeliveries, (d) => d.replayDelivery(id)).pipe(
          Effect.catchAll((e) => Effect.fail(new CliFailure({ message: e.message })))
        )
        yield* printLine(`requeued ${view.id} (${view.eventType}); status ${view.status}, next attempt ${view.nextAttemptAt ?? "now"}`)
      })
    )
}

export const deadLetterCommands: ReadonlyArray<Command> = [list, replay]
