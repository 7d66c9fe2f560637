import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { BadRequest, Forbidden } from "../../contract/Problems.js"
import { Body } from "../../contract/Schemas.js"
import { CopilotAnswer } from "../../contract/Copilot.js"

export class CopilotApi extends HttpApiGroup.make("copilot")
  .add(
    HttpApiEndpoint.post("ask", "/api/v1/copilot/ask")
      .setPayload(Body({ prompt: Schema.String.pipe(Schema.maxLength(2000, { message: () => "prompt must be at most 2000 characters" })) }))
      .addSuccess(CopilotAnswer)
      .addError(BadRequest)
  )
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Copilot")
  .annotate(OpenApi.Description, "Questions about your collections answered in words, with the figures they rest on.")
{}
