import { type AccountFigures, deficitKobo, paymentStateOf } from "./Reconciliation.js"

/**
 * Live checkout's pure parts: the session's TTL bounds, what a payer sees (payment state only, never who they are),
 * and the Server-Sent Events framing of the stream.
 */

export const CHECKOUT_TTL_DEFAULT_SECONDS = 3_600
export const CHECKOUT_TTL_MIN_SECONDS = 60
export const CHECKOUT_TTL_MAX_SECONDS = 86_400

export type CheckoutStatus = "awaiting_payment" | "partially_paid" | "paid" | "overpaid"

/**
 * The payer's status: an account with an expected amount follows its payment state; an open account (no expected
 * amount) is paid once anything arrived.
 */
export const checkoutStatusOf = (f: AccountFigures): CheckoutStatus => {
  switch (paymentStateOf(f)) {
    case "AwaitingPayment":
      return "awaiting_payment"
    case "PartiallyPaid":
      return "partially_paid"
    case "FullyPaid":
      return "paid"
    case "Overpaid":
      return "overpaid"
    case "Open":
      return f.amountPaidKobo > 0 ? "paid" : "awaiting_payment"
  }
}

/** What the snapshot endpoint, the stream's every `data:` line and the hosted page show: payment state only. */
export interface CheckoutSnapshot {
  readonly status: CheckoutStatus
  /** The expected amount; null for an open account (any amount is welcome). */
  readonly amountDueKobo: number | null
  readonly amountPaidKobo: number
  readonly remainingKobo: number
  readonly nuban: string
  readonly bankName: string
  readonly expiresAt: string
  readonly updatedAt: string
}

export const snapshotOf = (
  account: AccountFigures & { readonly nuban: string; readonly bankName: string },
  expiresAt: Date,
  updatedAt: Date
): CheckoutSnapshot => ({
  status: checkoutStatusOf(account),
  amountDueKobo: account.expectedAmountKobo,
  amountPaidKobo: account.amountPaidKobo,
  remainingKobo: deficitKobo(account),
  nuban: account.nuban,
  bankName: account.bankName,
  expiresAt: expiresAt.toISOString(),
  updatedAt: updatedAt.toISOString()
})

/**
 * The stream's event id for a snapshot: its payment state in a few characters, so a client that reconnects with
 * `Last-Event-ID` gets an event only if the state moved since what it last saw.
 */
export const snapshotVersion = (s: CheckoutSnapshot): string => `${s.amountPaidKobo}.${s.amountDueKobo ?? "open"}.${s.status}`

/** One Server-Sent Event. The data is one line of JSON (JSON.stringify never emits a raw newline). */
export const sseEvent = (event: "snapshot" | "update" | "expired", id: string, data: unknown): string =>
  `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`

export const SSE_HEARTBEAT = ": heartbeat\n\n"
