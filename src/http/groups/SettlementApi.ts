import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { BadGateway, BadRequest, Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { listOf, TakeParams, OptionalBody } from "../../contract/Schemas.js"
import { CreateSubMerchant, SetSubMerchantPayout, SubMerchant, SubMerchantBalance, PutSettlementSettings, PutSplits, SettlementSettings, SplitPlan, Settlement, SettlementRun } from "../../contract/Settlement.js"
import { Hold } from "../../contract/Transfers.js"
import { PositiveKobo } from "../../domain/Money.js"

const id = HttpApiSchema.param("id", Schema.String)

export class SubMerchantsApi extends HttpApiGroup.make("subMerchants")
  .add(HttpApiEndpoint.get("list", "/api/v1/sub-merchants").setUrlParams(TakeParams).addSuccess(listOf(SubMerchant)))
  .add(
    HttpApiEndpoint.post("create", "/api/v1/sub-merchants").setPayload(CreateSubMerchant).addSuccess(SubMerchant, { status: 201 })
      .addError(Conflict).addError(Forbidden)
  )
  .add(
    HttpApiEndpoint.put("setPayout")`/api/v1/sub-merchants/${id}/payout`.setPayload(SetSubMerchantPayout).addSuccess(SubMerchant)
      .addError(BadRequest).addError(NotFound).addError(Conflict).addError(BadGateway).addError(Forbidden)
  )
  .add(HttpApiEndpoint.get("balance")`/api/v1/sub-merchants/${id}/balance`.addSuccess(SubMerchantBalance).addError(NotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sub-merchants")
  .annotate(OpenApi.Description, "Businesses the tenant collects for, each with its payout account and balance.")
{}

export class SettingsApi extends HttpApiGroup.make("settings")
  .add(HttpApiEndpoint.get("getSettlement", "/api/v1/settings/settlement").addSuccess(SettlementSettings))
  .add(
    HttpApiEndpoint.put("putSettlement", "/api/v1/settings/settlement").setPayload(PutSettlementSettings).addSuccess(SettlementSettings)
      .addError(BadRequest).addError(Conflict).addError(BadGateway).addError(Forbidden)
  )
  .add(HttpApiEndpoint.get("getSplits", "/api/v1/settings/splits").addSuccess(SplitPlan))
  .add(HttpApiEndpoint.put("putSplits", "/api/v1/settings/splits").setPayload(PutSplits).addSuccess(SplitPlan).addError(BadRequest).addError(Forbidden))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Settlement settings")
  .annotate(OpenApi.Description, "Where and when collected money is settled, and how it is split.")
{}

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
  .annotate(OpenApi.Title, "Settlements")
  .annotate(OpenApi.Description, "Settlement runs paying collected money out, and holds on deposits.")
{}
