import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadGateway, Conflict, Forbidden, NotFound, Unprocessable, Unauthorized } from "../../contract/Problems.js"
import { Refund } from "../../contract/Transfers.js"
import { Authentication } from "../Security.js"
import { AccountNumber, BankCode, Body, OptionalBody, CaseInsensitiveLiteral, DateTimeParam, PageParams, Reference, listOf, Timestamp } from "../../contract/Schemas.js"
import { ReconciliationStatus, Transaction, TransactionStatus } from "../../contract/Deposits.js"
import { PositiveKobo } from "../../domain/Money.js"
import { ReceiverResult } from "./ProvidersApi.js"

export const TransactionSummary = Schema.Struct({
  from: Schema.NullOr(Timestamp),
  to: Schema.NullOr(Timestamp),
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
  .annotate(OpenApi.Title, "Deposits")
  .annotate(OpenApi.Description, "Bank transfers received into virtual accounts, as reconciled transactions; refunds and risk reviews.")
{}

/**
 * The sandbox provider's webhook body, for the document only: the handler reads the raw text (the signature covers
 * fields of it) and the receiver parses it, so a provider that adds fields is never refused.
 */
export const SandboxWebhook = Schema.Struct({
  event: Schema.String.annotations({ description: "`transfer.inbound` or `transfer.reversal`; anything else is ignored." }),
  merchantId: Schema.String.annotations({ description: "The tenant's merchant id at the provider (GET /api/v1/dashboard/provider)." }),
  sessionId: Schema.String.annotations({ description: "The provider reference (NIBSS session id)." }),
  accountNumber: Schema.String.annotations({ description: "The NUBAN credited." }),
  amountKobo: PositiveKobo,
  senderName: Schema.optional(Schema.NullOr(Schema.String)),
  senderAccountNumber: Schema.optional(Schema.NullOr(Schema.String)),
  senderBankCode: Schema.optional(Schema.NullOr(Schema.String)),
  narration: Schema.optional(Schema.NullOr(Schema.String)),
  paidAt: Timestamp.annotations({ description: "ISO-8601 date-time of the transfer." }),
  reversedSessionId: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "For a reversal: the session id it reverses." })
}).annotations({ identifier: "SandboxWebhook", description: "The sandbox provider's inbound transfer webhook." })

export const SignatureHeader = Schema.Struct({
  "x-sandbox-signature": Schema.optional(Schema.String.annotations({
    description: "Lower-case hex HMAC-SHA256 keyed with the tenant's webhook secret for the mode, over `event|merchantId|sessionId|accountNumber|amountKobo|paidAt`. Missing or wrong: 401."
  }))
})

export const ReceiverResponse = Schema.Struct({ result: ReceiverResult, reference: Schema.NullOr(Schema.String) })
const provider = HttpApiSchema.param("provider", Schema.String)

/** Called by the bank provider; authenticated by the provider's signature, not by a bearer token. */
export class ReceiverApi extends HttpApiGroup.make("receiver")
  .add(HttpApiEndpoint.post("receive")`/webhooks/${provider}`.setPayload(SandboxWebhook).setHeaders(SignatureHeader).addSuccess(ReceiverResponse))
  .add(HttpApiEndpoint.post("receiveV1")`/api/v1/webhooks/${provider}`.setPayload(SandboxWebhook).setHeaders(SignatureHeader).addSuccess(ReceiverResponse))
  // 400 malformed or invalid body, 401 missing or wrong signature, 404 unknown provider or merchant.
  .addError(Unauthorized)
  .addError(NotFound)
  .annotate(OpenApi.Title, "Provider callbacks")
  .annotate(OpenApi.Description, "Inbound webhooks from the bank provider (deposits and transfer outcomes), signed by the provider.")
{}
