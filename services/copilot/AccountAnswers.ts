import { Effect } from "effect"
import type { VirtualAccount } from "../../src/contract/Accounts.js"
import { formatNaira, type ParsedIntent, type Period } from "../../src/domain/CopilotIntents.js"
import { isoDate, lagosDateOf } from "../../src/domain/Billing.js"
import type { Scope } from "../../src/domain/Mode.js"
import { toVirtualAccount, type VirtualAccounts } from "../accounts/VirtualAccounts.js"
import type { Payouts } from "../transfers/Payouts.js"
import type { CopilotReads, DepositItem } from "./CopilotReads.js"
import { type Draft, duringText, lagosDateText, periodFigures, plural, uniqueRefs } from "./CopilotText.js"

// The copilot's answers about accounts: where a customer's accounts stand (and what they paid in a period), and the
// tenant's own balance.

/** Answers built on VirtualAccounts, CopilotReads and Payouts. */
export const makeAccountAnswers = (accounts: VirtualAccounts, reads: CopilotReads, payouts: Payouts) => {
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

  return { accountStatus, tenantBalance } as const
}
