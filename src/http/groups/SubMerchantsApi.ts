import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { BadGateway, BadRequest, Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { listOf, TakeParams } from "../../contract/Schemas.js"
import { CreateSubMerchant, SetSubMerchantPayout, SubMerchant, SubMerchantBalance } from "../../contract/Settlement.js"

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
{}
