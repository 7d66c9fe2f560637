import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { Authentication } from "../Security.js"
import { Body, PageParams, TakeParams, listOf } from "../../contract/Schemas.js"
import { DeliveryStatusParam, WebhookDelivery, WebhookEndpoint, WebhookEndpointCreated } from "../../contract/Webhooks.js"


const id = HttpApiSchema.param("id", Schema.String)

export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .add(HttpApiEndpoint.get("list", "/api/v1/webhook-endpoints").setUrlParams(TakeParams).addSuccess(listOf(WebhookEndpoint)))
  .add(
    HttpApiEndpoint.post("create", "/api/v1/webhook-endpoints")
      .setPayload(Body({ url: Schema.String.pipe(Schema.minLength(1, { message: () => "url is required" }), Schema.maxLength(2000)) }))
      .addSuccess(WebhookEndpointCreated, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/api/v1/webhook-endpoints/deliveries")
      .setUrlParams(Schema.Struct({ status: Schema.optional(DeliveryStatusParam), ...PageParams }))
      .addSuccess(listOf(WebhookDelivery))
  )
  .add(HttpApiEndpoint.post("replay")`/api/v1/webhook-endpoints/deliveries/${id}/replay`.addSuccess(WebhookDelivery, { status: 202 }).addError(NotFound).addError(Conflict))
  .add(HttpApiEndpoint.del("delete")`/api/v1/webhook-endpoints/${id}`.addSuccess(HttpApiSchema.NoContent).addError(NotFound))
  // An API key, or a dashboard Owner/Admin: a Member gets 403.
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(OpenApi.Description, "Your endpoints for signed outbound events, and their deliveries.")
{}
