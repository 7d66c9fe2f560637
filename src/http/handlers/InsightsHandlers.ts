import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Insights } from "../../../services/insights/Insights.js"
import { DEFAULT_TAKE } from "../../contract/Schemas.js"
import { Api } from "../Api.js"
import { requireDashboard } from "../Security.js"

// Insights: the dashboard plane (any role), for the token's tenant and mode.

/** Customers answered per request: default 50, at most 500. */
const MAX_CUSTOMERS = 500
/** The forecast horizon when `days` is left out. */
const DEFAULT_FORECAST_DAYS = 30

export const InsightsHandlers = HttpApiBuilder.group(Api, "insights", (h) =>
  Effect.gen(function* () {
    const insights = yield* Insights
    return h
      .handle("overview", ({ urlParams }) => Effect.flatMap(requireDashboard(), (p) => insights.overview(p, urlParams)))
      .handle("aging", () => Effect.flatMap(requireDashboard(), (p) => insights.aging(p)))
      .handle("forecast", ({ urlParams }) => Effect.flatMap(requireDashboard(), (p) => insights.forecast(p, urlParams.days ?? DEFAULT_FORECAST_DAYS)))
      .handle("customers", ({ urlParams }) =>
        Effect.flatMap(requireDashboard(), (p) => insights.customers(p, Math.min(MAX_CUSTOMERS, urlParams.take ?? DEFAULT_TAKE))))
  })
)
