import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

// Reading the ledger (docs/ledger.md).

const RANGE = "`from` (inclusive) and `to` (exclusive): a date-time with its offset (`2026-05-01T09:30:00Z`), or a date " +
  "(`2026-05-01`) meaning that calendar day in Lagos (WAT, UTC+1): `from` its start, `to` its end, so `from=2026-05-01&to=2026-05-31` is May. " +
  "Anything else, or `from` not before `to`, is a 400 `validation_failed`."

export const LEDGER_DOCS: Readonly<Record<string, OperationDoc>> = {
  "ledger.entries": doc("List ledger entries", "any", `The journal entries of the caller's tenant in its mode (test and live are separate books). ${PAGE} The page key is the entry's \`id\`. ` +
    "Each entry: `id`, `journalId`, `account`, `amountKobo` (signed: debit positive, credit negative; each journal sums to zero), `reason`, `reference`, `createdAt`. " +
    "Account names are shown as you know them: a virtual account's accounts carry its accountRef (`customer_funds:order-1001`, `escrow:order-1001`, " +
    "`review_pending:order-1001`), never an internal id. `reason` says why the journal was posted (`deposit`, `reversal`, `review_approved`, `review_rejected`, " +
    "`hold`, `release`, `payout`, `refund`, `settlement`, `settlement_leg`, a transfer's outcome such as `payout_paid`, `refund_returned`, `settlement_leg_reversed`, or `other`); " +
    "`reference` what it is about (a deposit's reference, a transfer's merchantTxRef, a settlement's id). " +
    `\`accountRef\` keeps the entries of that virtual account's accounts (unknown: 404 \`virtual_account_not_found\`). ${RANGE}`),
  "ledger.statement": doc("A virtual account's statement (JSON or CSV)", "any", "The money the service holds for the account's customer: " +
    "`opening` figures, each `movement` in the range oldest first with the running figures, and the `closing` figures; opening plus the movements is the closing, to the kobo. " +
    "The balance is free (customer_funds) plus held (escrow: holds; review_pending: deposits awaiting review): a deposit raises it, a reversal, a refund or a settlement lowers it, " +
    "and a hold or its release moves money between free and held (`amountKobo` 0). Each movement is one journal: `reason`, `reference`, `journalId`, `amountKobo`, " +
    `\`freeChangeKobo\`, \`heldChangeKobo\`, \`balanceKobo\`, \`freeBalanceKobo\`, \`heldBalanceKobo\`. ${RANGE} Without \`to\`, up to now (the answer's \`to\`). ` +
    "With `Accept: text/csv`, the same as CSV (RFC 4180, CRLF, a header row; an `opening_balance` row, one row per movement, a `closing_balance` row; amounts in integer kobo, " +
    "and naira text in `amount_naira` and `balance_naira`). An unknown accountRef is 404 `virtual_account_not_found`.")
}
