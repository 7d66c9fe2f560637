import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type OnboardingStatus, Tenants } from "../../services/Tenants.js"
import type { OptionSpec } from "./Args.js"
import { CliFailure, type Command } from "./Command.js"
import { withOperatorServices } from "./Env.js"
import { formatTable, printJson, printLine } from "./Output.js"

/** The audit actor for everything done through this CLI. */
export const OPERATOR_ACTOR = "operator:cli"

export const jsonOption: OptionSpec = { name: "json", kind: "flag", description: "print JSON instead of text" }

/** The tenant, or a CliFailure naming the id that matched nothing. */
export const existingTenant = (tenantId: string) =>
  Effect.flatMap(Tenants, (tenants) => tenants.find(tenantId)).pipe(
    Effect.flatMap((t) => (t ? Effect.succeed(t) : Effect.fail(new CliFailure({ message: `unknown tenant ${JSON.stringify(tenantId)}` }))))
  )

const list: Command = {
  path: ["tenants", "list"],
  summary: "list tenants, newest first",
  positionals: [],
  options: [jsonOption],
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const rows = yield* Effect.flatMap(Tenants, (t) => t.list())
        const view = rows.map((t) => ({ id: t.id, name: t.name, onboardingStatus: t.onboardingStatus, createdAt: t.createdAt.toISOString() }))
        if (args.flags.has("json")) return yield* printJson(view)
        if (view.length === 0) return yield* printLine("no tenants yet")
        yield* printLine(formatTable(["ID", "NAME", "ONBOARDING", "CREATED"], view.map((t) => [t.id, t.name, t.onboardingStatus, t.createdAt])))
      })
    )
}

const create: Command = {
  path: ["tenants", "create"],
  summary: "create a tenant (no dashboard user); prints its id",
  positionals: [],
  options: [{ name: "name", kind: "value", valueName: "NAME", description: "the business name", required: true }, jsonOption],
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tenants = yield* Tenants
        const name = args.values.get("name")!.trim()
        const id = yield* sql.withTransaction(
          Effect.tap(tenants.create(name), (id) =>
            tenants.audit({ tenantId: id, mode: null, actor: OPERATOR_ACTOR, action: "tenant.created", subject: id, details: { name } })
          )
        ).pipe(Effect.orDie)
        yield* args.flags.has("json") ? printJson({ id, name, onboardingStatus: "NotStarted" }) : printLine(id)
      })
    )
}

const decide = (status: Extract<OnboardingStatus, "Approved" | "Rejected">, verb: string): Command => ({
  path: ["tenants", verb],
  summary: `${verb} a tenant's onboarding (audited as ${OPERATOR_ACTOR})`,
  positionals: ["tenantId"],
  options: [],
  ...(status === "Approved" ? { details: "An approved tenant can create live API keys and provision live virtual accounts." } : {}),
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tenants = yield* Tenants
        const tenantId = args.positionals[0]!
        const before = yield* sql.withTransaction(
          Effect.gen(function* () {
            const tenant = yield* existingTenant(tenantId)
            yield* tenants.setOnboarding(tenantId, status).pipe(Effect.orDie)
            yield* tenants.audit({
              tenantId,
              mode: null,
              actor: OPERATOR_ACTOR,
              action: `onboarding.${status.toLowerCase()}`,
              subject: tenantId,
              details: { previous: tenant.onboardingStatus }
            })
            return tenant.onboardingStatus
          })
        ).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* printLine(`${tenantId}: onboarding ${status}${before === status ? " (unchanged)" : ` (was ${before})`}`)
      })
    )
})

export const tenantsCommands: ReadonlyArray<Command> = [list, create, decide("Approved", "approve"), decide("Rejected", "reject")]
