import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PositiveKobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { BadGateway, Conflict, Forbidden, NotFound, Unprocessable } from "../../contract/Problems.js"
import { AccountNumber, BankCode, Body, PageParams, Reference, listOf } from "../../contract/Schemas.js"
import { Balance, BankAccountName, Transfer } from "../../contract/Transfers.js"

export const Bank = Schema.Struct({ name: Schema.String, code: Schema.String })
const merchantTxRef = HttpApiSchema.param("merchantTxRef", Schema.String)

export const CreateTransfer = Body({
  merchantTxRef: Reference("merchantTxRef", 64),
  amountKobo: PositiveKobo,
  accountNumber: AccountNumber,
  bankCode: BankCode,
  narration: Schema.optional(Schema.String.pipe(Schema.maxLength(100, { message: () => "narration must be at most 100 characters" }))),
  accountName: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})

export class TransfersApi extends HttpApiGroup.make("transfers")
  .add(HttpApiEndpoint.get("list", "/api/v1/transfers").setUrlParams(Schema.Struct(PageParams)).addSuccess(listOf(Transfer)))
  .add(HttpApiEndpoint.get("banks", "/api/v1/transfers/banks").addSuccess(listOf(Bank)))
  .add(
    HttpApiEndpoint.post("lookup", "/api/v1/transfers/bank/lookup")
      .setPayload(Body({ accountNumber: AccountNumber, bankCode: BankCode }))
      .addSuccess(BankAccountName)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(BadGateway)
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/transfers/bank")
      .setPayload(CreateTransfer)
      .addSuccess(Transfer, { status: 201 })
      .addError(Forbidden)
      .addError(Conflict)
      .addError(Unprocessable)
      .addError(BadGateway)
  )
  .add(HttpApiEndpoint.get("get")`/api/v1/transfers/${merchantTxRef}`.addSuccess(Transfer).addError(NotFound))
  .add(HttpApiEndpoint.get("balance", "/api/v1/balance").addSuccess(Balance))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Transfers")
  .annotate(OpenApi.Description, "Money out to Nigerian bank accounts: name enquiry, payouts and the available balance.")
{}
