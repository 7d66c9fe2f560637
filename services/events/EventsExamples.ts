import { type OperationExamples, page, problem } from "../../src/contract/OperationExample.js"

/** The catalogue's own deposit.reconciled example (docs/webhooks.md), in test mode. */
const RECONCILED = {"id":"evt_4f1c2a9b0d6e8f7a5b3c1d2e","type":"deposit.reconciled","createdAt":"2026-11-28T13:30:16.412Z","mode":"test","data":{"transaction":{"reference":"000013251121100000000000000001","accountRef":"student-0042","nuban":"9930000737","amountKobo":175000,"status":"Completed","reconciliationStatus":"Overpaid","riskScore":15,"riskReasons":[{"code":"name_partial_match","points":15,"detail":"payer name matches customer name at 0.71 (PARTIAL)"}],"senderName":"ADEYEMI JOHN O","senderAccountNumber":"0108024071","senderBankCode":"058","narration":"school fees","paidAt":"2026-11-21T10:00:00.000Z","reconciledAt":"2026-11-21T10:00:02.401Z","reversedReference":null,"flagged":false,"flagReasons":[],"review":null,"mode":"test"},"account":{"accountRef":"student-0042","nuban":"9930000737","bankName":"Collections Sandbox MFB","bankCode":"51999","accountName":"JOHN ADEYEMI","name":"John Adeyemi","email":"john@example.ng","phone":null,"expectedAmountKobo":150000,"expiryDateUtc":null,"subMerchantRef":null,"amountPaidKobo":175000,"deficit":0,"overpayment":25000,"paymentState":"Overpaid","mode":"live","createdAt":"2026-11-01T08:12:44.000Z"},"risk":{"score":15,"reasons":[{"code":"name_partial_match","points":15,"detail":"payer name matches customer name at 0.71 (PARTIAL)"}]}}}

/** Events: what the OpenAPI document shows as each operation's responses (src/contract/OperationExample.ts). */
export const EVENTS_EXAMPLES: OperationExamples = {
  "events.list": { responses: { 200: page(RECONCILED) } },
  "events.get": {
    responses: { 200: RECONCILED, 404: problem("event_not_found", "No event \"evt_4f1c9a2b7d3e8f6a0b5c1d2e\" in this tenant and mode in the last 30 days.") }
  }
}
