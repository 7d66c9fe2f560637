import { HttpApiBuilder } from "@effect/platform"
import { Api } from "../Api.js"
import { notYet } from "./Respond.js"

// Groups whose issues have not landed yet answer 501 problem+json with code not_implemented.

export const CopilotHandlers = HttpApiBuilder.group(Api, "copilot", (h) => h.handle("ask", notYet("The copilot")))
