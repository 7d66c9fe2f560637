import { Schema } from "effect"
import { Kobo, PositiveKobo } from "../domain/Money.js"
import { BPS_WHOLE, MAX_SPLIT_LEGS, SPLIT_PRIORITY_MAX } from "../domain/Settlement.js"
import { TransferStatus } from "./Transfers.js"
import { AccountNumber, BankCode, Body, ModeSchema, NonEmpty, Reference, Timestamp } from "./Schemas.js"

// Sub-merchants, settlement settings, split plans and settlements on the wire (DESIGN.md, "Money movement" and
// "Wire shapes and fixtures for the money wave").

const Bps = (name: string, min: number) =>
  Schema.Int.annotations({ message: () => `${name} must be an integer from ${min} to ${BPS_WHOLE} (100 bps = 1%)` }).pipe(
    Schema.between(min, BPS_WHOLE, { message: () => `${name} must be an integer from ${min} to ${BPS_WHOLE} (100 bps = 1%)` })
  )

export const CreateSubMerchant = Body({ name: NonEmpty("name", 200), reference: Reference("reference", 64) }).annotations({ identifier: "CreateSubMerchant" })

export const SetSubMerchantPayout = Body({
  bankName: Schema.optional(NonEmpty("bankName", 200)),
  bankCode: BankCode,
  accountNumber: AccountNumber,
  platformFeeBps: Schema.optional(Bps("platformFeeBps", 0))
}).annotations({ identifier: "SetSubMerchantPayout" })

export const PayoutAccount = Schema.Struct({
  bankName: Schema.String,
  bankCode: Schema.String,
  accountNumber: Schema.String,
  accountName: Schema.String,
  verifiedAt: Timestamp
}).annotations({ identifier: "PayoutAccount" })

export const SubMerchant = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  reference: Schema.String,
  payoutAccount: Schema.NullOr(PayoutAccount),
  platformFeeBps: Schema.Int,
  createdAt: Timestamp,
  mode: ModeSchema
}).annotations({ identifier: "SubMerchant" })
export type SubMerchant = typeof SubMerchant.Type

export const SubMerchantBalance = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  collectedKobo: Schema.Int,
  settledKobo: Schema.Int,
  pendingKobo: Schema.Int,
  inTransitKobo: Schema.Int,
  unsweptKobo: Schema.Int,
  mode: ModeSchema
}).annotations({
  identifier: "SubMerchantBalance",
  description: "collectedKobo: what settlements routed to the sub-merchant, net of the platform fee (ledger credits to sub_merchant:<id>). " +
    "settledKobo: what of it was sent to its payout account and not returned (inTransitKobo of it still unconfirmed). " +
    "pendingKobo = collectedKobo - settledKobo: the balance of sub_merchant:<id> (a failed leg waiting for its retry). " +
    "unsweptKobo: the free money in its virtual accounts that no settlement has swept yet (before the platform fee)."
})

/** `PUT /settings/settlement`: fields left out keep their value; the three account fields null together clear the account. */
export const PutSettlementSettings = Body({
  settlementAccountNumber: Schema.optional(Schema.NullOr(AccountNumber)),
  settlementBankCode: Schema.optional(Schema.NullOr(BankCode)),
  settlementAccountName: Schema.optional(Schema.NullOr(NonEmpty("settlementAccountName", 200))),
  autoSettle: Schema.optional(Schema.Boolean),
  minPayoutKobo: Schema.optional(Kobo)
}).annotations({ identifier: "PutSettlementSettings" })
export type PutSettlementSettings = typeof PutSettlementSettings.Type

export const SettlementSettings = Schema.Struct({
  settlementAccountNumber: Schema.NullOr(Schema.String),
  settlementBankCode: Schema.NullOr(Schema.String),
  settlementBankName: Schema.NullOr(Schema.String),
  settlementAccountName: Schema.NullOr(Schema.String),
  verifiedAt: Schema.NullOr(Timestamp),
  autoSettle: Schema.Boolean,
  minPayoutKobo: Schema.Int,
  /** Whether the worker sweeps: autoSettle and a verified settlement account. */
  active: Schema.Boolean,
  lastRunAt: Schema.NullOr(Timestamp),
  mode: ModeSchema
}).annotations({ identifier: "SettlementSettings" })
export type SettlementSettings = typeof SettlementSettings.Type

// A leg's bps range and the number of legs are rules of the plan (planProblems), not of the shape: breaking one is
// 400 invalid_split_plan with every problem of the plan listed, like the other plan rules.
export const SplitLegRequest = Body({
  subMerchantRef: Schema.optional(Schema.NullOr(Reference("subMerchantRef", 64))),
  // null is the same as left out, so the plan GET answers can be sent back as it is.
  bps: Schema.optional(Schema.NullOr(
    Schema.Int.annotations({
      message: () => `bps must be an integer from 1 to ${BPS_WHOLE} (100 bps = 1%)`,
      description: `A share of the net in basis points, 1 to ${BPS_WHOLE} (100 bps = 1%); out of range: 400 invalid_split_plan.`
    })
  )),
  flatKobo: Schema.optional(Schema.NullOr(PositiveKobo)),
  priority: Schema.Int.annotations({ message: () => `priority must be an integer from 0 to ${SPLIT_PRIORITY_MAX} (lower is paid first)` }).pipe(
    Schema.between(0, SPLIT_PRIORITY_MAX, { message: () => `priority must be an integer from 0 to ${SPLIT_PRIORITY_MAX} (lower is paid first)` })
  )
}).annotations({ identifier: "SplitLegRequest" })

export const PutSplits = Body({
  splits: Schema.Array(SplitLegRequest).annotations({ description: `At most ${MAX_SPLIT_LEGS} legs (more: 400 invalid_split_plan); empty clears the plan.` })
}).annotations({ identifier: "PutSplits" })

export const SplitLeg = Schema.Struct({
  subMerchantRef: Schema.NullOr(Schema.String),
  bps: Schema.NullOr(Schema.Int),
  flatKobo: Schema.NullOr(Schema.Int),
  priority: Schema.Int
}).annotations({ identifier: "SplitLeg" })

export const SplitPlan = Schema.Struct({
  splits: Schema.Array(SplitLeg),
  updatedAt: Schema.NullOr(Timestamp),
  mode: ModeSchema
}).annotations({ identifier: "SplitPlan" })
export type SplitPlan = typeof SplitPlan.Type

export const SettlementLeg = Schema.Struct({
  legNo: Schema.Int,
  kind: Schema.Literal("sub_merchant", "platform_fee", "tenant"),
  subMerchantRef: Schema.NullOr(Schema.String),
  bps: Schema.NullOr(Schema.Int),
  flatKobo: Schema.NullOr(Schema.Int),
  amountKobo: Schema.Int,
  merchantTxRef: Schema.String,
  status: TransferStatus,
  attempts: Schema.Int,
  accountNumber: Schema.String,
  bankCode: Schema.String,
  accountName: Schema.String
}).annotations({ identifier: "SettlementLeg" })

export const Settlement = Schema.Struct({
  id: Schema.String,
  accountRef: Schema.String,
  netKobo: Schema.Int,
  status: Schema.Literal("Paid", "Processing", "Failed", "Skipped"),
  reasonCode: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  legs: Schema.Array(SettlementLeg),
  createdAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  mode: ModeSchema
}).annotations({ identifier: "Settlement" })
export type Settlement = typeof Settlement.Type

export const SettlementRun = Schema.Struct({
  data: Schema.Array(Settlement),
  hasMore: Schema.Boolean,
  settledCount: Schema.Int,
  skippedCount: Schema.Int,
  heldBackCount: Schema.Int,
  retriedLegCount: Schema.Int
}).annotations({ identifier: "SettlementRun" })

/** The problem codes sub-merchants, splits and settlements answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const SETTLEMENT_PROBLEMS = {
  payout_account_unverified: 400,
  unknown_sub_merchant: 400,
  sub_merchant_unverified: 400,
  invalid_split_plan: 400,
  settlement_account_missing: 400,
  sub_merchant_not_found: 404,
  settlement_in_progress: 409
} as const satisfies Record<string, number>
