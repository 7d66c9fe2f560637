import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { CreateRule, DryRunAnswer, Rule, RuleDryRunRequest, Flow, FlowDryRunRequest, FlowInput, FlowRun } from "../../contract/Automation.js"
import { Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { listOf, TakeParams, Body } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)

export class RulesApi extends HttpApiGroup.make("rules")
  .add(HttpApiEndpoint.get("list", "/api/v1/rules").setUrlParams(TakeParams).addSuccess(listOf(Rule)))
  .add(HttpApiEndpoint.post("create", "/api/v1/rules").setPayload(CreateRule).addSuccess(Rule, { status: 201 }).addError(Forbidden).addError(Conflict))
  .add(HttpApiEndpoint.post("dryRun", "/api/v1/rules/dry-run").setPayload(RuleDryRunRequest).addSuccess(DryRunAnswer))
  .add(HttpApiEndpoint.del("delete")`/api/v1/rules/${id}`.addSuccess(HttpApiSchema.NoContent).addError(Forbidden).addError(NotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Money rules")
  .annotate(OpenApi.Description, "Standing rules run on each reconciled deposit (hold, flag, sweep).")
{}

export class FlowsApi extends HttpApiGroup.make("flows")
  .add(HttpApiEndpoint.get("list", "/api/v1/flows").setUrlParams(TakeParams).addSuccess(listOf(Flow)).addError(Forbidden))
  .add(HttpApiEndpoint.post("create", "/api/v1/flows").setPayload(FlowInput).addSuccess(Flow, { status: 201 }).addError(Forbidden).addError(Conflict))
  .add(HttpApiEndpoint.get("runs", "/api/v1/flows/runs").setUrlParams(TakeParams).addSuccess(listOf(FlowRun)).addError(Forbidden))
  .add(HttpApiEndpoint.get("get")`/api/v1/flows/${id}`.addSuccess(Flow).addError(Forbidden).addError(NotFound))
  .add(HttpApiEndpoint.put("replace")`/api/v1/flows/${id}`.setPayload(FlowInput).addSuccess(Flow).addError(Forbidden).addError(NotFound))
  .add(HttpApiEndpoint.del("delete")`/api/v1/flows/${id}`.addSuccess(HttpApiSchema.NoContent).addError(Forbidden).addError(NotFound))
  .add(
    HttpApiEndpoint.post("setEnabled")`/api/v1/flows/${id}/enabled`
      .setPayload(Body({ enabled: Schema.Boolean.annotations({ message: () => "enabled must be true or false" }) }))
      .addSuccess(Flow)
      .addError(Forbidden)
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.post("dryRun")`/api/v1/flows/${id}/dry-run`.setPayload(FlowDryRunRequest).addSuccess(DryRunAnswer).addError(Forbidden).addError(NotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Payment flows")
  .annotate(OpenApi.Description, "Multi-step automations triggered by deposits, with their runs.")
{}
