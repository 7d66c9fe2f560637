import { type OperationExamples, page, problem } from "../../src/contract/OperationExample.js"

const NOT_FOUND = problem("virtual_account_not_found", "No virtual account \"order-1001\" in this tenant and mode.")

/** Ledger reads: what the OpenAPI document shows as each operation's responses (src/contract/OperationExample.ts). */
export const LEDGER_EXAMPLES: OperationExamples = {
  "ledger.entries": {
    responses: {
      200: page(
        { id: "le_3qVt0x8bNw2mYc1LrZk7Ag", journalId: "txn:999999261128143015000000000001", account: "customer_funds:order-1001", amountKobo: -150000, reason: "deposit", reference: "999999261128143015000000000001", createdAt: "2026-11-28T13:30:16.412Z" },
        { id: "le_Hf9Kp2sQe6TzW0aUoB4xJw", journalId: "txn:999999261128143015000000000001", account: "provider_clearing", amountKobo: 150000, reason: "deposit", reference: "999999261128143015000000000001", createdAt: "2026-11-28T13:30:16.412Z" }
      ),
      404: NOT_FOUND
    }
  },
  "ledger.statement": {
    responses: {
      200: {
        accountRef: "order-1001", nuban: "9912345678", from: "2026-10-31T23:00:00.000Z", to: "2026-11-30T23:00:00.000Z",
        opening: { balanceKobo: 0, freeKobo: 0, heldKobo: 0 },
        movements: [
          { createdAt: "2026-11-28T13:30:16.412Z", journalId: "txn:999999261128143015000000000001", reason: "deposit", reference: "999999261128143015000000000001", amountKobo: 150000, freeChangeKobo: 150000, heldChangeKobo: 0, balanceKobo: 150000, freeBalanceKobo: 150000, heldBalanceKobo: 0 },
          { createdAt: "2026-11-28T13:41:02.007Z", journalId: "hold:999999261128143015000000000001:1", reason: "hold", reference: "999999261128143015000000000001", amountKobo: 0, freeChangeKobo: -50000, heldChangeKobo: 50000, balanceKobo: 150000, freeBalanceKobo: 100000, heldBalanceKobo: 50000 }
        ],
        closing: { balanceKobo: 150000, freeKobo: 100000, heldKobo: 50000 }
      },
      404: NOT_FOUND
    }
  }
}
