import { doc, type OperationDoc } from "../../src/contract/OperationDoc.js"

// Insights (docs/insights.md). Each description says how to check the figure by hand; the definitions are
// src/domain/Insights.ts and src/domain/InsightRollups.ts.

const TODAY = "\"Today\" is the Lagos calendar date of the tenant's billing time (real time in live mode; the sandbox clock in test mode). " +
  "Figures come from roll-ups a background consumer keeps: a deposit shows here a moment after it is reconciled."
const RECEIVABLES = "A receivable is what an account is expected to pay: an account with `expectedAmountKobo` has one for what it expects apart " +
  "from billing (due on its `expiryDateUtc`, else the day it was created) and one per billing period (due on the period's `dueDate`); " +
  "an open account has none. What the account has been paid covers them oldest first, as billing counts it; paying more than expected " +
  "is an overpayment and collects nothing more."

export const INSIGHTS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "insights.overview": doc("Collections overview", "dashboard",
    `${RECEIVABLES} \`expectedKobo\` is the sum of the receivables (of those due from \`from\` to \`to\` when given), \`collectedKobo\` what ` +
      "of them is paid, `outstandingDeficitKobo` = expected - collected, and `collectionRateBps` = floor(collected x 10000 / expected) " +
      "(10000 = 100%; 0 when nothing is expected). `reconciliation` counts every deposit by its classification (`Exact`, `Underpaid`, " +
      "`Overpaid`, `Duplicate`, `Reversal`, `Credited`, `Unmatched`) with the sum of their `amountKobo`; `risk.bands` counts deposits by " +
      "risk score (low below 30, medium 30 to 59, high 60 and above), `risk.highRisk` is the high band, `risk.pendingReview` the " +
      "deposits waiting in the review queue now; these use the deposit's `paidAt` date in Lagos when `from`/`to` are given. " +
      "`from` and `to` are Lagos dates `YYYY-MM-DD`, both included, either may be left out (400 `invalid_date_range` for a date that is " +
      `no calendar date, \`from\` after \`to\`, or a range over 3,660 days). A tenant not yet approved sees zeros in live mode. ${TODAY}`),
  "insights.aging": doc("Receivables aging", "dashboard",
    `${RECEIVABLES} Each receivable with something outstanding goes in one bucket by the whole Lagos days from its due date to today: ` +
      "`0-7` (0 to 7, including receivables not yet due), `8-30`, `31-60`, `60+` (61 and more). `count` is how many, `amountKobo` the " +
      `sum of what is outstanding; the buckets add up to \`totalOutstandingKobo\`, the overview's outstanding deficit. ${TODAY}`),
  "insights.forecast": doc("Collections forecast", "dashboard",
    "Over the next `days` Lagos days (7 to 180, default 30; 400 outside), today included, one row per Monday-to-Sunday week that overlaps " +
      "them (the first row's `weekStart` is the Monday on or before today). `scheduledKobo`: billing amounts of active schedules (and " +
      "periods already open) falling due on that week's days inside the horizon. `runRatePerDayKobo` = floor(`trailing30DayCollectedKobo` " +
      "/ 30), where the trailing 30 days are today and the 29 days before it and what was collected is deposits credited to accounts " +
      "(held deposits once approved, reversals taken back, unmatched ones not). `projectedKobo` = scheduledKobo + runRatePerDayKobo x the " +
      `number of that week's days inside the horizon. ${TODAY}`),
  "insights.customers": doc("Customer scores", "dashboard",
    "Customers with at least one receivable, most outstanding first (then by customer), `take` per page (default 50, at most 500; " +
      "`hasMore` says whether more follow). `accountRefs` are the customer's accounts (one customer per e-mail address). `score` 0 to 100 " +
      "is the sum of: on time, round(60 x the share of counted receivables paid by their due date) (30 with none counted; a receivable " +
      "counts once it is paid or its due date has passed); lateness, 25 minus one point per whole day of average lateness (paid: days " +
      "from due date to the Lagos day it was fully paid; unpaid and past due: days to today); outstanding, 15 - floor(15 x outstanding / " +
      `expected). \`band\`: Excellent 80+, Good 60 to 79, Fair 40 to 59, Poor below 40. ${TODAY}`)
}
