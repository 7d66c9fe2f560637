import { Either, Schema } from "effect"
import { findBankByNipCode } from "../../src/domain/Banks.js"
import { nairaToKobo } from "../../src/domain/Naira.js"
import type { InboundCredit } from "./InboundCredit.js"

/**
 * Monnify's wire shapes, as far as the adapter reads them (PROVIDERS.md §B), and their conversion to ours. Schemas
 * ignore fields they do not name. Monnify mixes formats on purpose-free grounds (B1, B3, B4, B8.9): `responseCode` is
 * the string "0" on success and the number 99 on errors; amounts are naira as numbers or decimal strings; timestamps
 * come as `yyyy-MM-dd HH:mm:ss.SSS`, `dd/MM/yyyy h:mm:ss a` (both WAT, no zone) or ISO with `+0000`. Everything is
 * converted here, once: kobo exactly from the decimal text, times to UTC ISO.
 */

const Str = Schema.String
const OptStr = Schema.optional(Schema.NullOr(Schema.String))
const NairaText = Schema.Union(Schema.Number, Schema.String)

/** `{requestSuccessful, responseMessage, responseCode, responseBody}` (B1). */
export const Envelope = <A, I>(body: Schema.Schema<A, I>) =>
  Schema.Struct({ requestSuccessful: Schema.Literal(true), responseCode: Schema.Union(Schema.String, Schema.Number), responseBody: body })
const ErrorEnvelope = Schema.Struct({ responseMessage: Schema.optional(Schema.NullOr(Str)), responseCode: Schema.optional(Schema.Union(Schema.String, Schema.Number)) })
export const monnifyMessage = (json: unknown): string => {
  const e = Schema.decodeUnknownEither(ErrorEnvelope)(json)
  return Either.isRight(e) && e.right.responseMessage ? e.right.responseMessage : "no message"
}

export const Login = Schema.Struct({ accessToken: Str, expiresIn: Schema.Number })
export const Bank = Schema.Struct({ name: Str, code: Str })
export const Validated = Schema.Struct({ accountNumber: Str, accountName: Str, bankCode: Schema.optional(Str) })

export const ReservedAccount = Schema.Struct({
  accountReference: Str,
  accounts: Schema.Array(Schema.Struct({ bankCode: Str, bankName: Str, accountNumber: Str, accountName: Str }))
})

export const Disbursement = Schema.Struct({ reference: Str, status: Str, comment: OptStr, sessionId: OptStr, transactionDescription: OptStr })

/** Our transfer states from Monnify's (B6's vocabulary). */
export const OTP_REASON = "Monnify holds this transfer for an OTP (two-factor authorisation is on for the wallet): ask Monnify to turn transfer OTP off for API transfers, then send it again with a new merchantTxRef"
export const disbursementStatusOf = (status: string, comment?: string | null): { readonly status: "Processing" | "Successful" | "Failed" | "Reversed"; readonly reason: string | null } => {
  switch (status.toUpperCase()) {
    case "SUCCESS":
    case "COMPLETED": return { status: "Successful", reason: null }
    case "REVERSED": return { status: "Reversed", reason: "The beneficiary bank returned the funds (Monnify: REVERSED)" }
    case "FAILED": return { status: "Failed", reason: `Monnify reported the transfer failed${comment ? `: ${comment}` : ""}` }
    case "EXPIRED": return { status: "Failed", reason: "Monnify let the transfer expire" }
    case "PENDING_AUTHORIZATION":
    case "PENDING_BATCH_AUTHORIZATION":
    case "OTP_EMAIL_DISPATCH_FAILED": return { status: "Failed", reason: OTP_REASON }
    default: return { status: "Processing", reason: null }
  }
}

/** D07 and D06 (B6) in words a tenant can act on. */
export const refusalReason = (message: string): string =>
  /D07/.test(message)
    ? "Monnify refused it as a duplicate (D07): the same amount to the same account within 2 minutes. Wait 2 minutes, then send it again with a new merchantTxRef"
    : /D06/.test(message)
    ? "Monnify refused it (D06): this server's IP address is not whitelisted for transfers on the Monnify account. Ask Monnify to whitelist it"
    : `Monnify refused the transfer: ${message}`

/** `yyyy-MM-dd HH:mm:ss.SSS`, `dd/MM/yyyy h:mm:ss a` (WAT, B6 decodes them so) or ISO: UTC ISO, or undefined. */
export const monnifyTime = (raw: string | null | undefined): string | undefined => {
  if (!raw) return undefined
  const wat = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number) =>
    new Date(Date.UTC(y, mo - 1, d, h - 1, mi, s, ms)).toISOString()
  let m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(raw)
  if (m) return wat(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!, Number((m[7] ?? "0").padEnd(3, "0")))
  m = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) ([AP]M)$/i.exec(raw)
  if (m) {
    const h12 = +m[4]! % 12
    return wat(+m[3]!, +m[2]!, +m[1]!, m[7]!.toUpperCase() === "PM" ? h12 + 12 : h12, +m[5]!, +m[6]!, 0)
  }
  const iso = Date.parse(raw.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"))
  return Number.isNaN(iso) ? undefined : new Date(iso).toISOString()
}

const Payer = Schema.Struct({ bankCode: OptStr, amountPaid: Schema.optional(NairaText), accountName: OptStr, sessionId: OptStr, accountNumber: OptStr })

/** `SUCCESSFUL_TRANSACTION`'s eventData (B3). */
export const Collection = Schema.Struct({
  product: Schema.Struct({ reference: OptStr, type: Str }),
  transactionReference: Str.pipe(Schema.minLength(1), Schema.maxLength(64)),
  paymentReference: OptStr,
  paidOn: OptStr,
  paymentDescription: OptStr,
  paymentSourceInformation: Schema.optional(Schema.NullOr(Schema.Union(Schema.Array(Payer), Payer))),
  destinationAccountInformation: Schema.Struct({ accountNumber: Str, bankCode: OptStr }),
  amountPaid: NairaText,
  paymentStatus: Schema.optional(Str),
  currency: Schema.optional(Str)
})
export type Collection = typeof Collection.Type

/** The requery's `TransactionStatusResponse` (B4): another shape, amounts as strings. */
export const TransactionStatus = Schema.Struct({
  transactionReference: Str.pipe(Schema.minLength(1), Schema.maxLength(64)),
  paymentReference: OptStr,
  amountPaid: NairaText,
  paidOn: OptStr,
  paymentStatus: Str,
  paymentDescription: OptStr,
  product: Schema.optional(Schema.NullOr(Schema.Struct({ type: OptStr, reference: OptStr }))),
  accountDetails: Schema.optional(Schema.NullOr(Payer)),
  accountPayments: Schema.optional(Schema.NullOr(Schema.Array(Payer)))
})
export type TransactionStatus = typeof TransactionStatus.Type

/** A page of `GET /api/v1/transactions/search` (0-based Spring page, B4). */
export const SearchPage = Schema.Struct({
  content: Schema.Array(Schema.Struct({ transactionReference: Str, paymentStatus: Schema.optional(Str) })),
  last: Schema.optional(Schema.Boolean),
  totalPages: Schema.optional(Schema.Number)
})

/** `*_DISBURSEMENT` eventData (B6). */
export const DisbursementEvent = Schema.Struct({
  eventType: Schema.Literal("SUCCESSFUL_DISBURSEMENT", "FAILED_DISBURSEMENT", "REVERSED_DISBURSEMENT"),
  eventData: Schema.Struct({
    reference: Str, amount: NairaText, destinationAccountNumber: OptStr, transactionDescription: OptStr, status: Schema.optional(Str)
  })
})

/** `REJECTED_PAYMENT` (B3): money that never arrived. */
export const RejectedPayment = Schema.Struct({
  transactionReference: Str,
  amount: Schema.optional(NairaText),
  paymentSourceInformation: Schema.optional(Schema.NullOr(Schema.Union(Schema.Array(Payer), Payer))),
  paymentRejectionInformation: Schema.optional(Schema.NullOr(Schema.Struct({
    destinationAccountNumber: OptStr, rejectionReason: OptStr, expectedAmount: Schema.optional(NairaText)
  })))
})

/** The loose first look at any Monnify webhook. */
export const WebhookHead = Schema.Struct({
  eventType: Str,
  eventData: Schema.Struct({
    reference: Schema.optional(Schema.NullOr(Str)),
    transactionReference: Schema.optional(Schema.NullOr(Str)),
    product: Schema.optional(Schema.NullOr(Schema.Struct({ reference: OptStr, type: OptStr }))),
    destinationAccountInformation: Schema.optional(Schema.NullOr(Schema.Struct({ accountNumber: OptStr }))),
    paymentRejectionInformation: Schema.optional(Schema.NullOr(Schema.Struct({ destinationAccountNumber: OptStr })))
  })
})

const firstPayer = (p: typeof Payer.Type | ReadonlyArray<typeof Payer.Type> | null | undefined) => (Array.isArray(p) ? p[0] : (p as typeof Payer.Type | null | undefined)) ?? undefined

/** A payer's bank code in either code system (C4): a CBN code as it is, a NIP 6-digit code mapped when we know it. */
const payerBank = (code: string | null | undefined) => {
  if (!code) return null
  if (/^\d{6}$/.test(code)) return findBankByNipCode(code)?.code ?? null
  return code.slice(0, 10)
}

/** A webhook's collection as a credit; a string when it is not one we take (and why). */
export const creditOfCollection = (c: Collection, now: Date): Either.Either<InboundCredit, string> => {
  if (c.product.type !== "RESERVED_ACCOUNT") return Either.left(`product ${c.product.type} is not a reserved account`)
  if (c.paymentStatus !== undefined && c.paymentStatus !== "PAID") return Either.left(`payment status ${c.paymentStatus}`)
  if (c.currency !== undefined && c.currency !== "NGN") return Either.left(`currency ${c.currency}`)
  const kobo = nairaToKobo(c.amountPaid)
  if (Either.isLeft(kobo)) return Either.left(`amountPaid: ${kobo.left}`)
  if (kobo.right <= 0) return Either.left("amountPaid is zero")
  const payer = firstPayer(c.paymentSourceInformation)
  return Either.right({
    reference: c.transactionReference, accountNumber: c.destinationAccountInformation.accountNumber, accountReference: c.product.reference ?? undefined,
    amountKobo: kobo.right, senderName: payer?.accountName?.slice(0, 200) ?? null, senderAccountNumber: payer?.accountNumber?.slice(0, 20) ?? null,
    senderBankCode: payerBank(payer?.bankCode), narration: c.paymentDescription?.slice(0, 500) ?? null,
    paidAt: monnifyTime(c.paidOn) ?? now.toISOString(), providerSessionId: payer?.sessionId?.slice(0, 64) || null
  })
}

/** A requery's transaction as a credit (the sync's detail call). */
export const creditOfStatus = (t: TransactionStatus, now: Date): Either.Either<InboundCredit, string> => {
  if (t.product?.type && t.product.type !== "RESERVED_ACCOUNT") return Either.left(`product ${t.product.type} is not a reserved account`)
  if (t.paymentStatus !== "PAID") return Either.left(`payment status ${t.paymentStatus}`)
  const kobo = nairaToKobo(t.amountPaid)
  if (Either.isLeft(kobo)) return Either.left(`amountPaid: ${kobo.left}`)
  const payer = t.accountPayments?.[0] ?? t.accountDetails ?? undefined
  return Either.right({
    reference: t.transactionReference, accountNumber: undefined, accountReference: t.product?.reference ?? undefined, amountKobo: kobo.right,
    senderName: payer?.accountName?.slice(0, 200) ?? null, senderAccountNumber: payer?.accountNumber?.slice(0, 20) ?? null,
    senderBankCode: payerBank(payer?.bankCode), narration: t.paymentDescription?.slice(0, 500) ?? null,
    paidAt: monnifyTime(t.paidOn) ?? now.toISOString(), providerSessionId: payer?.sessionId?.slice(0, 64) || null
  })
}
