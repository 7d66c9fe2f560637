import { WEBHOOKS_PROBLEMS } from "../../src/contract/Webhooks.js"
import { capability } from "../Capability.js"
import { WEBHOOKS } from "../outbox/Registry.js"
import { WEBHOOKS_DOCS } from "./WebhooksDocs.js"
import { WebhookDispatcherLive } from "./WebhooksLive.js"
import { WEBHOOKS_EXAMPLES } from "./WebhooksExamples.js"

/**
 * Webhooks: endpoints, signed deliveries with retries and replay. Its services (endpoints, deliveries) are built by its
 * handlers and its dispatcher, so the service graph holds none of them.
 */
export const WebhooksCapability = capability({
  name: "webhooks",
  workers: [WebhookDispatcherLive],
  consumers: [WEBHOOKS],
  docs: WEBHOOKS_DOCS,
  examples: WEBHOOKS_EXAMPLES,
  problems: WEBHOOKS_PROBLEMS
})
