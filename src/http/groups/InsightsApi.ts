import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { OpenObject, TakeParams } from "../../contract/Schemas.js"

export class InsightsApi extends HttpApiGroup.make("insights")
  .add(HttpApiEndpoint.get("overview", "/api/v1/insights").addSuccess(OpenObject))
  .add(HttpApiEndpoint.get("aging", "/api/v1/insights/aging").addSuccess(OpenObject))
  .add(
    HttpApiEndpoint.get("forecast", "/api/v1/insights/forecast")
      .setUrlParams(Schema.Struct({
        days: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(7, 180, { message: () => "days must be an integer from 7 to 180" })))
      }))
      .addSuccess(OpenObject)
  )
  .add(HttpApiEndpoint.get("customers", "/api/v1/insights/customers").setUrlParams(TakeParams).addSuccess(OpenObject))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
