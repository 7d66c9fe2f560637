import { Layer } from "effect"
import { type DispatcherOptions, makeDispatcher } from "./Dispatcher.js"
import { DispatchStore } from "./DispatchStore.js"
import { WebhookDeliveries } from "./WebhookDeliveries.js"
import { WebhookEndpoints } from "./WebhookEndpoints.js"

/** The request-side services (endpoint management, delivery listing and replay). Needs SqlClient, AppConfigTag, SecretBox. */
export const WebhookServicesLive = Layer.mergeAll(WebhookEndpoints.Default, WebhookDeliveries.Default)

/** The long-running dispatcher fibers (stager + delivery loop). Needs SqlClient, AppConfigTag, SecretBox. */
export const makeWebhookDispatcherLive = (options: Partial<DispatcherOptions> = {}) =>
  Layer.scopedDiscard(makeDispatcher(options)).pipe(Layer.provide(DispatchStore.Default))

export const WebhookDispatcherLive = makeWebhookDispatcherLive()
