import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, OpenObject, Reference } from "../../contract/Schemas.js"

const token = HttpApiSchema.param("token", Schema.String)

export class CheckoutApi extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("createSession", "/api/v1/checkout/sessions")
      .setPayload(Body({
        accountRef: Reference("accountRef", 64),
        ttlSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 86_400, { message: () => "ttlSeconds must be 1 to 86400 (24 hours)" })))
      }))
      .addSuccess(OpenObject, { status: 201 })
  )
  .addError(NotImplemented)
  .middleware(Authentication)
{}

/** Authorised by the opaque checkout token alone; exposes payment state only. */
export class CheckoutPublicApi extends HttpApiGroup.make("checkoutPublic")
  .add(HttpApiEndpoint.get("snapshot")`/api/v1/checkout/${token}`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.get("snapshotShort")`/checkout/${token}`.addSuccess(OpenObject))
  .add(
    HttpApiEndpoint.get("stream")`/api/v1/checkout/${token}/stream`
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
  )
  .addError(NotImplemented)
{}
