import { doc, type OperationDoc } from "../../src/contract/OperationDoc.js"

// The copilot (docs/copilot.md).

export const COPILOT_DOCS: Readonly<Record<string, OperationDoc>> = {
  "copilot.ask": doc("Ask the copilot a question about your collections", "dashboard",
    "`prompt` (1 to 2000 characters; empty or only spaces is 400 `empty_prompt`): a question in plain English, Nigerian " +
    "business English or Pidgin, misspellings welcome. A deterministic parser picks the `intent` (`collections_summary`, " +
    "`account_status`, `overdue`, `underpaid_deposits`, `overpaid_deposits`, `review_queue`, `high_risk_deposits`, " +
    "`forecast`, `top_debtors`, `deposit_lookup`, `payouts`, `refunds`, `settlements`, `collection_rate`, or `unknown`, " +
    "which answers with example questions) and the answer is read from the token's tenant and mode only; the copilot " +
    "never changes anything. `answer` is text for a person (amounts in naira with kobo, `₦1,500.00`; dates on the Lagos " +
    "calendar); `figures` names every figure the answer states (kobo as integers in keys ending `Kobo`, counts, basis " +
    "points in keys ending `Bps`, Lagos dates `YYYY-MM-DD`); `references` lists what they came from (`accountRef`, " +
    "`transaction`, `transfer`, `settlement` ids, at most 20). Periods: what the question names (today, yesterday, this " +
    "or last week or month, a month, `last N days`, `since 1 March`); otherwise collections are today's, and deposit, " +
    "payout, refund, settlement and risk lists cover the last 30 days; a customer with a period (\"did Amaka Obi pay this " +
    "month?\") answers that customer's payments in the period, not all time. `overdue` counts only what is past its due " +
    "date and names what is owed but not yet due apart. A customer or account not found answers so " +
    "(`figures.matches` 0). `rephrased` is true when the optional language model (off unless `COPILOT_LLM_URL` is set) " +
    "reworded the answer; it is given only the answer and its figures, and its text is kept only when every number in it " +
    "is one of theirs.")
}
