import { Schema } from "effect"
import { Body, Reference, Timestamp } from "./Schemas.js"

// Live checkout on the wire (DESIGN.md "Live checkout", "Wire shapes for billing, checkout, insights and the copilot").

export const CreateCheckoutSession = Body({
  accountRef: Reference("accountRef", 64),
  ttlSeconds: Schema.optional(Schema.Int.annotations({
    message: () => "ttlSeconds must be an integer from 60 to 86400 (24 hours)",
    description: "How long the token lives, 60 to 86400 seconds; default 3600."
  }))
}).annotations({ identifier: "CreateCheckoutSession" })

export const CheckoutSession = Schema.Struct({
  token: Schema.String,
  expiresAt: Timestamp,
  snapshotUrl: Schema.String,
  streamUrl: Schema.String,
  hostedUrl: Schema.String
}).annotations({ identifier: "CheckoutSession" })

export const CheckoutSnapshot = Schema.Struct({
  status: Schema.Literal("awaiting_payment", "partially_paid", "paid", "overpaid"),
  amountDueKobo: Schema.NullOr(Schema.Int),
  amountPaidKobo: Schema.Int,
  remainingKobo: Schema.Int,
  nuban: Schema.String,
  bankName: Schema.String,
  expiresAt: Timestamp,
  updatedAt: Timestamp
}).annotations({
  identifier: "CheckoutSnapshot",
  description: "Payment state only: never the customer's name, e-mail or phone, nor the tenant's accountRef."
})

/** The problem codes checkout sessions and their stream answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const CHECKOUT_PROBLEMS = {
  checkout_session_not_found: 404,
  too_many_streams: 429
} as const satisfies Record<string, number>
