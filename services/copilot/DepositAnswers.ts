import { Effect, Option } from "effect"
import { formatNaira, type Period } from "../../src/domain/CopilotIntents.js"
import { isoDate, lagosDateOf } from "../../src/domain/Billing.js"
import { HIGH_RISK_SCORE } from "../../src/domain/Insights.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { Transactions } from "../deposits/Transactions.js"
import type { Insights } from "../insights/Insights.js"
import type { CopilotReads } from "./CopilotReads.js"
import {
  depositLine, depositRefs, type Draft, lagosDateText, lagosTimeText, listed, periodFigures, periodText, plural, uniqueRefs
} from "./CopilotText.js"
import { insight } from "./InsightAnswers.js"

// The copilot's answers about deposits: collections, under- and overpaid deposits, the review queue, high risk, one deposit.

/** Answers built on Transactions and CopilotReads (collections add the insights overview when it can answer). */
export const makeDepositAnswers = (transactions: Transactions, reads: CopilotReads, insights: Insights) => {
  const collections = (scope: Scope, period: Period) =>
    Effect.gen(function* () {
      const s = yield* transactions.summary(scope.tenantId, scope.mode, { from: new Date(period.fromMs), to: new Date(period.toMs) })
      const latest = yield* reads.deposits(scope, { ...period, status: "Completed" })
      const overview = yield* insight("overview", insights.overview(scope, {}))
      const review = s.pendingReview.count > 0
        ? ` ${formatNaira(s.pendingReview.amountKobo)} more in ${plural(s.pendingReview.count, "deposit")} waits for review.` : ""
      const owed = Option.match(overview, {
        onNone: () => "",
        onSome: (o) => ` Across all accounts, ${formatNaira(o.expectedKobo)} is expected and ${formatNaira(o.outstandingDeficitKobo)} is still outstanding.`
      })
      return {
        answer: `Collections ${periodText(period)}: ${formatNaira(s.successful.amountKobo)} from ${plural(s.successful.count, "deposit")}.${review}${owed}`,
        figures: {
          collectedKobo: s.successful.amountKobo, depositCount: s.successful.count, pendingReviewKobo: s.pendingReview.amountKobo,
          pendingReviewCount: s.pendingReview.count, ...periodFigures(period),
          ...Option.match(overview, { onNone: () => ({}), onSome: (o) => ({ expectedKobo: o.expectedKobo, outstandingKobo: o.outstandingDeficitKobo }) })
        },
        references: depositRefs(latest.items)
      } satisfies Draft
    })

  const depositList = (scope: Scope, period: Period, kind: "Underpaid" | "Overpaid") =>
    Effect.gen(function* () {
      const d = yield* reads.deposits(scope, { ...period, reconciliation: kind, keptOnly: true })
      const surplus = kind === "Overpaid" && d.count > 0 ? `, ${formatNaira(d.surplusKobo)} over what was expected` : ""
      return {
        answer: `${plural(d.count, `${kind.toLowerCase()} deposit`)} ${periodText(period)}: ${formatNaira(d.amountKobo)} in all${surplus}.${listed(d.items.map(depositLine), d.count)}`,
        figures: { count: d.count, amountKobo: d.amountKobo, ...(kind === "Overpaid" ? { surplusKobo: d.surplusKobo } : {}), ...periodFigures(period) },
        references: uniqueRefs(depositRefs(d.items))
      } satisfies Draft
    })

  const reviewQueue = (scope: Scope, period: Period | undefined) =>
    Effect.gen(function* () {
      const d = yield* reads.deposits(scope, { ...period, status: "PendingReview" })
      const when = period ? ` ${periodText(period)}` : ""
      return {
        answer: d.count === 0
          ? `The review queue is empty${when}.`
          : `${plural(d.count, "deposit")} ${d.count === 1 ? "waits" : "wait"} for review${when}: ${formatNaira(d.amountKobo)} in all.${listed(d.items.map(depositLine), d.count)}`,
        figures: { count: d.count, amountKobo: d.amountKobo, ...(period ? periodFigures(period) : {}) },
        references: uniqueRefs(depositRefs(d.items))
      } satisfies Draft
    })

  const highRisk = (scope: Scope, period: Period) =>
    Effect.gen(function* () {
      const d = yield* reads.deposits(scope, { ...period, minRiskScore: HIGH_RISK_SCORE })
      const lines = d.items.map((x) => `${depositLine(x)} risk ${x.riskScore}`)
      return {
        answer: `${plural(d.count, "high-risk deposit")} (risk score ${HIGH_RISK_SCORE} or more) ${periodText(period)}: ${formatNaira(d.amountKobo)} in all.${listed(lines, d.count)}`,
        figures: { count: d.count, amountKobo: d.amountKobo, minRiskScore: HIGH_RISK_SCORE, highestRiskScore: d.items.reduce((m, x) => Math.max(m, x.riskScore), 0), ...periodFigures(period) },
        references: uniqueRefs(depositRefs(d.items))
      } satisfies Draft
    })

  const depositLookup = (scope: Scope, reference: string | undefined) =>
    Effect.gen(function* () {
      if (reference === undefined) {
        return { answer: "Which deposit? Give its reference, for example: find deposit 999999261121100000123456.", figures: {}, references: [] } satisfies Draft
      }
      const t = yield* transactions.get(scope.tenantId, scope.mode, reference).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeedNone))
      if (Option.isNone(t)) {
        return { answer: `I found no deposit with reference ${reference} in your ${scope.mode} data.`, figures: { matches: 0 }, references: [] } satisfies Draft
      }
      const x = t.value
      const paidMs = Date.parse(x.paidAt)
      return {
        answer: `Deposit ${x.reference}: ${formatNaira(x.amountKobo)} ${x.accountRef ? `into account ${x.accountRef}` : "into no known account"}` +
          ` from ${x.senderName ?? "an unnamed payer"} on ${lagosDateText(paidMs)} at ${lagosTimeText(paidMs)}; status ${x.status},` +
          ` reconciled ${x.reconciliationStatus}, risk score ${x.riskScore}.`,
        figures: {
          matches: 1, amountKobo: x.amountKobo, status: x.status, reconciliationStatus: x.reconciliationStatus, riskScore: x.riskScore,
          paidDate: isoDate(lagosDateOf(paidMs)), paidTime: lagosTimeText(paidMs)
        },
        references: [{ kind: "transaction", id: x.reference }, ...(x.accountRef ? [{ kind: "accountRef", id: x.accountRef }] : [])]
      } satisfies Draft
    })

  return { collections, depositList, reviewQueue, highRisk, depositLookup } as const
}
