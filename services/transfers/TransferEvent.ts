import { Schema } from "effect"
import type { TransferOutcome } from "../../src/domain/MoneyOut.js"

/**
 * The sandbox provider's webhook about a transfer it accepted (outbound), signed like its deposit webhooks over
 * `event|merchantId|sessionId|accountNumber|amountKobo|paidAt` (`sessionId` is the provider's own reference).
 */
export const TRANSFER_OUTCOME_EVENTS: Readonly<Record<string, TransferOutcome>> = {
  "transfer.success": "success",
  "transfer.failed": "failed",
  "transfer.reversed": "reversed"
}
export const isTransferOutcomeEvent = (event: unknown): event is keyof typeof TRANSFER_OUTCOME_EVENTS =>
  typeof event === "string" && Object.hasOwn(TRANSFER_OUTCOME_EVENTS, event)

export const TransferOutcomeEvent = Schema.Struct({
  event: Schema.Literal("transfer.success", "transfer.failed", "transfer.reversed"),
  merchantId: Schema.String,
  sessionId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  /** Our reference: the transfer's merchantTxRef. */
  reference: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  accountNumber: Schema.String.pipe(Schema.pattern(/^\d{10}$/)),
  amountKobo: Schema.Int.pipe(Schema.positive()),
  paidAt: Schema.String,
  reason: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))), { default: () => null })
})
export type TransferOutcomeEvent = typeof TransferOutcomeEvent.Type
