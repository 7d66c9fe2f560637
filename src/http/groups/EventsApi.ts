import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PublicEvent, PublicEventTypeParam } from "../../contract/Events.js"
import { Forbidden, NotFound } from "../../contract/Problems.js"
import { PageParams, listOf } from "../../contract/Schemas.js"
import { Authentication } from "../Security.js"

const id = HttpApiSchema.param("id", Schema.String)

/** The tenant's public events, as its webhooks carry them (docs/webhooks.md). */
export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/events")
      .setUrlParams(Schema.Struct({ type: Schema.optional(PublicEventTypeParam), ...PageParams }))
      .addSuccess(listOf(PublicEvent))
  )
  .add(HttpApiEndpoint.get("get")`/api/v1/events/${id}`.addSuccess(PublicEvent).addError(NotFound))
  // An API key, or a dashboard Owner/Admin (as webhook endpoints and deliveries): a Member gets 403.
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Events")
  .annotate(OpenApi.Description, "The public events the tenant's webhooks carry, read back with their payloads (30 days).")
{}
