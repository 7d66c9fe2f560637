import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ApiKeys } from "../../services/access/ApiKeys.js"
import { Tenants } from "../../services/access/Tenants.js"
import type { Mode } from "../domain/Mode.js"
import { CliFailure, type Command } from "./Command.js"
import { withOperatorServices } from "./Env.js"
import { printJson, printLine, printNote } from "./Output.js"
import { existingTenant, jsonOption, OPERATOR_ACTOR } from "./TenantsCommands.js"

const create: Command = {
  path: ["keys", "create"],
  summary: "create an API key for a tenant; prints its clientId and clientSecret once",
  positionals: [],
  options: [
    { name: "tenant", kind: "value", valueName: "ID", description: "the tenant id", required: true },
    { name: "mode", kind: "value", valueName: "test|live", description: "the key's mode", choices: ["test", "live"], required: true },
    jsonOption
  ],
  details: "A live key needs an approved tenant (collections tenants approve <tenantId>). The secret is stored hashed: keep it now.",
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tenants = yield* Tenants
        const keys = yield* ApiKeys
        const tenantId = args.values.get("tenant")!
        const mode = args.values.get("mode") as Mode
        yield* existingTenant(tenantId)
        const key = yield* sql.withTransaction(
          Effect.tap(keys.create(tenantId, mode), (k) =>
            tenants.audit({ tenantId, mode, actor: OPERATOR_ACTOR, action: "api_key.created", subject: k.id })
          )
        ).pipe(
          Effect.catchTags({
            Forbidden: (e) => Effect.fail(new CliFailure({ message: `${e.message} Approve it first: collections tenants approve ${tenantId}` })),
            NotFound: () => Effect.fail(new CliFailure({ message: `unknown tenant ${JSON.stringify(tenantId)}` })),
            SqlError: Effect.die
          })
        )
        if (args.flags.has("json")) return yield* printJson({ ...key, tenantId })
        yield* printLine(`id:           ${key.id}`)
        yield* printLine(`mode:         ${key.mode}`)
        yield* printLine(`clientId:     ${key.clientId}`)
        yield* printLine(`clientSecret: ${key.clientSecret}`)
        yield* printNote("The client secret is shown only this once; it is stored hashed.")
      })
    )
}

export const keysCommands: ReadonlyArray<Command> = [create]
