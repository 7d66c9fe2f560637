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
  reversedSessionId: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))), { default: () => null })
})
export type SandboxEvent = typeof SandboxEvent.Type

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
