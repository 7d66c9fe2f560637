import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Authentication } from "../Security.js"
import { BadGateway, BadRequest, Conflict, Forbidden } from "../../contract/Problems.js"
import { PutSettlementSettings, PutSplits, SettlementSettings, SplitPlan } from "../../contract/Settlement.js"

export class SettingsApi extends HttpApiGroup.make("settings")
  .add(HttpApiEndpoint.get("getSettlement", "/api/v1/settings/settlement").addSuccess(SettlementSettings))
  .add(
    HttpApiEndpoint.put("putSettlement", "/api/v1/settings/settlement").setPayload(PutSettlementSettings).addSuccess(SettlementSettings)
      .addError(BadRequest).addError(Conflict).addError(BadGateway).addError(Forbidden)
  )
  .add(HttpApiEndpoint.get("getSplits", "/api/v1/settings/splits").addSuccess(SplitPlan))
  .add(HttpApiEndpoint.put("putSplits", "/api/v1/settings/splits").setPayload(PutSplits).addSuccess(SplitPlan).addError(BadRequest).addError(Forbidden))
  .middleware(Authentication)
{}
