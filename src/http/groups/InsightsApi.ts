import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { InsightsAging, InsightsCustomers, InsightsForecast, InsightsOverview } from "../../contract/Insights.js"
import { BadRequest, Forbidden } from "../../contract/Problems.js"
import { Take } from "../../contract/Schemas.js"

const LagosDate = (name: string) =>
  Schema.String.annotations({ jsonSchema: { type: "string", format: "date", description: `${name}: a Lagos calendar date YYYY-MM-DD (included).` } })

export class InsightsApi extends HttpApiGroup.make("insights")
  .add(
    HttpApiEndpoint.get("overview", "/api/v1/insights")
      .setUrlParams(Schema.Struct({ from: Schema.optional(LagosDate("from")), to: Schema.optional(LagosDate("to")) }))
      .addSuccess(InsightsOverview)
      .addError(BadRequest)
  )
  .add(HttpApiEndpoint.get("aging", "/api/v1/insights/aging").addSuccess(InsightsAging))
  .add(
    HttpApiEndpoint.get("forecast", "/api/v1/insights/forecast")
      .setUrlParams(Schema.Struct({
        days: Schema.optional(Schema.NumberFromString.pipe(
          Schema.int({ message: () => "days must be an integer from 7 to 180" }),
          Schema.between(7, 180, { message: () => "days must be an integer from 7 to 180" })
        ))
      }))
      .addSuccess(InsightsForecast)
      .addError(BadRequest)
  )
  .add(HttpApiEndpoint.get("customers", "/api/v1/insights/customers").setUrlParams(Schema.Struct({ take: Schema.optional(Take) })).addSuccess(InsightsCustomers).addError(BadRequest))
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Insights")
  .annotate(OpenApi.Description, "Collection figures: overview, aging, forecast and customers.")
{}
