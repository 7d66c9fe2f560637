import { Schema } from "effect"
import { PositiveKobo } from "../domain/Money.js"
import { Body, DateTimeString, ModeSchema, NonEmpty, Reference, Timestamp } from "./Schemas.js"

export const PaymentState = Schema.Literal("Open", "AwaitingPayment", "PartiallyPaid", "FullyPaid", "Overpaid")

export const VirtualAccount = Schema.Struct({
  accountRef: Schema.String,
  nuban: Schema.String,
  bankName: Schema.String,
  bankCode: Schema.String,
  accountName: Schema.String,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  expectedAmountKobo: Schema.NullOr(Schema.Int),
  expiryDateUtc: Schema.NullOr(Timestamp),
  subMerchantRef: Schema.NullOr(Schema.String),
  amountPaidKobo: Schema.Int,
  deficit: Schema.Int,
  overpayment: Schema.Int,
  paymentState: PaymentState,
  mode: ModeSchema,
  createdAt: Timestamp
}).annotations({ identifier: "VirtualAccount" })
export type VirtualAccount = typeof VirtualAccount.Type

const Email = Schema.Trim.pipe(Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "email must be an e-mail address" }), Schema.maxLength(254))
const Phone = Schema.String.pipe(Schema.pattern(/^\+?[0-9 ()-]{7,20}$/, { message: () => "phone must be a phone number such as +2348031234567" }))

export const CreateVirtualAccount = Body({
  accountRef: Reference("accountRef", 64),
  name: NonEmpty("name", 120),
  email: Schema.optional(Email),
  phone: Schema.optional(Phone),
  expectedAmountKobo: Schema.optional(PositiveKobo),
  expiryDateUtc: Schema.optional(DateTimeString),
  subMerchantRef: Schema.optional(Reference("subMerchantRef", 64))
}).annotations({ identifier: "CreateVirtualAccount" })
export type CreateVirtualAccount = typeof CreateVirtualAccount.Type

/**
 * PATCH /virtual-accounts/{accountRef}: every field optional, at least one (an empty body is a 400). `email`, `phone`
 * and `expiryDateUtc` may be null to clear them; `expectedAmountKobo` is a new amount due (an open account gets one).
 * The NUBAN, the accountRef and the sub-merchant never change here.
 */
export const UpdateVirtualAccount = Body({
  name: Schema.optional(NonEmpty("name", 120)),
  email: Schema.optional(Schema.NullOr(Email)),
  phone: Schema.optional(Schema.NullOr(Phone)),
  expectedAmountKobo: Schema.optional(PositiveKobo),
  expiryDateUtc: Schema.optional(Schema.NullOr(DateTimeString))
}).annotations({ identifier: "UpdateVirtualAccount" })
export type UpdateVirtualAccount = typeof UpdateVirtualAccount.Type

/** The problem codes virtual accounts answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const ACCOUNTS_PROBLEMS = {
  account_ref_required: 400,
  account_ref_not_applicable: 400,
  virtual_account_not_found: 404,
  account_has_activity: 409
} as const satisfies Record<string, number>
