import { Timestamp, CalendarDate } from "./Schemas.js"
import { Schema } from "effect"
import { AGING_BUCKETS, CUSTOMER_BANDS } from "../domain/Insights.js"

// Insights and the copilot on the wire (DESIGN.md "Wire shapes for billing, checkout, insights and the copilot").
// The figures' definitions are src/domain/Insights.ts; the OpenAPI descriptions (services/insights/InsightsDocs.ts) say
// how to check each by hand.

const Kobo = Schema.Int
export const RECONCILIATION_STATUSES = ["Exact", "Underpaid", "Overpaid", "Duplicate", "Reversal", "Credited", "Unmatched"] as const

const CountAndKobo = Schema.Struct({ count: Schema.Int, amountKobo: Kobo })

export const InsightsOverview = Schema.Struct({
  /** floor(collected x 10000 / expected), at most 10000; 0 when nothing is expected. */
  collectionRateBps: Schema.Int,
  expectedKobo: Kobo,
  collectedKobo: Kobo,
  outstandingDeficitKobo: Kobo,
  reconciliation: Schema.Struct(
    Object.fromEntries(RECONCILIATION_STATUSES.map((s) => [s, CountAndKobo])) as {
      readonly [K in (typeof RECONCILIATION_STATUSES)[number]]: typeof CountAndKobo
    }
  ),
  risk: Schema.Struct({
    pendingReview: Schema.Int,
    highRisk: Schema.Int,
    bands: Schema.Struct({ low: Schema.Int, medium: Schema.Int, high: Schema.Int })
  }),
  /** The Lagos dates the figures cover (inclusive), null when unbounded. */
  from: Schema.NullOr(CalendarDate),
  to: Schema.NullOr(CalendarDate),
  asOf: Timestamp,
  mode: Schema.Literal("test", "live")
}).annotations({ identifier: "InsightsOverview" })
export type InsightsOverview = typeof InsightsOverview.Type

export const AgingBucket = Schema.Struct({ label: Schema.Literal(...AGING_BUCKETS), count: Schema.Int, amountKobo: Kobo })
export const InsightsAging = Schema.Struct({
  buckets: Schema.Array(AgingBucket),
  totalOutstandingKobo: Kobo,
  asOf: Timestamp,
  mode: Schema.Literal("test", "live")
}).annotations({ identifier: "InsightsAging" })
export type InsightsAging = typeof InsightsAging.Type

export const ForecastWeek = Schema.Struct({ weekStart: CalendarDate, scheduledKobo: Kobo, projectedKobo: Kobo })
export const InsightsForecast = Schema.Struct({
  days: Schema.Int,
  runRatePerDayKobo: Kobo,
  trailing30DayCollectedKobo: Kobo,
  weeks: Schema.Array(ForecastWeek),
  asOf: Timestamp,
  mode: Schema.Literal("test", "live")
}).annotations({ identifier: "InsightsForecast" })
export type InsightsForecast = typeof InsightsForecast.Type

export const CustomerInsight = Schema.Struct({
  customerName: Schema.String,
  email: Schema.NullOr(Schema.String),
  accountRefs: Schema.Array(Schema.String),
  expectedKobo: Kobo,
  outstandingKobo: Kobo,
  score: Schema.Int,
  band: Schema.Literal(...CUSTOMER_BANDS)
}).annotations({ identifier: "CustomerInsight" })
export type CustomerInsight = typeof CustomerInsight.Type
export const InsightsCustomers = Schema.Struct({ data: Schema.Array(CustomerInsight), hasMore: Schema.Boolean })
  .annotations({ identifier: "InsightsCustomers" })
export type InsightsCustomers = typeof InsightsCustomers.Type


/** The problem codes collections insights answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const INSIGHTS_PROBLEMS = {
  invalid_date_range: 400
} as const satisfies Record<string, number>
