import { Schema } from "effect"
import { ModeSchema, Timestamp, CalendarDate } from "./Schemas.js"

export const TransferStatus = Schema.Literal("Pending", "Processing", "Successful", "Failed", "Reversed")
export const TransferSource = Schema.Literal("api", "dashboard", "refund", "settlement")

/** A transfer out of the tenant's money (DESIGN.md, "Wire shapes and fixtures for the money wave"). */
export const Transfer = Schema.Struct({
  merchantTxRef: Schema.String,
  amountKobo: Schema.Int,
  accountNumber: Schema.String,
  bankCode: Schema.String,
  bankName: Schema.String,
  accountName: Schema.String,
  narration: Schema.NullOr(Schema.String),
  status: TransferStatus,
  failureReason: Schema.NullOr(Schema.String),
  providerReference: Schema.NullOr(Schema.String),
  source: TransferSource,
  createdAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  mode: ModeSchema
}).annotations({ identifier: "Transfer" })
export type Transfer = typeof Transfer.Type

export const BankAccountName = Schema.Struct({
  accountNumber: Schema.String,
  bankCode: Schema.String,
  bankName: Schema.String,
  accountName: Schema.String
}).annotations({ identifier: "BankAccountName" })

export const Hold = Schema.Struct({
  reference: Schema.String,
  accountRef: Schema.String,
  heldKobo: Schema.Int,
  status: Schema.Literal("Held", "Released", "Refunded"),
  reason: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  releasedAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Hold" })
export type Hold = typeof Hold.Type

export const Refund = Schema.Struct({
  reference: Schema.String,
  status: Schema.Literal("Sent", "AlreadySent"),
  amountKobo: Schema.Int,
  destination: Schema.Struct({ accountNumber: Schema.String, bankCode: Schema.String, accountName: Schema.String }),
  merchantTxRef: Schema.String,
  transferStatus: TransferStatus
}).annotations({ identifier: "Refund" })
export type Refund = typeof Refund.Type

export const Balance = Schema.Struct({
  availableKobo: Schema.Int,
  receivableKobo: Schema.Int,
  heldKobo: Schema.Int,
  pendingReviewKobo: Schema.Int,
  inTransitKobo: Schema.Int,
  settledTodayKobo: Schema.Int,
  paidOutTodayKobo: Schema.Int,
  dailyPayoutCapKobo: Schema.Int,
  payoutCapRemainingKobo: Schema.Int,
  day: CalendarDate,
  mode: ModeSchema
}).annotations({ identifier: "Balance" })
export type Balance = typeof Balance.Type

/** The problem codes transfers (payouts, refunds, holds) answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const TRANSFERS_PROBLEMS = {
  invalid_bank_account: 400,
  reserved_reference: 400,
  no_refundable_surplus: 400,
  nothing_available: 400,
  destination_missing: 400,
  refund_destination_unverified: 400,
  hold_exceeds_available: 400,
  transfer_not_found: 404,
  hold_not_found: 404,
  bank_account_not_found: 404,
  refund_in_progress: 409,
  hold_not_active: 409,
  duplicate_reference: 409,
  account_name_mismatch: 422,
  insufficient_balance: 422,
  daily_payout_cap_exceeded: 422,
  recipient_not_found: 422
} as const satisfies Record<string, number>
