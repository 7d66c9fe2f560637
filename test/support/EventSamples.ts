import type { DataOf, EventType, OutboxEvent } from "../../src/contract/Events.js"
import type { Transaction } from "../../src/contract/Deposits.js"
import type { VirtualAccount } from "../../src/contract/Accounts.js"
import type { Transfer } from "../../src/contract/Transfers.js"
import type { Settlement } from "../../src/contract/Settlement.js"

/** One valid `data` per event type of the catalogue (src/contract/Events.ts), for tests that stage events of their own. */

export const sampleTransaction: Transaction = {
  reference: "000013251121100000000000000001", accountRef: "acct-1", nuban: "9930000737", amountKobo: 150_000, status: "Completed",
  reconciliationStatus: "Exact", riskScore: 0, riskReasons: [], senderName: "ADEYEMI JOHN O", senderAccountNumber: "0108024071",
  senderBankCode: "058", narration: "school fees", paidAt: "2026-11-21T10:00:00.000Z", reconciledAt: "2026-11-21T10:00:02.401Z",
  reversedReference: null, flagged: false, flagReasons: [], review: null, mode: "test"
}

export const sampleAccount: VirtualAccount = {
  accountRef: "acct-1", nuban: "9930000737", bankName: "Collections Sandbox MFB", bankCode: "51999", accountName: "JOHN ADEYEMI",
  name: "John Adeyemi", email: null, phone: null, expectedAmountKobo: 150_000, expiryDateUtc: null, subMerchantRef: null,
  amountPaidKobo: 150_000, deficit: 0, overpayment: 0, paymentState: "FullyPaid", mode: "test", createdAt: "2026-11-01T08:12:44.000Z"
}

export const sampleTransfer = (merchantTxRef = "trf-1"): Transfer => ({
  merchantTxRef, amountKobo: 10_000, accountNumber: "0108024071", bankCode: "058", bankName: "GTBank", accountName: "JOHN ADEYEMI",
  narration: null, status: "Successful", failureReason: null, providerReference: "prv-1", source: "api",
  createdAt: "2026-11-21T10:00:00.000Z", completedAt: "2026-11-21T10:00:05.000Z", mode: "test"
})

const settlement: Settlement = {
  id: "stl_1", accountRef: "acct-1", netKobo: 10_000, status: "Paid", reasonCode: null, reason: null, legs: [],
  createdAt: "2026-11-21T10:00:00.000Z", completedAt: "2026-11-21T10:00:05.000Z", mode: "test"
}

const deposit = { transaction: sampleTransaction, account: sampleAccount, risk: { score: 0, reasons: [] } }
const period = {
  scheduleId: "bsc_1", reference: "fees-2026", accountRef: "acct-1",
  period: {
    id: "bpr_1", scheduleId: "bsc_1", index: 0, periodStart: "2026-11-01T00:00:00.000Z", periodEnd: "2026-12-01T00:00:00.000Z",
    dueDate: "2026-11-08", amountKobo: 150_000, paidKobo: 0, outstandingKobo: 150_000, status: "Due" as const, paidAt: null
  }
}

export const SAMPLE_DATA: { readonly [T in EventType]: DataOf<T> } = {
  "deposit.reconciled": deposit,
  "transaction.review_required": deposit,
  "transaction.reviewed": { transaction: sampleTransaction, account: sampleAccount },
  "rule.notify": { ruleId: "rul_1", trigger: "AnyDeposit", transaction: sampleTransaction },
  "flow.notify": { flowId: "flw_1", trigger: "AnyDeposit", transaction: sampleTransaction },
  "transaction.flagged": { transaction: { ...sampleTransaction, flagged: true, flagReasons: ["big"] }, reason: "big", ruleId: "rul_1" },
  "transfer.successful": { transfer: sampleTransfer() },
  "transfer.failed": { transfer: { ...sampleTransfer(), status: "Failed", failureReason: "refused" } },
  "transfer.reversed": { transfer: { ...sampleTransfer(), status: "Reversed" } },
  "refund.sent": { depositReference: sampleTransaction.reference, accountRef: "acct-1", transfer: { ...sampleTransfer("rfd-1"), source: "refund" } },
  "settlement.paid": { settlement },
  "settlement.failed": { settlement: { ...settlement, status: "Failed" } },
  "settlement.skipped": { settlement: { ...settlement, status: "Skipped", reasonCode: "flat_legs_exceed_net", reason: "flat legs exceed the net" } },
  "reversal.receivable": { ...deposit, receivableKobo: 5_000 },
  "billing.period.due": period,
  "billing.period.paid": { ...period, period: { ...period.period, paidKobo: 150_000, outstandingKobo: 0, status: "Paid", paidAt: "2026-11-05T00:00:00.000Z" } },
  "billing.period.overdue": { ...period, period: { ...period.period, status: "Overdue" } },
  "virtual_account.updated": { account: sampleAccount, changed: ["expectedAmountKobo"] },
  "internal.automation.fired": { runId: "run_1" },
  "internal.insights.account": { accountId: "va_1" },
  "internal.insights.schedule": { scheduleId: "bsc_1", accountId: "va_1" }
}

/** An event of the type with its sample data. */
export const sampleEvent = <T extends EventType>(type: T): OutboxEvent => ({ type, data: SAMPLE_DATA[type] }) as OutboxEvent
