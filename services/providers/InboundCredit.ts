import type { Effect } from "effect"
import type { SandboxEvent } from "../deposits/SandboxEvent.js"
import type { ProviderError } from "./BankProvider.js"

/** A credit the pipeline takes, provider-neutral: what a webhook or the sync of any real provider makes. */
export interface InboundCredit {
  /** The provider's transaction reference: the dedupe key and the transaction's `reference`. */
  readonly reference: string
  /** The NUBAN credited, when the provider names it; else `accountReference` finds it. */
  readonly accountNumber: string | undefined
  /** The provider-side reference of our account (Monnify's `product.reference`). */
  readonly accountReference: string | undefined
  readonly amountKobo: number
  readonly senderName: string | null
  readonly senderAccountNumber: string | null
  readonly senderBankCode: string | null
  readonly narration: string | null
  readonly paidAt: string
  /** The NIP session id (or the provider's own) of the payment, kept beside the reference in the inbox. */
  readonly providerSessionId: string | null
}

/** One credit of a provider's list: its reference at once, its details only when the inbox lacks it (a call each, for Monnify). */
export interface ListedCredit {
  readonly reference: string
  readonly detail: Effect.Effect<InboundCredit | undefined, ProviderError>
}

/** The pipeline's inbound event for a credit to `accountNumber` (the payload the inbox keeps). */
export const eventOf = (merchantId: string, c: InboundCredit, accountNumber: string): SandboxEvent => ({
  event: "transfer.inbound",
  merchantId,
  sessionId: c.reference,
  accountNumber,
  amountKobo: c.amountKobo,
  senderName: c.senderName,
  senderAccountNumber: c.senderAccountNumber,
  senderBankCode: c.senderBankCode,
  narration: c.narration,
  paidAt: c.paidAt,
  reversedSessionId: null,
  ...(c.providerSessionId ? { providerSessionId: c.providerSessionId } : {})
})
