import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { CreateRule, DryRunAnswer, Rule, RuleDryRunRequest } from "../../contract/Automation.js"
import { Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { listOf, TakeParams } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)

export class RulesApi extends HttpApiGroup.make("rules")
  .add(HttpApiEndpoint.get("list", "/api/v1/rules").setUrlParams(TakeParams).addSuccess(listOf(Rule)))
  .add(HttpApiEndpoint.post("create", "/api/v1/rules").setPayload(CreateRule).addSuccess(Rule, { status: 201 }).addError(Forbidden).addError(Conflict))
  .add(HttpApiEndpoint.post("dryRun", "/api/v1/rules/dry-run").setPayload(RuleDryRunRequest).addSuccess(DryRunAnswer))
  .add(HttpApiEndpoint.del("delete")`/api/v1/rules/${id}`.addSuccess(HttpApiSchema.NoContent).addError(Forbidden).addError(NotFound))
  .middleware(Authentication)
{}
