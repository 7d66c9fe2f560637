import { Effect, Option } from "effect"
import type { CopilotAnswer } from "../../src/contract/Insights.js"
import { BadRequest } from "../../src/contract/Problems.js"
import type { VirtualAccount } from "../../src/contract/Accounts.js"
import { formatNaira, type ParsedIntent, parseIntent, type Period } from "../../src/domain/CopilotIntents.js"
import { isoDate, lagosDateOf } from "../../src/domain/Billing.js"
import { HIGH_RISK_SCORE } from "../../src/domain/Insights.js"
import type { Scope } from "../../src/domain/Mode.js"
import { Billing } from "../billing/Billing.js"
import { Payouts } from "../transfers/Payouts.js"
import { Transactions } from "../deposits/Transactions.js"
import { toVirtualAccount } from "../accounts/VirtualAccounts.js"
import { VirtualAccounts } from "../accounts/VirtualAccounts.js"
import { CopilotReads, type DepositItem } from "./CopilotReads.js"
import {
  depositLine, depositRefs, type Draft, duringText, EXAMPLES, lagosDateText, lagosTimeText, last30Days, listed, percent, periodFigures, periodText, plural,
  todayPeriod, uniqueRefs
} from "./CopilotText.js"
import { Insights } from "../insights/Insights.js"
import { LanguageModel } from "./LanguageModel.js"

/**
 * The copilot: a question in plain words answered from the read services, for the caller's tenant and mode only, and
 * never a write. The deterministic parser (src/domain/CopilotIntents.ts) picks the intent; each intent's answer names
 * its figures (kobo integers, counts, basis points, dates) and the references it used (at most MAX_REFERENCES). The
 * language-model port may only rephrase that answer. "Now" is the tenant's billing time (the sandbox clock in test mode).
 */

export class Copilot extends Effect.Service<Copilot>()("services/insights/Copilot", {
  effect: Effect.gen(function* () {
    const transactions = yield* Transactions
    const accounts = yield* VirtualAccounts
    const billing = yield* Billing
    const payouts = yield* Payouts
    const insights = yield* Insights
    const reads = yield* CopilotReads
    const model = yield* LanguageModel

    /** An insight figure, or none when the insight service cannot answer now (the answer says so instead of a 500). */
    const insight = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
      effect.pipe(
        Effect.map(Option.some),
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`copilot: insights ${what} unavailable`, cause), Option.none<A>()))
      )

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

    /** Where the account stands now: paid of expected, outstanding or over. */
    const owesText = (a: VirtualAccount) =>
      a.expectedAmountKobo === null
        ? `open account (no expected amount), ${formatNaira(a.amountPaidKobo)} paid`
        : a.overpayment > 0
          ? `overpaid: ${formatNaira(a.amountPaidKobo)} paid of ${formatNaira(a.expectedAmountKobo)} expected, ${formatNaira(a.overpayment)} over`
          : a.deficit > 0
            ? `${formatNaira(a.amountPaidKobo)} paid of ${formatNaira(a.expectedAmountKobo)} expected, ${formatNaira(a.deficit)} outstanding`
            : `fully paid: ${formatNaira(a.amountPaidKobo)} of ${formatNaira(a.expectedAmountKobo)} expected`

    const accountLine = (a: VirtualAccount, last: DepositItem | undefined, schedule: { interval: string; amountKobo: number; status: string } | undefined) => {
      const billed = schedule ? `; billed ${schedule.interval.toLowerCase()} ${formatNaira(schedule.amountKobo)}${schedule.status === "Paused" ? " (paused)" : ""}` : ""
      const lastText = last ? `; last deposit ${formatNaira(last.amountKobo)} on ${lagosDateText(last.reconciledAt.getTime())} (${last.reference})` : "; no deposit yet"
      return `${a.name} (${a.accountRef}): ${owesText(a)}${billed}${lastText}`
    }

    /**
     * "Did X pay this month?": the customer's credited deposits reconciled in the period (not all time), account by
     * account, then where each account stands now.
     */
    const paymentsInPeriod = (scope: Scope, subject: NonNullable<ParsedIntent["subject"]>, found: ReadonlyArray<VirtualAccount>, period: Period) =>
      Effect.gen(function* () {
        const refs = found.map((a) => a.accountRef)
        const paid = yield* reads.paymentsInto(scope, refs, period)
        const of = (a: VirtualAccount) => paid.byAccount.find((p) => p.accountRef === a.accountRef)
        const paidKobo = paid.byAccount.reduce((sum, p) => sum + p.amountKobo, 0)
        const depositCount = paid.byAccount.reduce((sum, p) => sum + p.count, 0)
        const references = uniqueRefs([...refs.map((id) => ({ kind: "accountRef", id })), ...paid.items.map((d) => ({ kind: "transaction", id: d.reference }))])
        const one = found.length === 1 ? found[0]! : undefined
        if (one) {
          const p = of(one)
          const lasts = p ? [] : yield* reads.lastDeposits(scope, refs)
          const lastText = p ? "" : lasts[0] ? `; last deposit ${formatNaira(lasts[0].amountKobo)} on ${lagosDateText(lasts[0].reconciledAt.getTime())}` : "; no deposit yet"
          const lines = paid.items.map((d) => `${formatNaira(d.amountKobo)} on ${lagosDateText(d.reconciledAt.getTime())} (${d.reference})`)
          return {
            answer: p
              ? `${one.name} (${one.accountRef}) paid ${formatNaira(p.amountKobo)} ${duringText(period)}, in ${plural(p.count, "deposit")}: ${lines.slice(0, 5).join("; ")}${p.count > 5 ? `; and ${p.count - 5} more` : ""}. Now: ${owesText(one)}.`
              : `${one.name} (${one.accountRef}) made no payment ${duringText(period)}. Now: ${owesText(one)}${lastText}.`,
            figures: {
              matches: 1, accountRef: one.accountRef, paidKobo: p?.amountKobo ?? 0, depositCount: p?.count ?? 0, ...periodFigures(period),
              paymentState: one.paymentState, expectedKobo: one.expectedAmountKobo, deficitKobo: one.deficit
            },
            references
          } satisfies Draft
        }
        const lines = found.slice(0, 5).map((a) => {
          const p = of(a)
          return p ? `${a.name} (${a.accountRef}) paid ${formatNaira(p.amountKobo)} in ${plural(p.count, "deposit")}` : `${a.name} (${a.accountRef}) made no payment`
        })
        return {
          answer: `${plural(found.length, "account")} match "${subject.value}"; ${duringText(period)}: ${lines.join("; ")}${found.length > 5 ? `; and ${found.length - 5} more` : ""}.` +
            ` ${formatNaira(paidKobo)} in ${plural(depositCount, "deposit")} in all.`,
          figures: { matches: found.length, paidKobo, depositCount, ...periodFigures(period) },
          references
        } satisfies Draft
      })

    const accountStatus = (scope: Scope, subject: NonNullable<ParsedIntent["subject"]>, period: Period | undefined) =>
      Effect.gen(function* () {
        const found: ReadonlyArray<VirtualAccount> = subject.kind === "accountRef"
          ? yield* accounts.get(scope.tenantId, scope.mode, subject.value).pipe(Effect.map((a) => [a]), Effect.catchTag("NotFound", () => Effect.succeed([])))
          : (yield* reads.accountsByName(scope, subject.value)).map(toVirtualAccount)
        if (found.length === 0) {
          const what = subject.kind === "accountRef" ? `account ${subject.value}` : `customer or account named "${subject.value}"`
          return { answer: `I found no ${what} in your ${scope.mode} data.`, figures: { matches: 0 }, references: [] } satisfies Draft
        }
        if (period !== undefined) return yield* paymentsInPeriod(scope, subject, found, period)
        const refs = found.map((a) => a.accountRef)
        const lasts = yield* reads.lastDeposits(scope, refs)
        const schedules = yield* reads.schedules(scope, refs)
        const lines = found.slice(0, 5).map((a) => accountLine(a, lasts.find((d) => d.accountRef === a.accountRef), schedules.find((s) => s.accountRef === a.accountRef)))
        const one = found.length === 1 ? found[0]! : undefined
        const last = one ? lasts[0] : undefined
        return {
          answer: one ? `${lines[0]}.` : `${plural(found.length, "account")} match "${subject.value}": ${lines.join("; ")}${found.length > 5 ? `; and ${found.length - 5} more` : ""}.`,
          figures: one
            ? {
              matches: 1, accountRef: one.accountRef, paymentState: one.paymentState, expectedKobo: one.expectedAmountKobo,
              amountPaidKobo: one.amountPaidKobo, deficitKobo: one.deficit, overpaymentKobo: one.overpayment,
              lastDepositKobo: last?.amountKobo ?? null, lastDepositDate: last ? isoDate(lagosDateOf(last.reconciledAt.getTime())) : null
            }
            : {
              matches: found.length, amountPaidKobo: found.reduce((s, a) => s + a.amountPaidKobo, 0),
              deficitKobo: found.reduce((s, a) => s + a.deficit, 0)
            },
          references: uniqueRefs([...refs.map((id) => ({ kind: "accountRef", id })), ...lasts.map((d) => ({ kind: "transaction", id: d.reference }))])
        } satisfies Draft
      })

    /** "Our balance", "account status" with no customer named: the tenant's own money (GET /balance's figures). */
    const tenantBalance = (scope: Scope) =>
      Effect.gen(function* () {
        const b = yield* payouts.balance(scope)
        return {
          answer: `Your ${scope.mode}-mode balance: ${formatNaira(b.availableKobo)} available to pay out, ${formatNaira(b.heldKobo)} held in escrow,` +
            ` ${formatNaira(b.pendingReviewKobo)} waiting for review, ${formatNaira(b.inTransitKobo)} in transit; today ${formatNaira(b.settledTodayKobo)}` +
            ` settled and ${formatNaira(b.paidOutTodayKobo)} paid out. To see one customer, name them or their account (for example: status of account INV-2041).`,
          figures: {
            availableKobo: b.availableKobo, heldKobo: b.heldKobo, pendingReviewKobo: b.pendingReviewKobo, inTransitKobo: b.inTransitKobo,
            settledTodayKobo: b.settledTodayKobo, paidOutTodayKobo: b.paidOutTodayKobo, day: b.day
          },
          references: []
        } satisfies Draft
      })

    const daysLabel = (label: string) => (label === "60+" ? "over 60" : label === "0-7" ? "1-7" : label)

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

    const transferList = (scope: Scope, period: Period, what: "payout" | "refund") =>
      Effect.gen(function* () {
        const t = yield* reads.transfers(scope, what === "payout" ? ["api", "dashboard"] : ["refund"], period)
        const count = t.byStatus.reduce((s, r) => s + r.count, 0)
        const amountKobo = t.byStatus.reduce((s, r) => s + r.amountKobo, 0)
        const statuses = t.byStatus.map((r) => `${r.status} ${r.count} (${formatNaira(r.amountKobo)})`).join(", ")
        const lines = t.items.map((x) => `${formatNaira(x.amountKobo)} ${x.merchantTxRef} ${x.status}`)
        return {
          answer: `${plural(count, what)} ${periodText(period)}: ${formatNaira(amountKobo)} in all${count > 0 ? `; ${statuses}` : ""}.${listed(lines, count)}`,
          figures: {
            count, amountKobo, ...periodFigures(period),
            ...Object.fromEntries(t.byStatus.flatMap((r) => [[`${r.status.toLowerCase()}Count`, r.count], [`${r.status.toLowerCase()}Kobo`, r.amountKobo]]))
          },
          references: uniqueRefs(t.items.flatMap((x) => [{ kind: "transfer", id: x.merchantTxRef }, ...(x.depositReference ? [{ kind: "transaction", id: x.depositReference }] : [])]))
        } satisfies Draft
      })

    const settlementList = (scope: Scope, period: Period) =>
      Effect.gen(function* () {
        const s = yield* reads.settlements(scope, period)
        const count = s.byStatus.reduce((n, r) => n + r.count, 0)
        const netKobo = s.byStatus.filter((r) => r.status !== "Skipped").reduce((n, r) => n + r.netKobo, 0)
        const statuses = s.byStatus.map((r) => `${r.status} ${r.count}`).join(", ")
        const lines = s.items.map((x) => `${formatNaira(x.netKobo)} for ${x.accountRef} (${x.id}, ${x.status})`)
        return {
          answer: `${plural(count, "settlement")} ${periodText(period)}: ${formatNaira(netKobo)} settled in all${count > 0 ? `; ${statuses}` : ""}.${listed(lines, count)}`,
          figures: {
            count, netKobo, ...periodFigures(period),
            ...Object.fromEntries(s.byStatus.map((r) => [`${r.status.toLowerCase()}Count`, r.count]))
          },
          references: uniqueRefs(s.items.flatMap((x) => [{ kind: "settlement", id: x.id }, { kind: "accountRef", id: x.accountRef }]))
        } satisfies Draft
      })

    const unavailable = (what: string): Draft =>
      ({ answer: `I cannot work out ${what} right now; please try again shortly.`, figures: {}, references: [] })

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

    const unknown = (): Draft => ({
      answer: `I did not understand that question. I can answer questions like: ${EXAMPLES.map((e) => `"${e}"`).join(", ")}.`,
      figures: {},
      references: []
    })

    const draftFor = (scope: Scope, p: ParsedIntent, nowMs: number): Effect.Effect<Draft> => {
      switch (p.intent) {
        case "collections_summary": return collections(scope, p.period ?? todayPeriod(nowMs))
        case "account_status": return p.subject ? accountStatus(scope, p.subject, p.period) : tenantBalance(scope)
        case "overdue": return overdue(scope)
        case "underpaid_deposits": return depositList(scope, p.period ?? last30Days(nowMs), "Underpaid")
        case "overpaid_deposits": return depositList(scope, p.period ?? last30Days(nowMs), "Overpaid")
        case "review_queue": return reviewQueue(scope, p.period)
        case "high_risk_deposits": return highRisk(scope, p.period ?? last30Days(nowMs))
        case "deposit_lookup": return depositLookup(scope, p.reference)
        case "payouts": return transferList(scope, p.period ?? last30Days(nowMs), "payout")
        case "refunds": return transferList(scope, p.period ?? last30Days(nowMs), "refund")
        case "settlements": return settlementList(scope, p.period ?? last30Days(nowMs))
        case "collection_rate": return collectionRate(scope, p.period)
        case "forecast": return forecast(scope, p.days ?? 30)
        case "top_debtors": return topDebtors(scope, p.take ?? 5)
        case "unknown": return Effect.succeed(unknown())
      }
    }

    const ask = Effect.fn("Copilot.ask")(function* (scope: Scope, prompt: string) {
      if (prompt.trim() === "") {
        return yield* new BadRequest({ code: "empty_prompt", message: "prompt must say something: ask a question such as \"How much did we collect today?\"" })
      }
      const nowMs = yield* billing.nowFor(scope)
      const parsed = parseIntent(prompt, nowMs)
      const draft = yield* draftFor(scope, parsed, nowMs)
      const rephrased = yield* model.rephrase({ answer: draft.answer, figures: draft.figures })
      return {
        answer: Option.getOrElse(rephrased, () => draft.answer),
        intent: parsed.intent,
        figures: draft.figures,
        references: draft.references,
        rephrased: Option.isSome(rephrased)
      } satisfies CopilotAnswer
    })

    return { ask } as const
  })
}) {}
