import type { OperationExamples } from "../../src/contract/OperationExample.js"

/** Insights: what the OpenAPI document shows as each operation's request and responses (src/contract/OperationExample.ts). */
export const INSIGHTS_EXAMPLES: OperationExamples = {
  "insights.overview": { responses: { 200: {"collectionRateBps":9500,"expectedKobo":2500000,"collectedKobo":2500000,"outstandingDeficitKobo":2500000,"reconciliation":{"Exact":{"count":3,"amountKobo":2500000},"Underpaid":{"count":3,"amountKobo":2500000},"Overpaid":{"count":3,"amountKobo":2500000},"Duplicate":{"count":3,"amountKobo":2500000},"Reversal":{"count":3,"amountKobo":2500000},"Credited":{"count":3,"amountKobo":2500000},"Unmatched":{"count":3,"amountKobo":2500000}},"risk":{"pendingReview":1,"highRisk":1,"bands":{"low":1,"medium":1,"high":1}},"from":"2026-11-21","to":"2026-11-21","asOf":"2026-11-21T10:15:00.000Z","mode":"test"} } },
  "insights.aging": { responses: { 200: {"buckets":[{"label":"0-7","count":3,"amountKobo":2500000}],"totalOutstandingKobo":2500000,"asOf":"2026-11-21T10:15:00.000Z","mode":"test"} } },
  "insights.forecast": { responses: { 200: {"days":30,"runRatePerDayKobo":2500000,"trailing30DayCollectedKobo":2500000,"weeks":[{"weekStart":"2026-11-21","scheduledKobo":2500000,"projectedKobo":2500000}],"asOf":"2026-11-21T10:15:00.000Z","mode":"test"} } },
  "insights.customers": { responses: { 200: {"data":[{"customerName":"Chioma Okafor","email":"chioma.okafor@example.ng","accountRefs":["cust-0042","cust-0043"],"expectedKobo":2500000,"outstandingKobo":2500000,"score":92,"band":"Excellent"}],"hasMore":false} } },
}
