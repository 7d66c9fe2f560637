import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Flows } from "../../../services/automation/Flows.js"
import { Rules } from "../../../services/automation/Rules.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin, requireDashboard, requireOwnerOrAdmin } from "../Security.js"

// Money rules (either plane; changes by an API key or a dashboard Owner/Admin) and payment flows (dashboard plane;
// changes by an Owner or Admin).

export const RulesHandlers = HttpApiBuilder.group(Api, "rules", (h) =>
  Effect.gen(function* () {
    const rules = yield* Rules
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => rules.list(p, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => rules.create(p, payload, actorOf(p))))
      .handle("dryRun", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => rules.dryRun(p, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => rules.remove(p, path.id, actorOf(p))))
  })
)

export const FlowsHandlers = HttpApiBuilder.group(Api, "flows", (h) =>
  Effect.gen(function* () {
    const flows = yield* Flows
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(requireDashboard(), (p) => flows.list(p, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(requireOwnerOrAdmin, (p) => flows.create(p, payload, actorOf(p))))
      .handle("runs", ({ urlParams }) => Effect.flatMap(requireDashboard(), (p) => flows.runs(p, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(requireDashboard(), (p) => flows.get(p, path.id)))
      .handle("replace", ({ path, payload }) => Effect.flatMap(requireOwnerOrAdmin, (p) => flows.replace(p, path.id, payload, actorOf(p))))
      .handle("delete", ({ path }) => Effect.flatMap(requireOwnerOrAdmin, (p) => flows.remove(p, path.id, actorOf(p))))
      .handle("setEnabled", ({ path, payload }) => Effect.flatMap(requireOwnerOrAdmin, (p) => flows.setEnabled(p, path.id, payload.enabled, actorOf(p))))
      .handle("dryRun", ({ path, payload }) => Effect.flatMap(requireDashboard(), (p) => flows.dryRun(p, path.id, payload?.take)))
  })
)
