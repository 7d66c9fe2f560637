import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Copilot } from "../../../services/copilot/Copilot.js"
import { Api } from "../Api.js"
import { requireDashboard } from "../Security.js"

// The copilot: the dashboard plane, any role, in the token's tenant and mode.

export const CopilotHandlers = HttpApiBuilder.group(Api, "copilot", (h) =>
  Effect.gen(function* () {
    const copilot = yield* Copilot
    return h.handle("ask", ({ payload }) => Effect.flatMap(requireDashboard(), (p) => copilot.ask(p, payload.prompt)))
  })
)
