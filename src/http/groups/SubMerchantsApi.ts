import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { AccountNumber, BankCode, Body, NonEmpty, OpenList, OpenObject, Reference } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)

export class SubMerchantsApi extends HttpApiGroup.make("subMerchants")
  .add(HttpApiEndpoint.get("list", "/api/v1/sub-merchants").addSuccess(OpenList))
  .add(
    HttpApiEndpoint.post("create", "/api/v1/sub-merchants")
      .setPayload(Body({ name: NonEmpty("name"), reference: Reference("reference", 64) }))
      .addSuccess(OpenObject, { status: 201 })
  )
  .add(
    HttpApiEndpoint.put("setPayout")`/api/v1/sub-merchants/${id}/payout`
      .setPayload(Body({
        bankName: NonEmpty("bankName"),
        bankCode: BankCode,
        accountNumber: AccountNumber,
        platformFeeBps: Schema.Int.pipe(Schema.between(0, 10_000, { message: () => "platformFeeBps must be an integer from 0 to 10000 (100 bps = 1%)" }))
      }))
      .addSuccess(OpenObject)
  )
  .add(HttpApiEndpoint.get("balance")`/api/v1/sub-merchants/${id}/balance`.addSuccess(OpenObject))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
