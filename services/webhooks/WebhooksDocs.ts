import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

/** Webhook endpoints and deliveries (docs/webhooks.md). */
export const WEBHOOKS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "webhookEndpoints.list": doc("List webhook endpoints", "apiOrOwnerAdmin", PAGE + " The page key is `id`; secrets are never shown again."),
  "webhookEndpoints.create": doc("Register a webhook endpoint", "apiOrOwnerAdmin", "A public https URL; a host that does not resolve yet is accepted (addresses are checked again at each delivery, and private or loopback ones refused). The signing secret (`whsec_...`) is shown only in this answer."),
  "webhookEndpoints.deliveries": doc("List webhook deliveries", "apiOrOwnerAdmin", PAGE + " Filter with `status` (any case); the page key is `id`."),
  "webhookEndpoints.replay": doc("Replay a webhook delivery", "apiOrOwnerAdmin", "Queues a failed, dead-lettered or pending delivery for an immediate attempt; a succeeded one is never sent again (409)."),
  "webhookEndpoints.delete": doc("Deactivate a webhook endpoint", "apiOrOwnerAdmin")
}
