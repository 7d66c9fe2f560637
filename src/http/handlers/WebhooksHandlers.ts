import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { WebhookDeliveries } from "../../../services/webhooks/WebhookDeliveries.js"
import { WebhookEndpoints } from "../../../services/webhooks/WebhookEndpoints.js"
import { WebhookServicesLive } from "../../../services/webhooks/WebhooksLive.js"
import { Api } from "../Api.js"
import { requireApiOrOwnerAdmin } from "../Security.js"

/** Either plane (an API key, or a dashboard Owner/Admin); everything is scoped to the caller's tenant and mode. */
export const WebhookEndpointsHandlers = HttpApiBuilder.group(Api, "webhookEndpoints", (h) =>
  Effect.gen(function* () {
    const endpoints = yield* WebhookEndpoints
    const deliveries = yield* WebhookDeliveries
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => endpoints.list(p.tenantId, p.mode, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => endpoints.create(p.tenantId, p.mode, payload.url)))
      .handle("deliveries", ({ urlParams }) =>
        Effect.flatMap(requireApiOrOwnerAdmin, (p) => deliveries.list(p, urlParams))
      )
      .handle("replay", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => deliveries.replay(p, path.id)))
      .handle("delete", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => endpoints.deactivate(p.tenantId, p.mode, path.id)))
  })
).pipe(Layer.provide(WebhookServicesLive))
