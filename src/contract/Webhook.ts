import { ParseResult, Schema } from "effect"

export const DeliveryStatus = Schema.Literal("Pending", "Succeeded", "Failed", "DeadLettered")
export type DeliveryStatus = typeof DeliveryStatus.Type
const STATUSES = DeliveryStatus.literals

/** `?status=` matched case-insensitively; anything else is a 400 that lists the allowed values. */
export const DeliveryStatusParam = Schema.transformOrFail(Schema.String.annotations({ description: `One of ${STATUSES.join(", ")} (any case).` }), DeliveryStatus, {
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
