import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { CheckoutSession, CheckoutSnapshot, CreateCheckoutSession } from "../../contract/Checkout.js"
import { NotFound, TooManyRequests } from "../../contract/Problems.js"

const token = HttpApiSchema.param("token", Schema.String)

export class CheckoutApi extends HttpApiGroup.make("checkout")
  .add(HttpApiEndpoint.post("createSession", "/api/v1/checkout/sessions").setPayload(CreateCheckoutSession).addSuccess(CheckoutSession, { status: 201 }).addError(NotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Live checkout")
  .annotate(OpenApi.Description, "Checkout sessions a payer's page follows live.")
{}

/** Authorised by the opaque checkout token alone; exposes payment state only. */
export class CheckoutPublicApi extends HttpApiGroup.make("checkoutPublic")
  .add(HttpApiEndpoint.get("snapshot")`/api/v1/checkout/${token}`.addSuccess(CheckoutSnapshot))
  .add(
    HttpApiEndpoint.get("snapshotShort")`/checkout/${token}`
      .addSuccess(CheckoutSnapshot)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
  )
  .add(
    HttpApiEndpoint.get("stream")`/api/v1/checkout/${token}/stream`
      .setHeaders(Schema.Struct({ "last-event-id": Schema.optional(Schema.String) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(TooManyRequests)
  )
  .addError(NotFound)
  .annotate(OpenApi.Title, "Live checkout (payer)")
  .annotate(OpenApi.Description, "The payer's view of a checkout session: no bearer token, the session token is the key.")
{}
