import { Layer } from "effect"
import { INSIGHTS_PROBLEMS } from "../../src/contract/Insights.js"
import { capability, Stage } from "../Capability.js"
import { INSIGHTS } from "../outbox/Registry.js"
import { Insights } from "./Insights.js"
import { InsightsLive } from "./InsightsConsumer.js"
import { INSIGHTS_DOCS } from "./InsightsDocs.js"
import { Rollups } from "./Rollups.js"
import { INSIGHTS_EXAMPLES } from "./InsightsExamples.js"

/** Insights: collections analytics from roll-ups the insights consumer keeps. */
export const InsightsCapability = capability({
  name: "insights",
  services: [[Stage.reads, Layer.mergeAll(Insights.Default, Rollups.Default)]],
  workers: [InsightsLive],
  consumers: [INSIGHTS],
  docs: INSIGHTS_DOCS,
  examples: INSIGHTS_EXAMPLES,
  problems: INSIGHTS_PROBLEMS
})
