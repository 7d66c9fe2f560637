import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { Body, listOf, OptionalBody, TakeParams } from "../../contract/Schemas.js"
import { CopilotAnswer } from "../../contract/Insights.js"
import { Settlement, SettlementRun } from "../../contract/Settlement.js"
import { Hold } from "../../contract/Transfer.js"
import { PositiveKobo } from "../../domain/Money.js"

const ref = HttpApiSchema.param("ref", Schema.String)

export class SettlementsApi extends HttpApiGroup.make("settlements")
  .add(HttpApiEndpoint.get("list", "/api/v1/settlements").setUrlParams(TakeParams).addSuccess(listOf(Settlement)))
  .add(HttpApiEndpoint.post("run", "/api/v1/settlements/run").addSuccess(SettlementRun).addError(BadRequest).addError(Conflict))
  .add(
    HttpApiEndpoint.post("hold")`/api/v1/settlements/${ref}/hold`
      .setPayload(OptionalBody({
        amountKobo: Schema.optional(PositiveKobo),
        reason: Schema.optional(Schema.String.pipe(Schema.maxLength(500, { message: () => "reason must be at most 500 characters" })))
      }))
      .addSuccess(Hold)
      .addError(BadRequest)
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.post("release")`/api/v1/settlements/${ref}/release`.addSuccess(Hold).addError(NotFound).addError(Conflict))
  .addError(Forbidden)
  .middleware(Authentication)
{}

export class CopilotApi extends HttpApiGroup.make("copilot")
  .add(
    HttpApiEndpoint.post("ask", "/api/v1/copilot/ask")
      .setPayload(Body({ prompt: Schema.String.pipe(Schema.maxLength(2000, { message: () => "prompt must be at most 2000 characters" })) }))
      .addSuccess(CopilotAnswer)
      .addError(BadRequest)
  )
  .addError(Forbidden)
  .middleware(Authentication)
{}
