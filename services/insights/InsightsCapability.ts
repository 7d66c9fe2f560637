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
  // On the reconciler's thread when there is one (issue 33): its passes then take no turn from the receiver and the
  // relay on the main thread, and the deposits it counts are staged by that thread's own reconciler. Interleaved bench
  // pairs: 1.08 x the same code with it on the main thread (docs/performance.md, "This session (2026-11-30, evening").
  threadWorkers: [InsightsLive],
  consumers: [INSIGHTS],
  docs: INSIGHTS_DOCS,
  examples: INSIGHTS_EXAMPLES,
  problems: INSIGHTS_PROBLEMS
})
