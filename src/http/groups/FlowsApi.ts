import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Kobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, OpenList, OpenObject, TakeParams } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)
export const FlowInput = Body({
  name: Schema.String,
  trigger: Schema.String,
  actions: Schema.Array(Schema.String),
  minAmountKobo: Schema.optional(Kobo),
  minRiskScore: Schema.optional(Schema.Int.pipe(Schema.between(0, 100))),
  priority: Schema.optional(Schema.Int)
})

export class FlowsApi extends HttpApiGroup.make("flows")
  .add(HttpApiEndpoint.get("list", "/api/v1/flows").addSuccess(OpenList))
  .add(HttpApiEndpoint.post("create", "/api/v1/flows").setPayload(FlowInput).addSuccess(OpenObject, { status: 201 }))
  .add(HttpApiEndpoint.get("runs", "/api/v1/flows/runs").setUrlParams(TakeParams).addSuccess(OpenList))
  .add(HttpApiEndpoint.get("get")`/api/v1/flows/${id}`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.put("replace")`/api/v1/flows/${id}`.setPayload(FlowInput).addSuccess(OpenObject))
  .add(HttpApiEndpoint.del("delete")`/api/v1/flows/${id}`.addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.post("setEnabled")`/api/v1/flows/${id}/enabled`
      .setPayload(Body({ enabled: Schema.Boolean }))
      .addSuccess(OpenObject)
  )
  .addError(NotImplemented)
  .middleware(Authentication)
{}
