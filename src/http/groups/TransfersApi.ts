import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { PositiveKobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { AccountNumber, BankCode, Body, OpenList, OpenObject, Reference, TakeParams, listOf } from "../../contract/Schemas.js"

export const Bank = Schema.Struct({ name: Schema.String, code: Schema.String })
const merchantTxRef = HttpApiSchema.param("merchantTxRef", Schema.String)

export class TransfersApi extends HttpApiGroup.make("transfers")
  .add(HttpApiEndpoint.get("list", "/api/v1/transfers").setUrlParams(TakeParams).addSuccess(OpenList))
  .add(HttpApiEndpoint.get("banks", "/api/v1/transfers/banks").addSuccess(listOf(Bank)))
  .add(
    HttpApiEndpoint.post("lookup", "/api/v1/transfers/bank/lookup")
      .setPayload(Body({ accountNumber: AccountNumber, bankCode: BankCode }))
      .addSuccess(OpenObject)
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/transfers/bank")
      .setPayload(Body({
        merchantTxRef: Reference("merchantTxRef", 64),
        amountKobo: PositiveKobo,
        accountNumber: AccountNumber,
        bankCode: BankCode,
        narration: Schema.optional(Schema.String.pipe(Schema.maxLength(100)))
      }))
      .addSuccess(OpenObject, { status: 201 })
  )
  .add(HttpApiEndpoint.get("get")`/api/v1/transfers/${merchantTxRef}`.addSuccess(OpenObject))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
