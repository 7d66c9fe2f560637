import { Either, Schema } from "effect"
import { NIGERIAN_BANKS } from "../../src/domain/Banks.js"
import type { InboundCredit } from "./InboundCredit.js"

/**
 * Paystack's wire shapes, as far as the adapter reads them (PROVIDERS.md §A). Every Schema here ignores fields it does
 * not name, so Paystack adding fields never breaks us; a field we need that is missing or mistyped is a decode failure
 * the adapter words as "unexpected answer".
 */

const Str = Schema.String
const OptStr = Schema.optional(Schema.NullOr(Schema.String))

/** The success envelope `{status: true, message, data}` (A1). */
export const envelope = <A, I>(data: Schema.Schema<A, I>) => Schema.Struct({ status: Schema.Literal(true), message: Schema.optional(Str), data })
/** The error envelope `{status: false, message, code?}`: `code` carries values such as `invalid_params` (A1). */
export const ErrorEnvelope = Schema.Struct({ status: Schema.optional(Schema.Boolean), message: Schema.optional(Str), code: Schema.optional(Str) })
export const errorMessage = (json: unknown): string => {
  const e = Schema.decodeUnknownEither(ErrorEnvelope)(json)
  return Either.isRight(e) && e.right.message ? e.right.message : "no message"
}

/** A bank of `GET /bank` (A5); `code` is the CBN code (3 digits, 5 for OFIs, 6 for some wallets). */
export const PaystackBank = Schema.Struct({ name: Str, slug: Str, code: Str })
export type PaystackBank = typeof PaystackBank.Type
export const BankPage = Schema.Struct({
  status: Schema.Literal(true),
  data: Schema.Array(PaystackBank),
  meta: Schema.optional(Schema.Struct({ next: Schema.optional(Schema.NullOr(Str)) }))
})

/** A dedicated account as `POST /dedicated_account` and the customer's `dedicated_account` give it (A2). */
export const DedicatedAccount = Schema.Struct({
  account_number: Str,
  account_name: Str,
  bank: Schema.Struct({ name: Str, slug: Str }),
  active: Schema.optional(Schema.Boolean),
  assigned: Schema.optional(Schema.Boolean)
})
export type DedicatedAccount = typeof DedicatedAccount.Type

export const Customer = Schema.Struct({
  customer_code: Str,
  email: Str,
  dedicated_account: Schema.optional(Schema.NullOr(DedicatedAccount)),
  dedicated_accounts: Schema.optional(Schema.NullOr(Schema.Array(DedicatedAccount)))
})
export type Customer = typeof Customer.Type

/** The customer's dedicated accounts, whichever of the two fields carries them. */
export const accountsOf = (c: Customer): ReadonlyArray<DedicatedAccount> => [
  ...(c.dedicated_accounts ?? []),
  ...(c.dedicated_account ? [c.dedicated_account] : [])
]

export const Resolved = Schema.Struct({ account_number: Str, account_name: Str })
export const Recipient = Schema.Struct({ recipient_code: Str })

/** Transfer statuses (A6.7). */
export const TransferData = Schema.Struct({ reference: Str, status: Str, transfer_code: Schema.optional(Str), amount: Schema.optional(Schema.Union(Schema.Number, Str)) })

/** What our transfers become from Paystack's status; `otp` is refused by design (DESIGN.md: turn OTP off). */
export const OTP_REASON = "Paystack holds this transfer for an OTP: turn off transfer OTP at the provider (Paystack dashboard, Settings, Preferences: \"Confirm transfers before sending\") and send it again with a new merchantTxRef"
export const transferStatusOf = (status: string): { readonly status: "Processing" | "Successful" | "Failed" | "Reversed"; readonly reason: string | null } => {
  switch (status) {
    case "success": return { status: "Successful", reason: null }
    case "reversed": return { status: "Reversed", reason: "The beneficiary bank returned the funds (Paystack: reversed)" }
    case "otp": return { status: "Failed", reason: OTP_REASON }
    case "failed": return { status: "Failed", reason: "Paystack reported the transfer failed" }
    case "abandoned": return { status: "Failed", reason: "Paystack abandoned the transfer (its OTP was never given)" }
    case "blocked": return { status: "Failed", reason: "Paystack blocked the transfer (the transfer approval server did not answer)" }
    case "rejected": return { status: "Failed", reason: "The transfer approval server declined the transfer" }
    // pending, received, queued, processing and anything new: not conclusive yet.
    default: return { status: "Processing", reason: null }
  }
}

/** The DVA `authorization` block of a `charge.success` (A3). */
const Authorization = Schema.Struct({
  receiver_bank_account_number: Str,
  sender_name: OptStr,
  sender_bank: OptStr,
  sender_bank_account_number: OptStr,
  narration: OptStr
})

/**
 * A successful transaction: `charge.success`'s `data`, and each item of `GET /transaction` (A3, A4). `amount` is
 * integer kobo; anything else is refused (never rounded).
 */
export const Charge = Schema.Struct({
  reference: Str.pipe(Schema.minLength(1), Schema.maxLength(64)),
  amount: Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)),
  status: Str,
  channel: Str,
  currency: Schema.optional(Str),
  domain: Schema.optional(Str),
  paid_at: OptStr,
  created_at: OptStr,
  createdAt: OptStr,
  customer: Schema.optional(Schema.NullOr(Schema.Struct({ customer_code: OptStr }))),
  authorization: Authorization
})
export type Charge = typeof Charge.Type

export const DVA_CHANNEL = "dedicated_nuban"

/** The loose first look at any webhook: which event, and the fields that route it. */
export const WebhookHead = Schema.Struct({
  event: Str,
  data: Schema.Struct({
    reference: Schema.optional(Str),
    channel: Schema.optional(Str),
    domain: Schema.optional(Str),
    authorization: Schema.optional(Schema.NullOr(Schema.Struct({ receiver_bank_account_number: Schema.optional(Schema.NullOr(Str)) }))),
    customer: Schema.optional(Schema.NullOr(Schema.Struct({ customer_code: OptStr })))
  })
})

/** A transfer outcome webhook's data (A6.8): timestamps in either key style, which we do not need. */
export const TransferEvent = Schema.Struct({
  event: Schema.Literal("transfer.success", "transfer.failed", "transfer.reversed"),
  data: Schema.Struct({
    reference: Str,
    amount: Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int())),
    status: Schema.optional(Str),
    gateway_response: OptStr,
    recipient: Schema.optional(Schema.NullOr(Schema.Struct({ details: Schema.optional(Schema.NullOr(Schema.Struct({ account_number: OptStr }))) })))
  })
})

const bankCodeByName = new Map(NIGERIAN_BANKS.map((b) => [b.name.toLowerCase(), b.code]))

/**
 * A Paystack DVA credit as a provider-neutral credit: the transaction's `reference` is our provider reference
 * (Paystack gives no NIP session id on `charge.success`, A3); the payer as Paystack gives it (`sender_bank` is a name:
 * its CBN code when we know the name, else null).
 */
export const creditOfCharge = (c: Charge): InboundCredit => ({
  reference: c.reference,
  accountNumber: c.authorization.receiver_bank_account_number,
  accountReference: undefined,
  amountKobo: c.amount,
  senderName: c.authorization.sender_name?.slice(0, 200) ?? null,
  senderAccountNumber: c.authorization.sender_bank_account_number?.slice(0, 20) ?? null,
  senderBankCode: (c.authorization.sender_bank && bankCodeByName.get(c.authorization.sender_bank.toLowerCase())) ?? null,
  narration: c.authorization.narration?.slice(0, 500) ?? null,
  paidAt: validDate(c.paid_at) ?? validDate(c.created_at) ?? validDate(c.createdAt) ?? new Date().toISOString(),
  providerSessionId: null
})

const validDate = (s: string | null | undefined) => (s && !Number.isNaN(Date.parse(s)) ? new Date(s).toISOString() : undefined)

/** Whether a credit is one the pipeline takes: a successful NGN `dedicated_nuban` charge to a 10-digit NUBAN. */
export const isDvaCredit = (c: Charge) =>
  c.status === "success" && c.channel === DVA_CHANNEL && (c.currency === undefined || c.currency === "NGN") && /^\d{10}$/.test(c.authorization.receiver_bank_account_number)
