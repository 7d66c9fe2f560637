import { LedgerAccount } from "../../src/domain/Ledger.js"
import type { Column } from "../../src/db/BulkInsert.js"
import type { DepositOutcome } from "../../src/domain/DepositDecision.js"
import { normalisePayerName } from "../../src/domain/Reconciliation.js"
import type { StagedEvent } from "../outbox/Outbox.js"
import { toTransaction, type TransactionRow } from "./Transactions.js"
import { toVirtualAccount, type VirtualAccountRow } from "../accounts/VirtualAccounts.js"
import type { InboxRow } from "./Inbox.js"

// What the reconciler reads and writes for a deposit: the rows of services/deposits/HotPath.ts.

export type ReconcileResult = "reconciled" | "already-reconciled" | "missing-inbox-row"

/** `receivableOpen`: the tenant owes for late reversals in the account's mode (`tenants.receivable_modes`). */
export type LockedAccount = VirtualAccountRow & { readonly riskThreshold: number; readonly receivableOpen: boolean }

export const ACCOUNT_COLUMNS = `va.id, va.tenant_id, va.mode, va.account_ref, va.customer_id, va.request_fingerprint, va.status,
  false AS lease_expired, va.nuban, va.bank_code, va.bank_name, va.account_name, c.name, c.email, c.phone, va.expected_amount_kobo,
  va.expiry_date_utc, va.sub_merchant_ref, va.amount_paid_kobo, va.first_activity_at, va.created_at`

/**
 * The SET list that marks inbox rows reconciled. A reconciled event plainly reached the bus, so it is marked
 * published too (the receiver's own published marks skip rows already reconciled).
 */
export const INBOX_RECONCILED = "reconciled_at = COALESCE(reconciled_at, now()), published_at = COALESCE(published_at, now())"

/**
 * The transactions row for one decided deposit; `after` is how the batch leaves it (a later reversal of the same batch
 * may have taken it back), the decision's own state when not given.
 */
export const transactionRowOf = (
  inbox: InboxRow,
  account: { readonly id: string; readonly accountRef: string } | undefined | null,
  outcome: DepositOutcome,
  paidAt: Date,
  after: { readonly reversedKobo: number; readonly status: DepositOutcome["status"] } = { reversedKobo: 0, status: outcome.status }
) => {
  const event = inbox.payload
  return {
    tenantId: inbox.tenantId, mode: inbox.mode, provider: inbox.provider, reference: inbox.providerReference, inboundEventId: inbox.id,
    virtualAccountId: account?.id ?? null, accountRef: account?.accountRef ?? null, nuban: inbox.accountNumber,
    kind: inbox.kind, amountKobo: event.amountKobo, appliedKobo: outcome.appliedKobo, reversedKobo: after.reversedKobo, surplusKobo: outcome.surplusKobo,
    status: after.status, reconciliationStatus: outcome.reconciliationStatus, riskScore: outcome.risk.score,
    riskReasons: JSON.stringify(outcome.risk.reasons), senderName: event.senderName,
    senderNameKey: event.senderName ? normalisePayerName(event.senderName) || null : null,
    senderAccountNumber: event.senderAccountNumber, senderBankCode: event.senderBankCode, narration: event.narration,
    paidAt, reversedReference: event.reversedSessionId, amountPaidAfterKobo: outcome.amountPaidAfterKobo, paymentStateAfter: outcome.paymentStateAfter
  }
}

export type TransactionValues = ReturnType<typeof transactionRowOf>

/** The columns of a batch's transactions insert (`bulkInsert`), from the same values `transactionRowOf` gives. */
export const TRANSACTION_INSERT_COLUMNS: ReadonlyArray<Column<TransactionValues>> = [
  ["tenant_id", "text", (v) => v.tenantId], ["mode", "text", (v) => v.mode], ["provider", "text", (v) => v.provider],
  ["reference", "text", (v) => v.reference], ["inbound_event_id", "int8", (v) => v.inboundEventId],
  ["virtual_account_id", "text", (v) => v.virtualAccountId], ["account_ref", "text", (v) => v.accountRef], ["nuban", "text", (v) => v.nuban],
  ["kind", "text", (v) => v.kind], ["amount_kobo", "int8", (v) => v.amountKobo], ["applied_kobo", "int8", (v) => v.appliedKobo],
  ["reversed_kobo", "int8", (v) => v.reversedKobo],
  ["surplus_kobo", "int8", (v) => v.surplusKobo], ["status", "text", (v) => v.status],
  ["reconciliation_status", "text", (v) => v.reconciliationStatus], ["risk_score", "int4", (v) => v.riskScore],
  ["risk_reasons", "jsonb", (v) => v.riskReasons], ["sender_name", "text", (v) => v.senderName],
  ["sender_name_key", "text", (v) => v.senderNameKey], ["sender_account_number", "text", (v) => v.senderAccountNumber],
  ["sender_bank_code", "text", (v) => v.senderBankCode], ["narration", "text", (v) => v.narration], ["paid_at", "timestamptz", (v) => v.paidAt],
  ["reversed_reference", "text", (v) => v.reversedReference], ["amount_paid_after_kobo", "int8", (v) => v.amountPaidAfterKobo],
  ["payment_state_after", "text", (v) => v.paymentStateAfter]
]

/**
 * The stored row a freshly inserted transaction reads back as, from what was written and what Postgres assigns
 * (`reconciled_at`, the transaction's `now()`); the id is not part of any event. A test holds it to a real read.
 */
export const insertedTransactionRow = (v: TransactionValues, outcome: DepositOutcome, reconciledAt: Date): TransactionRow => ({
  id: 0, tenantId: v.tenantId, mode: v.mode, reference: v.reference, virtualAccountId: v.virtualAccountId, accountRef: v.accountRef,
  nuban: v.nuban, kind: v.kind, amountKobo: v.amountKobo, appliedKobo: v.appliedKobo, reversedKobo: v.reversedKobo, surplusKobo: v.surplusKobo,
  status: v.status, reconciliationStatus: v.reconciliationStatus, riskScore: v.riskScore, riskReasons: outcome.risk.reasons,
  senderName: v.senderName, senderAccountNumber: v.senderAccountNumber, senderBankCode: v.senderBankCode, narration: v.narration,
  paidAt: v.paidAt, reconciledAt, reversedReference: v.reversedReference, flagged: false, flagReasons: [],
  reviewDecision: null, reviewNote: null, reviewedBy: null, reviewedAt: null
})

/** The events a reconciled deposit stages: `deposit.reconciled`, and `transaction.review_required` when it is held. */
export const depositEvents = (
  inbox: Pick<InboxRow, "tenantId" | "mode" | "accountNumber">,
  account: { readonly accountRef: string } | undefined | null,
  outcome: DepositOutcome,
  transaction: TransactionRow,
  accountAfter: VirtualAccountRow | undefined
): Array<StagedEvent> => {
  const data = { transaction: toTransaction(transaction), account: accountAfter ? toVirtualAccount(accountAfter) : null, risk: outcome.risk }
  const subjectKey = account?.accountRef ?? inbox.accountNumber
  const event = (type: "deposit.reconciled" | "transaction.review_required"): StagedEvent => ({ tenantId: inbox.tenantId, mode: inbox.mode, type, subjectKey, data })
  const events = outcome.status === "PendingReview" ? [event("deposit.reconciled"), event("transaction.review_required")] : [event("deposit.reconciled")]
  // A reversal that came after the money had left (settled, paid out, refunded): what the deposit's hold and the
  // account's free money no longer cover is owed by the tenant (tenant_receivable); its next collections pay it off
  // first, and settlement waits until they have. (A collection's recovery leg is negative: no event.)
  const receivableKobo = outcome.legs.find((l) => l.account === LedgerAccount.tenantReceivable)?.amountKobo ?? 0
  if (receivableKobo > 0) {
    events.push({ tenantId: inbox.tenantId, mode: inbox.mode, type: "reversal.receivable", subjectKey, data: { ...data, receivableKobo } })
  }
  return events
}
