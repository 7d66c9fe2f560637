import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, Unauthorized } from "../../contract/Problems.js"
import { PositiveKobo } from "../../domain/Money.js"
import { ReceiverResult } from "./SandboxApi.js"

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
  paidAt: Schema.String.annotations({ description: "ISO-8601 date-time of the transfer." }),
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
{}
