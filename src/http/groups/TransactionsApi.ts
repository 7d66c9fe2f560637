import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { BadGateway, Conflict, Forbidden, NotFound, Unprocessable } from "../../contract/Problems.js"
import { Refund } from "../../contract/Transfer.js"
import { Authentication } from "../Security.js"
import { AccountNumber, BankCode, Body, OptionalBody, CaseInsensitiveLiteral, DateTimeParam, PageParams, Reference, listOf } from "../../contract/Schemas.js"
import { ReconciliationStatus, Transaction, TransactionStatus } from "../../contract/Transaction.js"


export const TransactionSummary = Schema.Struct({
  from: Schema.NullOr(Schema.String),
  to: Schema.NullOr(Schema.String),
  total: Schema.Struct({ count: Schema.Int, amountKobo: Schema.Int }),
  successful: Schema.Struct({ count: Schema.Int, amountKobo: Schema.Int }),
  failed: Schema.Struct({ count: Schema.Int, amountKobo: Schema.Int }),
  pendingReview: Schema.Struct({ count: Schema.Int, amountKobo: Schema.Int })
})

const reference = HttpApiSchema.param("reference", Schema.String)
const Range = { from: Schema.optional(DateTimeParam), to: Schema.optional(DateTimeParam) }

export class TransactionsApi extends HttpApiGroup.make("transactions")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/transactions")
      .setUrlParams(Schema.Struct({
        ...Range,
        status: Schema.optional(CaseInsensitiveLiteral("status", TransactionStatus.literals)),
        reconciliation: Schema.optional(CaseInsensitiveLiteral("reconciliation", ReconciliationStatus.literals)),
        accountRef: Schema.optional(Schema.String),
        flagged: Schema.optional(CaseInsensitiveLiteral("flagged", ["true", "false"]).pipe(
          Schema.transform(Schema.Boolean, { strict: true, decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") })
        )),
        ...PageParams
      }))
      .addSuccess(listOf(Transaction))
  )
  .add(HttpApiEndpoint.get("summary", "/api/v1/transactions/summary").setUrlParams(Schema.Struct(Range)).addSuccess(TransactionSummary))
  .add(HttpApiEndpoint.get("get")`/api/v1/transactions/${reference}`.addSuccess(Transaction).addError(NotFound))
  .add(
    HttpApiEndpoint.post("refund")`/api/v1/transactions/${reference}/refund`
      .setPayload(OptionalBody({
        accountNumber: Schema.optional(AccountNumber),
        bankCode: Schema.optional(BankCode),
        accountName: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
      }))
      .addSuccess(Refund)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(Unprocessable)
      .addError(BadGateway)
  )
  .add(
    HttpApiEndpoint.post("review")`/api/v1/transactions/${reference}/review`
      .setPayload(Body({
        decision: CaseInsensitiveLiteral("decision", ["approve", "reject"]),
        note: Schema.optional(Schema.String.pipe(Schema.maxLength(1000))),
        accountRef: Schema.optional(Reference("accountRef", 64))
      }))
      .addSuccess(Transaction)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
  )
  .middleware(Authentication)
{}
