import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, OpenObject } from "../../contract/Schemas.js"

const ref = HttpApiSchema.param("ref", Schema.String)

export class SettlementsApi extends HttpApiGroup.make("settlements")
  .add(HttpApiEndpoint.post("hold")`/api/v1/settlements/${ref}/hold`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.post("release")`/api/v1/settlements/${ref}/release`.addSuccess(OpenObject))
  .addError(NotImplemented)
  .middleware(Authentication)
{}

export class CopilotApi extends HttpApiGroup.make("copilot")
  .add(
    HttpApiEndpoint.post("ask", "/api/v1/copilot/ask")
      .setPayload(Body({ prompt: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)) }))
      .addSuccess(OpenObject)
  )
  .addError(NotImplemented)
  .middleware(Authentication)
{}
