import { Effect } from "effect"
import {
  type InsightsAging, type InsightsCustomers, type InsightsForecast, type InsightsOverview, RECONCILIATION_STATUSES
} from "../../src/contract/Insights.js"
import { BadRequest } from "../../src/contract/Problems.js"
import { dayIso, dayOf, dayOfIso, dayStartMs, scoreInputOf } from "../../src/domain/InsightRollups.js"
import {
  AGING_BUCKETS, agingBucketOf, bandOf, collectionRateBps, customerScore, forecastWeeks, isOverdue, type OverdueSplit, RISK_BANDS,
  RUN_RATE_WINDOW_DAYS
} from "../../src/domain/Insights.js"
import type { Scope } from "../../src/domain/Mode.js"
import { Billing } from "../billing/Billing.js"
import { makeInsightStore } from "./InsightStore.js"

/** An optional Lagos date range (`YYYY-MM-DD`, both ends included) for the overview. */
export interface OverviewRange {
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/** The widest overview range: ten years of Lagos days. */
const MAX_RANGE_DAYS = 3_660

const badRange = (message: string) => new BadRequest({ code: "invalid_date_range", message })

/**
 * The insight read service: every figure for the caller's tenant and mode, read from the roll-ups the insights consumer
 * keeps (services/insights/Rollups.ts): a few rows per Lagos day, never a scan of every transaction or account.
 * "Today" is the tenant's billing time (the sandbox clock in test mode), so insights agree with billing.
 */
export class Insights extends Effect.Service<Insights>()("services/insights/Insights", {
  effect: Effect.gen(function* () {
    const store = yield* makeInsightStore
    const billing = yield* Billing

    const overview = Effect.fn("Insights.overview")(function* (scope: Scope, range: OverviewRange) {
      const from = range.from === undefined ? undefined : dayOfIso(range.from)
      const to = range.to === undefined ? undefined : dayOfIso(range.to)
      if (range.from !== undefined && from === undefined) return yield* badRange(`from must be a calendar date YYYY-MM-DD, got ${JSON.stringify(range.from)}.`)
      if (range.to !== undefined && to === undefined) return yield* badRange(`to must be a calendar date YYYY-MM-DD, got ${JSON.stringify(range.to)}.`)
      if (from !== undefined && to !== undefined && from > to) return yield* badRange(`from (${range.from}) is after to (${range.to}).`)
      if (from !== undefined && to !== undefined && to - from >= MAX_RANGE_DAYS) return yield* badRange(`A range is at most ${MAX_RANGE_DAYS} days; leave from and to out for all time.`)
      const lo = from ?? -1_000_000
      const hi = to ?? 1_000_000
      const nowMs = yield* billing.nowFor(scope)
      const [days, dues] = yield* Effect.all([store.dayTotals(scope, lo, hi), store.dueTotals(scope, lo, hi)], { concurrency: 1 }).pipe(Effect.orDie)
      const of = (key: string) => days.find((d) => d.key === key)
      const expectedKobo = Number(dues[0]?.expected ?? 0)
      const collectedKobo = Number(dues[0]?.collected ?? 0)
      const bands = Object.fromEntries(RISK_BANDS.map((b) => [b, Number(of(`risk:${b}`)?.count ?? 0)])) as Record<(typeof RISK_BANDS)[number], number>
      const result: InsightsOverview = {
        collectionRateBps: collectionRateBps(collectedKobo, expectedKobo),
        expectedKobo,
        collectedKobo,
        outstandingDeficitKobo: expectedKobo - collectedKobo,
        reconciliation: Object.fromEntries(RECONCILIATION_STATUSES.map((s) => [s, {
          count: Number(of(`rs:${s}`)?.count ?? 0), amountKobo: Number(of(`rs:${s}`)?.amountKobo ?? 0)
        }])) as InsightsOverview["reconciliation"],
        risk: { pendingReview: Number(of("pending")?.count ?? 0), highRisk: bands.high, bands },
        from: from === undefined ? null : dayIso(from),
        to: to === undefined ? null : dayIso(to),
        asOf: new Date(nowMs).toISOString(),
        mode: scope.mode
      }
      return result
    })

    const aging = Effect.fn("Insights.aging")(function* (scope: Scope) {
      const nowMs = yield* billing.nowFor(scope)
      const today = dayOf(nowMs)
      const rows = yield* store.outstandingDueDays(scope).pipe(Effect.orDie)
      const count = [0, 0, 0, 0]
      const amount = [0, 0, 0, 0]
      for (const r of rows) {
        const i = AGING_BUCKETS.indexOf(agingBucketOf(Math.max(0, today - r.dueDay)))
        count[i]! += Number(r.count)
        amount[i]! += Number(r.outstanding)
      }
      const result: InsightsAging = {
        buckets: AGING_BUCKETS.map((label, i) => ({ label, count: count[i]!, amountKobo: amount[i]! })),
        totalOutstandingKobo: amount.reduce((a, b) => a + b, 0),
        asOf: new Date(nowMs).toISOString(),
        mode: scope.mode
      }
      return result
    })

    /**
     * What is overdue (past its due date, by days past due) and what is owed but not yet due, from the same roll-up rows
     * as the aging buckets (src/domain/Insights.ts, "Overdue"). `today` is the Lagos day number it was read on.
     */
    const overdue = Effect.fn("Insights.overdue")(function* (scope: Scope) {
      const nowMs = yield* billing.nowFor(scope)
      const today = dayOf(nowMs)
      const rows = yield* store.outstandingDueDays(scope).pipe(Effect.orDie)
      const count = [0, 0, 0, 0]
      const amount = [0, 0, 0, 0]
      const notYetDue = { count: 0, amountKobo: 0 }
      for (const r of rows) {
        const days = Math.max(0, today - r.dueDay)
        if (!isOverdue(days)) {
          notYetDue.count += Number(r.count)
          notYetDue.amountKobo += Number(r.outstanding)
          continue
        }
        const i = AGING_BUCKETS.indexOf(agingBucketOf(days))
        count[i]! += Number(r.count)
        amount[i]! += Number(r.outstanding)
      }
      const result: OverdueSplit & { readonly today: number; readonly asOf: string } = {
        overdue: { count: count.reduce((a, b) => a + b, 0), amountKobo: amount.reduce((a, b) => a + b, 0) },
        buckets: AGING_BUCKETS.map((label, i) => ({ label, count: count[i]!, amountKobo: amount[i]! })),
        notYetDue,
        today,
        asOf: new Date(nowMs).toISOString()
      }
      return result
    })

    const forecast = Effect.fn("Insights.forecast")(function* (scope: Scope, days: number) {
      const nowMs = yield* billing.nowFor(scope)
      const today = dayOf(nowMs)
      const [scheduled, trailing] = yield* Effect.all([store.scheduledDays(scope, today, days), store.trailingCollected(scope, today)], { concurrency: 1 }).pipe(Effect.orDie)
      const trailing30DayCollectedKobo = Math.max(0, Number(trailing[0]?.amount ?? 0))
      const weeks = forecastWeeks(days, nowMs, scheduled.map((s) => ({ dueMs: dayStartMs(s.day), amountKobo: Number(s.amountKobo) })), trailing30DayCollectedKobo)
      const result: InsightsForecast = {
        days,
        runRatePerDayKobo: Math.floor(trailing30DayCollectedKobo / RUN_RATE_WINDOW_DAYS),
        trailing30DayCollectedKobo,
        weeks,
        asOf: new Date(nowMs).toISOString(),
        mode: scope.mode
      }
      return result
    })

    const customers = Effect.fn("Insights.customers")(function* (scope: Scope, take: number) {
      const today = dayOf(yield* billing.nowFor(scope))
      const page = yield* store.customerPage(scope, take).pipe(Effect.orDie)
      const shown = page.slice(0, take)
      const ids = shown.map((c) => c.customerId)
      const [refs, receivables] = ids.length === 0 ? [[], []] : yield* Effect.all([store.accountRefsOf(ids), store.receivablesOf(ids)], { concurrency: 1 }).pipe(Effect.orDie)
      const result: InsightsCustomers = {
        data: shown.map((c) => {
          const input = scoreInputOf(receivables.filter((r) => r.customerId === c.customerId).map((r) => ({
            dueDay: r.dueDay, amountKobo: Number(r.amountKobo), collectedKobo: Number(r.collectedKobo), paidDay: r.paidDay
          })), today)
          const score = customerScore(input)
          return {
            customerName: c.name,
            email: c.email,
            accountRefs: refs.filter((r) => r.customerId === c.customerId).map((r) => r.accountRef),
            expectedKobo: Number(c.expectedKobo),
            outstandingKobo: Number(c.outstandingKobo),
            score,
            band: bandOf(score)
          }
        }),
        hasMore: page.length > take
      }
      return result
    })

    return { overview, aging, overdue, forecast, customers } as const
  })
}) {}
