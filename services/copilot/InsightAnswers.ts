import { Effect, Option } from "effect"
import { formatNaira, type Period } from "../../src/domain/CopilotIntents.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { Insights } from "../insights/Insights.js"
import type { CopilotReads } from "./CopilotReads.js"
import { type Draft, lagosDateText, percent, periodFigures, periodText, plural, uniqueRefs } from "./CopilotText.js"

// The copilot's answers from the insight figures: what is overdue, the collection rate, the forecast, the top debtors.

/** An insight figure, or none when the insight service cannot answer now (the answer says so instead of a 500). */
export const insight = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
  effect.pipe(
    Effect.map(Option.some),
    Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`copilot: insights ${what} unavailable`, cause), Option.none<A>()))
  )

export const unavailable = (what: string): Draft =>
  ({ answer: `I cannot work out ${what} right now; please try again shortly.`, figures: {}, references: [] })

const daysLabel = (label: string) => (label === "60+" ? "over 60" : label === "0-7" ? "1-7" : label)

/** Answers built on the Insights service (and, for the accounts most overdue, CopilotReads). */
export const makeInsightAnswers = (insights: Insights, reads: CopilotReads) => {
  /**
   * What is overdue: only what is past its due date (src/domain/Insights.ts, "Overdue"), by days past due, and the
   * accounts most overdue; what is owed but not yet due is said apart, never counted as overdue.
   */
  const overdue = (scope: Scope) =>
    Effect.gen(function* () {
      const split = yield* insight("overdue", insights.overdue(scope))
      if (Option.isNone(split)) return unavailable("what is overdue")
      const o = split.value
      const owing = yield* reads.accountsOwing(scope, o.today)
      const late = owing.items.filter((d) => d.overdueKobo > 0)
      const notYet = owing.items.filter((d) => d.overdueKobo === 0 && d.notYetDueKobo > 0)
      const outstandingKobo = o.overdue.amountKobo + o.notYetDue.amountKobo
      const lateText = late.slice(0, 5).map((d) => `${d.name} (${d.accountRef}) ${formatNaira(d.overdueKobo)}, ${plural(o.today - d.oldestDueDay!, "day")} past due`).join("; ")
      const notYetText = notYet.slice(0, 5).map((d) => `${d.name} (${d.accountRef}) ${formatNaira(d.notYetDueKobo)}`).join("; ")
      const answer = outstandingKobo === 0
        ? "Nothing is overdue or outstanding: every account with an expected amount is paid up."
        : o.overdue.amountKobo === 0
          ? `Nothing is overdue: no amount owed is past its due date. ${formatNaira(o.notYetDue.amountKobo)} is owed but not yet due, across ${plural(owing.accountsNotYetDue, "account")}${notYetText ? `: ${notYetText}` : ""}.`
          : `${formatNaira(o.overdue.amountKobo)} is overdue (past its due date) across ${plural(owing.accountsOverdue, "account")}.` +
            ` By days past due: ${o.buckets.map((b) => `${daysLabel(b.label)} days ${formatNaira(b.amountKobo)} (${b.count})`).join(", ")}.` +
            `${lateText ? ` Most overdue: ${lateText}.` : ""}` +
            (o.notYetDue.amountKobo > 0
              ? ` Not yet due, so not counted: ${formatNaira(o.notYetDue.amountKobo)} more across ${plural(owing.accountsNotYetDue, "account")}.`
              : " Nothing else is owed.")
      return {
        answer,
        figures: {
          overdueKobo: o.overdue.amountKobo, overdueCount: o.overdue.count, accountsOverdue: owing.accountsOverdue,
          ...Object.fromEntries(o.buckets.flatMap((b) => {
            const key = b.label === "60+" ? "over60" : `days${daysLabel(b.label).replace("-", "to")}`
            return [[`${key}Kobo`, b.amountKobo], [`${key}Count`, b.count]]
          })),
          notYetDueKobo: o.notYetDue.amountKobo, notYetDueCount: o.notYetDue.count, accountsNotYetDue: owing.accountsNotYetDue,
          outstandingKobo
        },
        references: (o.overdue.amountKobo > 0 ? late : notYet).map((d) => ({ kind: "accountRef", id: d.accountRef }))
      } satisfies Draft
    })

  const collectionRate = (scope: Scope, period: Period | undefined) =>
    Effect.gen(function* () {
      const range = period ? periodFigures(period) : {}
      const o = yield* insight("overview", insights.overview(scope, range))
      if (Option.isNone(o)) return unavailable("the collection rate")
      const v = o.value
      return {
        answer: `Collection rate ${period ? periodText(period) : "so far"}: ${percent(v.collectionRateBps)} (${formatNaira(v.collectedKobo)} collected of ${formatNaira(v.expectedKobo)} expected).`,
        figures: { collectionRateBps: v.collectionRateBps, collectedKobo: v.collectedKobo, expectedKobo: v.expectedKobo, ...range },
        references: []
      } satisfies Draft
    })

  const forecast = (scope: Scope, days: number) =>
    Effect.gen(function* () {
      const f = yield* insight("forecast", insights.forecast(scope, days))
      if (Option.isNone(f)) return unavailable("the forecast")
      const v = f.value
      const projected = v.weeks.reduce((s, w) => s + w.projectedKobo, 0)
      const scheduled = v.weeks.reduce((s, w) => s + w.scheduledKobo, 0)
      const weeks = v.weeks.slice(0, 6).map((w) => `week of ${lagosDateText(Date.parse(`${w.weekStart}T00:00:00+01:00`))} ${formatNaira(w.projectedKobo)}`).join("; ")
      return {
        answer: `Forecast for the next ${v.days} days: ${formatNaira(projected)} expected in all, ${formatNaira(scheduled)} of it billing falling due` +
          ` and the rest at ${formatNaira(v.runRatePerDayKobo)} a day (the last 30 days' run-rate). By week: ${weeks}${v.weeks.length > 6 ? "; ..." : ""}.`,
        figures: { days: v.days, projectedKobo: projected, scheduledKobo: scheduled, runRatePerDayKobo: v.runRatePerDayKobo, trailing30DayCollectedKobo: v.trailing30DayCollectedKobo },
        references: []
      } satisfies Draft
    })

  const topDebtors = (scope: Scope, take: number) =>
    Effect.gen(function* () {
      const c = yield* insight("customers", insights.customers(scope, take))
      if (Option.isNone(c)) return unavailable("the top debtors")
      const debtors = c.value.data.filter((d) => d.outstandingKobo > 0).slice(0, take)
      const total = debtors.reduce((s, d) => s + d.outstandingKobo, 0)
      const lines = debtors.map((d, i) => `${i + 1}. ${d.customerName} (${d.accountRefs.join(", ")}) ${formatNaira(d.outstandingKobo)}, score ${d.score} ${d.band}`)
      return {
        answer: debtors.length === 0 ? "No customer owes anything right now." : `Top ${plural(debtors.length, "debtor")}, ${formatNaira(total)} outstanding in all: ${lines.join("; ")}.`,
        figures: { count: debtors.length, outstandingKobo: total, ...(debtors[0] ? { topOutstandingKobo: debtors[0].outstandingKobo } : {}) },
        references: uniqueRefs(debtors.flatMap((d) => d.accountRefs.map((id) => ({ kind: "accountRef", id }))))
      } satisfies Draft
    })

  return { overdue, collectionRate, forecast, topDebtors } as const
}
