import { HttpApiBuilder } from "@effect/platform"
import { Api } from "../Api.js"
import { notYet } from "./Respond.js"

// Groups whose issues have not landed yet answer 501 problem+json with code not_implemented.

export const InsightsHandlers = HttpApiBuilder.group(Api, "insights", (h) =>
  h.handle("overview", notYet("Insights")).handle("aging", notYet("Insights")).handle("forecast", notYet("Insights"))
    .handle("customers", notYet("Insights")))
