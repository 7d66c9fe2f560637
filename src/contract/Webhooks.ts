import { Schema } from "effect"
import { CaseInsensitiveLiteral, Timestamp } from "./Schemas.js"

export const DeliveryStatus = Schema.Literal("Pending", "Succeeded", "Failed", "DeadLettered")
export type DeliveryStatus = typeof DeliveryStatus.Type

/** `?status=` matched case-insensitively; anything else is a 400 that lists the allowed values. */
export const DeliveryStatusParam = CaseInsensitiveLiteral("status", DeliveryStatus.literals)
export const WebhookEndpoint = Schema.Struct({ id: Schema.String, url: Schema.String, active: Schema.Boolean, createdAt: Timestamp })
export type WebhookEndpoint = typeof WebhookEndpoint.Type
export const WebhookEndpointCreated = Schema.Struct({ ...WebhookEndpoint.fields, secret: Schema.String })
export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  endpointUrl: Schema.String.annotations({ description: "The URL of the endpoint the delivery goes to (as registered)." }),
  eventId: Schema.String.annotations({ description: "The id of the event the delivery carries (the envelope's `id`)." }),
  eventType: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  lastStatusCode: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deliveredAt: Schema.NullOr(Timestamp)
})
export type WebhookDelivery = typeof WebhookDelivery.Type

/** The problem codes webhook endpoints and deliveries answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const WEBHOOKS_PROBLEMS = {
  invalid_webhook_url: 400,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  webhook_delivery_succeeded: 409
} as const satisfies Record<string, number>
