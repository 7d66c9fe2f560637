import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Kobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, OpenList, OpenObject } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)
const Score = Schema.Int.pipe(Schema.between(0, 100, { message: () => "must be an integer from 0 to 100" }))

export class RulesApi extends HttpApiGroup.make("rules")
  .add(HttpApiEndpoint.get("list", "/api/v1/rules").addSuccess(OpenList))
  .add(
    HttpApiEndpoint.post("create", "/api/v1/rules")
      .setPayload(Body({
        trigger: Schema.String,
        action: Schema.String,
        thresholdKobo: Schema.optional(Kobo),
        minRiskScore: Schema.optional(Score),
        priority: Schema.optional(Schema.Int)
      }))
      .addSuccess(OpenObject, { status: 201 })
  )
  .add(HttpApiEndpoint.del("delete")`/api/v1/rules/${id}`.addSuccess(HttpApiSchema.NoContent))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
