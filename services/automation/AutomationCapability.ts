import { Layer } from "effect"
import { AUTOMATION_PROBLEMS } from "../../src/contract/Automation.js"
import { capability, Stage } from "../Capability.js"
import { AUTOMATION, AUTOMATION_ACTIONS } from "../outbox/Registry.js"
import { AutomationActor, AutomationActorLive } from "./Actor.js"
import { AUTOMATION_DOCS } from "./AutomationDocs.js"
import { AutomationStore } from "./AutomationStore.js"
import { Flows } from "./Flows.js"
import { AutomationPlannerLive } from "./Planner.js"
import { Rules } from "./Rules.js"
import { AUTOMATION_EXAMPLES } from "./AutomationExamples.js"

/** Automation: money rules and payment flows, planned per deposit and acted on one at a time. */
export const AutomationCapability = capability({
  name: "automation",
  services: [
    [Stage.moneyOut, AutomationStore.Default],
    [Stage.features, Layer.mergeAll(AutomationActor.Default, Rules.Default, Flows.Default)]
  ],
  workers: [AutomationPlannerLive],
  threadWorkers: [AutomationActorLive],
  consumers: [AUTOMATION, AUTOMATION_ACTIONS],
  docs: AUTOMATION_DOCS,
  examples: AUTOMATION_EXAMPLES,
  problems: AUTOMATION_PROBLEMS
})
