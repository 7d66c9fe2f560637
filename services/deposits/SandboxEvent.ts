import { Schema } from "effect"
import * as crypto from "node:crypto"

/** The sandbox provider's webhook body (DESIGN.md, "The built-in sandbox provider"). Amounts are integer kobo. */
export const SandboxEvent = Schema.Struct({
  event: Schema.String,
  merchantId: Schema.String,
  sessionId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  accountNumber: Schema.String.pipe(Schema.pattern(/^\d{10}$/)),
  amountKobo: Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)),
  senderName: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(200))), { default: () => null }),
  senderAccountNumber: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(20))), { default: () => null }),
  senderBankCode: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(10))), { default: () => null }),
  narration: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))), { default: () => null }),
  paidAt: Schema.String.pipe(Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "paidAt must be an ISO date-time" })),
  reversedSessionId: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))), { default: () => null }),
  /** Real providers only: the payment's NIP session id (Monnify), kept in the inbox beside the provider's reference. */
  providerSessionId: Schema.optional(Schema.String.pipe(Schema.maxLength(64)))
})
export type SandboxEvent = typeof SandboxEvent.Type

const optionalText = (v: unknown, max: number): string | null | false =>
  v === undefined || v === null ? null : typeof v === "string" && v.length <= max ? v : false

/**
 * `SandboxEvent`'s decoding done by hand for the common case, with the same checks and the same output; undefined
 * whenever anything is off, and the caller then decodes with the Schema (which words the failure). The receiver runs
 * this on every webhook; the Schema's general machinery showed in the service's profile (docs/performance.md). A property test
 * holds the two to each other (test/domain/SandboxEventDecode.test.ts).
 */
export const decodeSandboxEventFast = (r: Record<string, unknown>): SandboxEvent | undefined => {
  const { event, merchantId, sessionId, accountNumber, amountKobo, paidAt } = r
  if (typeof event !== "string" || typeof merchantId !== "string") return undefined
  if (typeof sessionId !== "string" || sessionId.length < 1 || sessionId.length > 64) return undefined
  if (typeof accountNumber !== "string" || !/^\d{10}$/.test(accountNumber)) return undefined
  if (typeof amountKobo !== "number" || !Number.isSafeInteger(amountKobo) || amountKobo <= 0) return undefined
  if (typeof paidAt !== "string" || Number.isNaN(Date.parse(paidAt))) return undefined
  const senderName = optionalText(r.senderName, 200)
  const senderAccountNumber = optionalText(r.senderAccountNumber, 20)
  const senderBankCode = optionalText(r.senderBankCode, 10)
  const narration = optionalText(r.narration, 500)
  const reversedSessionId = optionalText(r.reversedSessionId, 64)
  if (senderName === false || senderAccountNumber === false || senderBankCode === false || narration === false || reversedSessionId === false) return undefined
  return { event, merchantId, sessionId, accountNumber, amountKobo, senderName, senderAccountNumber, senderBankCode, narration, paidAt, reversedSessionId }
}

export const INFLOW_EVENT = "transfer.inbound"
export const REVERSAL_EVENT = "transfer.reversal"
export const SIGNATURE_HEADER = "x-sandbox-signature"

const field = (v: unknown) => (v === null || v === undefined ? "" : String(v))

/** `event|merchantId|sessionId|accountNumber|amountKobo|paidAt`, from the body's own values. */
export const canonicalString = (body: Record<string, unknown>) =>
  [body.event, body.merchantId, body.sessionId, body.accountNumber, body.amountKobo, body.paidAt].map(field).join("|")

export const signSandboxEvent = (secret: string, body: Record<string, unknown>) =>
  crypto.createHmac("sha256", secret).update(canonicalString(body)).digest("hex")

/** Constant-time comparison of the lower-case hex HMAC. */
export const verifySandboxSignature = (secret: string, body: Record<string, unknown>, signature: string | undefined) => {
  if (!signature || !/^[0-9a-fA-F]{64}$/.test(signature)) return false
  const expected = Buffer.from(signSandboxEvent(secret, body), "hex")
  return crypto.timingSafeEqual(expected, Buffer.from(signature.toLowerCase(), "hex"))
}

/** A NIBSS-style 30-digit session id: NIP virtual bank 999999, yyMMddHHmmss, 12 random digits. */
export const newSessionId = (now: Date) => {
  const p = (n: number) => String(n).padStart(2, "0")
  const stamp = `${p(now.getUTCFullYear() % 100)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`
  const random = Array.from(crypto.randomBytes(12), (b) => String(b % 10)).join("")
  return `999999${stamp}${random}`
}
