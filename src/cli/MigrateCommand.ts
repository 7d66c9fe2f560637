import { PgMigrator } from "@effect/sql-pg"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import { makeDatabaseLive, migratorOptions } from "../db/Database.js"
import { asCliFailure, type Command } from "./Command.js"
import { printLine } from "./Output.js"

export const migrateCommand: Command = {
  path: ["migrate"],
  summary: "apply pending database migrations (the service also applies them at start-up)",
  positionals: [],
  options: [],
  run: () =>
    PgMigrator.run(migratorOptions).pipe(
      Effect.flatMap((applied) =>
        applied.length === 0
          ? printLine("database is up to date")
          : Effect.forEach(applied, ([id, name]) => printLine(`applied ${String(id).padStart(4, "0")}_${name}`), { discard: true })
      ),
      Effect.provide(Layer.merge(makeDatabaseLive("cli"), NodeContext.layer)),
      Effect.catchAllCause((cause) => Effect.failCause(asCliFailure("migration failed")(cause)))
    )
}
