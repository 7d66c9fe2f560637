import { Schema } from "effect"
import { ModeSchema, Timestamp } from "./Schemas.js"

export const TransactionStatus = Schema.Literal("Completed", "PendingReview", "Rejected", "Reversed")
export const ReconciliationStatus = Schema.Literal("Exact", "Underpaid", "Overpaid", "Duplicate", "Reversal", "Credited", "Unmatched")

export const RiskReason = Schema.Struct({ code: Schema.String, points: Schema.Int, detail: Schema.String })

export const Transaction = Schema.Struct({
  reference: Schema.String,
  accountRef: Schema.NullOr(Schema.String),
  nuban: Schema.String,
  amountKobo: Schema.Int,
  status: TransactionStatus,
  reconciliationStatus: ReconciliationStatus,
  riskScore: Schema.Int,
  riskReasons: Schema.Array(RiskReason),
  senderName: Schema.NullOr(Schema.String),
  senderAccountNumber: Schema.NullOr(Schema.String),
  senderBankCode: Schema.NullOr(Schema.String),
  narration: Schema.NullOr(Schema.String),
  paidAt: Timestamp,
  reconciledAt: Timestamp,
  reversedReference: Schema.NullOr(Schema.String),
  flagged: Schema.Boolean.annotations({ description: "A money rule or payment flow flagged this credited deposit for review; a review clears it." }),
  flagReasons: Schema.Array(Schema.String),
  review: Schema.NullOr(Schema.Struct({ decision: Schema.Literal("approve", "reject"), note: Schema.NullOr(Schema.String), decidedBy: Schema.String, decidedAt: Timestamp })),
  mode: ModeSchema
}).annotations({ identifier: "Transaction" })
export type Transaction = typeof Transaction.Type

/** The problem codes deposits (the receiver, transactions, reviews) answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const DEPOSITS_PROBLEMS = {
  invalid_signature: 401,
  unknown_provider: 404,
  transaction_not_found: 404,
  not_pending_review: 409
} as const satisfies Record<string, number>
