import { Effect } from "effect"
import type { BadRequest } from "../../src/contract/Problems.js"
import type { InsightsAging, InsightsCustomers, InsightsForecast, InsightsOverview } from "../../src/contract/Insights.js"
import type { Scope } from "../../src/domain/Mode.js"

/** An optional Lagos date range (`YYYY-MM-DD`, both ends included) for the overview. */
export interface OverviewRange {
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/**
 * The insight read service: every figure for the caller's tenant and mode, from the roll-ups the insights consumer
 * keeps (services/insights/Rollups.ts), never a scan of every transaction. BUILDING: the implementation lands next.
 */
export class Insights extends Effect.Service<Insights>()("services/insights/Insights", {
  succeed: {
    overview: (_scope: Scope, _range: OverviewRange): Effect.Effect<InsightsOverview, BadRequest> => Effect.dieMessage("insights: not built yet"),
    aging: (_scope: Scope): Effect.Effect<InsightsAging> => Effect.dieMessage("insights: not built yet"),
    forecast: (_scope: Scope, _days: number): Effect.Effect<InsightsForecast> => Effect.dieMessage("insights: not built yet"),
    customers: (_scope: Scope, _take: number): Effect.Effect<InsightsCustomers> => Effect.dieMessage("insights: not built yet")
  }
}) {}
