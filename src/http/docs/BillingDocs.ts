import { doc, type OperationDoc, PAGE } from "../OperationDoc.js"

// Recurring billing and the sandbox clock (docs/billing.md).


export const BILLING_DOCS: Readonly<Record<string, OperationDoc>> = {
  "billing.list": doc("List billing schedules", "any", PAGE + " The page key is `id`."),
  "billing.create": doc("Create a billing schedule", "apiOrOwnerAdmin", "On an existing virtual account that is open or fully paid (else 409 `account_not_billable`); one Active or Paused schedule per account (409 `schedule_exists`). `interval` `Weekly`, `Monthly`, `Quarterly` or `Yearly` (any case), `amountKobo` integer kobo, `dueOffsetDays` 0 to 365 (default 0), `description`, `reference` (idempotent: the same fields answer the existing schedule, 200; different ones 409 `reference_reused`). Opens the first period at once (starting at today's midnight in Africa/Lagos) and adds its amount to the account's expected amount: the service never pulls funds; the customer pays into the account, and deposits pay the oldest open period first, an overpayment carrying forward. Periods open at each boundary of the Lagos calendar (Monthly keeps its anchor day: Jan 31, Feb 28, Mar 31); a period is `Due` from the start of its due date (start + dueOffsetDays) and `Overdue` from the next Lagos day, unpaid. Events `billing.period.due`, `billing.period.paid`, `billing.period.overdue`, each once."),
  "billing.get": doc("Fetch a billing schedule", "any", "`status` (`Active`, `Paused`, `Cancelled`), `nextPeriodStart`, `nextAmountKobo`."),
  "billing.setNextAmount": doc("Set the next period's amount", "apiOrOwnerAdmin", "The next period to open expects `amountKobo`; the periods after it go back to the schedule's amount. 409 `schedule_cancelled` for a cancelled schedule."),
  "billing.pause": doc("Pause a billing schedule", "apiOrOwnerAdmin", "No new period opens while paused; the periods already open keep their state. Idempotent; 409 `schedule_cancelled`."),
  "billing.resume": doc("Resume a billing schedule", "apiOrOwnerAdmin", "The next period opens at the next boundary from now: the periods that would have started while paused are never opened (no back-fill). Idempotent; 409 `schedule_cancelled`."),
  "billing.cancel": doc("Cancel a billing schedule (permanent)", "apiOrOwnerAdmin", "Unpaid periods become `Cancelled` and what they still expected leaves the account's expected amount; paid periods stay paid. Idempotent."),
  "billing.periods": doc("List a schedule's periods", "any", PAGE + " Most recent first; the page key is `id`. Each: `index` (from 1), `periodStart`, `periodEnd`, `dueDate` (Lagos), `amountKobo` (expected), `paidKobo`, `outstandingKobo`, `status` (`Open`, `Due`, `Paid`, `Overdue`, `Cancelled`), `paidAt`. Computed from what the account has been paid now."),
  "sandbox.clock": doc("The sandbox clock", "any", "Test mode only (a live token gets 403 `live_key_not_allowed`): the tenant's billing time in test mode (`now`) and how far it is ahead of real time (`offsetSeconds`)."),
  "sandbox.advanceClock": doc("Advance the sandbox clock", "apiOrOwnerAdmin", "Test mode only (a live token gets 403 `live_key_not_allowed`): moves this tenant's test-mode billing time forward by `seconds` (1 to a year); the billing clock's next pass opens periods, marks them due and overdue and sends their events as if that time had passed. Live mode always runs on real time.")
}
