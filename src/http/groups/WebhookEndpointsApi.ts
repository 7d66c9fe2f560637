import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { Authentication } from "../Security.js"
import { Take, listOf } from "../Schemas.js"

export const DeliveryStatus = Schema.Literal("Pending", "Succeeded", "Failed", "DeadLettered")
export type DeliveryStatus = typeof DeliveryStatus.Type
const STATUSES = DeliveryStatus.literals

/** `?status=` matched case-insensitively; anything else is a 400 that lists the allowed values. */
const DeliveryStatusParam = Schema.transformOrFail(Schema.String.annotations({ description: `One of ${STATUSES.join(", ")} (any case).` }), DeliveryStatus, {
  strict: true,
  decode: (raw, _, ast) => {
    const found = STATUSES.find((s) => s.toLowerCase() === raw.trim().toLowerCase())
    return found === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, raw, `status must be one of ${STATUSES.join(", ")}`))
      : ParseResult.succeed(found)
  },
  encode: ParseResult.succeed
})
export const WebhookEndpoint = Schema.Struct({ id: Schema.String, url: Schema.String, active: Schema.Boolean, createdAt: Schema.String })
export type WebhookEndpoint = typeof WebhookEndpoint.Type
export const WebhookEndpointCreated = Schema.Struct({ ...WebhookEndpoint.fields, secret: Schema.String })
export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  lastStatusCode: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  deliveredAt: Schema.NullOr(Schema.String)
})
export type WebhookDelivery = typeof WebhookDelivery.Type
const id = HttpApiSchema.param("id", Schema.String)

export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .add(HttpApiEndpoint.get("list", "/api/v1/webhook-endpoints").addSuccess(listOf(WebhookEndpoint)))
  .add(
    HttpApiEndpoint.post("create", "/api/v1/webhook-endpoints")
      .setPayload(Schema.Struct({ url: Schema.String.pipe(Schema.minLength(1, { message: () => "url is required" }), Schema.maxLength(2000)) }))
      .addSuccess(WebhookEndpointCreated, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/api/v1/webhook-endpoints/deliveries")
      .setUrlParams(Schema.Struct({ status: Schema.optional(DeliveryStatusParam), take: Schema.optional(Take) }))
      .addSuccess(listOf(WebhookDelivery))
  )
  .add(HttpApiEndpoint.post("replay")`/api/v1/webhook-endpoints/deliveries/${id}/replay`.addSuccess(WebhookDelivery, { status: 202 }))
  .add(HttpApiEndpoint.del("delete")`/api/v1/webhook-endpoints/${id}`.addSuccess(HttpApiSchema.NoContent))
  .middleware(Authentication)
{}
