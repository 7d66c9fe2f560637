import { EVENTS_PROBLEMS } from "../../src/contract/Events.js"
import { capability, Stage } from "../Capability.js"
import { Events } from "./Events.js"
import { EVENTS_DOCS } from "./EventsDocs.js"
import { EVENTS_EXAMPLES } from "./EventsExamples.js"
import { EventsStore } from "./EventsStore.js"

/** Reading events: the public events of the outbox (what webhooks carry), per tenant and mode, over 30 days. */
export const EventsCapability = capability({
  name: "events",
  services: [[Stage.stores, EventsStore.Default], [Stage.reads, Events.Default]],
  docs: EVENTS_DOCS,
  examples: EVENTS_EXAMPLES,
  problems: EVENTS_PROBLEMS
})
