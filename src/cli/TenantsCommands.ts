import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type OnboardingStatus, Tenants } from "../../services/access/Tenants.js"
import { PayoutCaps } from "../../services/transfers/PayoutCaps.js"
import type { Mode } from "../domain/Mode.js"
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

const forceOption: OptionSpec = {
  name: "force", kind: "flag", description: "approve a tenant that never submitted onboarding (status NotStarted); audited as forced"
}

/** Approving a tenant with no onboarding details on file unlocks live money on nothing: the operator must say so. */
const notSubmitted = (tenantId: string) =>
  new CliFailure({
    message: `tenant ${tenantId} has not submitted onboarding (status NotStarted): there are no business details to approve, ` +
      `and approval unlocks live keys and live accounts. Nothing was changed. If you mean it, run: collections tenants approve ${tenantId} --force`
  })

const decide = (status: Extract<OnboardingStatus, "Approved" | "Rejected">, verb: string): Command => ({
  path: ["tenants", verb],
  summary: `${verb} a tenant's onboarding (audited as ${OPERATOR_ACTOR})`,
  positionals: ["tenantId"],
  options: status === "Approved" ? [forceOption] : [],
  ...(status === "Approved"
    ? {
      details: "An approved tenant can create live API keys and provision live virtual accounts. A tenant that never submitted " +
        "onboarding (NotStarted) is refused (exit 1, nothing changed) unless --force is given; a forced approval is audited with forced: true."
    }
    : {}),
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tenants = yield* Tenants
        const tenantId = args.positionals[0]!
        const { before, forced } = yield* sql.withTransaction(
          Effect.gen(function* () {
            const tenant = yield* existingTenant(tenantId)
            const forced = status === "Approved" && tenant.onboardingStatus === "NotStarted"
            if (forced && !args.flags.has("force")) return yield* notSubmitted(tenantId)
            yield* tenants.setOnboarding(tenantId, status).pipe(Effect.orDie)
            yield* tenants.audit({
              tenantId,
              mode: null,
              actor: OPERATOR_ACTOR,
              action: `onboarding.${status.toLowerCase()}`,
              subject: tenantId,
              details: { previous: tenant.onboardingStatus, ...(forced ? { forced: true } : {}) }
            })
            return { before: tenant.onboardingStatus, forced }
          })
        ).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* printLine(`${tenantId}: onboarding ${status}${before === status ? " (unchanged)" : ` (was ${before}${forced ? ", forced" : ""})`}`)
      })
    )
})

const setPayoutCap: Command = {
  path: ["tenants", "set-payout-cap"],
  summary: "set a tenant's daily payout cap for a mode (integer kobo per Africa/Lagos day)",
  positionals: ["tenantId"],
  options: [
    { name: "mode", kind: "value", valueName: "test|live", description: "the mode the cap applies to", choices: ["test", "live"], required: true },
    { name: "daily-kobo", kind: "value", valueName: "N", description: "the cap in integer kobo (1 naira = 100 kobo), 0 to stop payouts", required: true }
  ],
  details: "Applies to today's remaining payouts at once. The default is 500000000 kobo (5,000,000.00 NGN). A tenant reads it at GET /api/v1/balance.",
  run: (args) =>
    withOperatorServices(
      Effect.gen(function* () {
        const tenantId = args.positionals[0]!
        const mode = args.values.get("mode") as Mode
        const raw = args.values.get("daily-kobo")!
        const kobo = Number(raw)
        if (!/^\d+$/.test(raw) || !Number.isSafeInteger(kobo)) {
          return yield* new CliFailure({ message: `--daily-kobo must be a whole number of kobo (1 naira = 100 kobo), got ${JSON.stringify(raw)}` })
        }
        const tenant = yield* existingTenant(tenantId)
        const caps = yield* PayoutCaps
        const before = yield* caps.capOf({ tenantId, mode })
        yield* caps.setDailyCap({ tenantId, mode }, kobo)
        yield* Effect.flatMap(Tenants, (t) =>
          t.audit({ tenantId, mode, actor: OPERATOR_ACTOR, action: "payout_cap.set", subject: tenantId, details: { dailyCapKobo: kobo, previous: before } }))
        yield* printLine(`${tenant.id} (${mode}): daily payout cap ${kobo} kobo (was ${before})`)
      })
    )
}

export const tenantsCommands: ReadonlyArray<Command> = [list, create, decide("Approved", "approve"), decide("Rejected", "reject"), setPayoutCap]
