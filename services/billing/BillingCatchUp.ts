import type { Clock } from "effect"
import { Effect } from "effect"
import { Forbidden } from "../../src/contract/Problems.js"
import { periodCalendar, type PeriodState, type PeriodStatus } from "../../src/domain/Billing.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { Outbox, StagedEvent } from "../outbox/Outbox.js"
import { INSIGHTS_SCHEDULE, type InsightsScheduleData } from "../outbox/Registry.js"
import { anchorOf, type Period, type PeriodRow, type ScheduleRow, toPeriod } from "./BillingRows.js"
import type { AccountKey, BillingStore, Work } from "./BillingStore.js"

/** What bringing one schedule's periods up to time writes: `planOf`'s answer, written by `applyPlan`. */
interface Plan {
  readonly paid: ReadonlyArray<{ readonly periodId: string; readonly paidAt: Date }>
  readonly unpaid: ReadonlyArray<{ readonly periodId: string; readonly sendDue: boolean; readonly sendOverdue: boolean }>
  readonly events: ReadonlyArray<StagedEvent>
}

/**
 * Billing time and bringing schedules up to it: the billing clock's pass (`tick`), the billing consumer's
 * (`syncAccounts`) and the sandbox clock's (`advanceSandbox`), each opening the periods that started and sending each
 * period's events once. Built inside the Billing service's layer (services/billing/Billing.ts).
 */
export const makeBillingCatchUp = (
  store: BillingStore,
  outbox: Outbox,
  clock: { readonly current: Effect.Effect<Clock.Clock> }
) => {
  /** Billing time for a tenant and mode: the billing clock, plus the tenant's sandbox clock in test mode. */
  const nowFor = (scope: Scope) =>
    Effect.gen(function* () {
      const now = yield* (yield* clock.current).currentTimeMillis
      if (scope.mode === "live") return now
      return now + (yield* store.sandboxOffsetMs(scope.tenantId))
    })

  /** Tells the insights consumer that a schedule's dues (and its account's expected amount) may have changed. */
  const insightsChanged = (s: Pick<ScheduleRow, "id" | "tenantId" | "mode" | "accountRef" | "virtualAccountId">) =>
    outbox.stage([{
      tenantId: s.tenantId, mode: s.mode, type: INSIGHTS_SCHEDULE, subjectKey: s.accountRef,
      data: { scheduleId: s.id, accountId: s.virtualAccountId } satisfies InsightsScheduleData
    }])

  /**
   * What bringing a schedule's periods up to `nowMs` writes (pure): the periods to mark paid or unpaid, and the events
   * to stage, in the order their transitions happened (a period's due date, the next Lagos day, the moment it was first
   * seen paid), each carrying the period as it was at its own transition: a clock that jumped past a due date and the
   * day after sends `.due` saying `Due`, then `.overdue` saying `Overdue`.
   */
  const planOf = (s: ScheduleRow, periods: ReadonlyArray<{ readonly row: PeriodRow; readonly state: PeriodState }>, nowMs: number): Plan => {
    const paid: Array<{ periodId: string; paidAt: Date }> = []
    const unpaid: Array<{ periodId: string; sendDue: boolean; sendOverdue: boolean }> = []
    const transitions: Array<{ readonly atMs: number; readonly type: `billing.period.${"due" | "paid" | "overdue"}`; readonly period: Period }> = []
    for (const { row, state } of periods) {
      if (row.cancelled) continue
      if (state.status === "Paid") {
        // Set once, by whoever sees it paid first (this pass, the billing consumer, or a read: `statesForRead`).
        const paidAt = row.paidAt ?? new Date(nowMs)
        if (row.paidAt === null || !row.paidNotified) paid.push({ periodId: row.id, paidAt })
        if (!row.paidNotified) transitions.push({ atMs: paidAt.getTime(), type: "billing.period.paid", period: toPeriod({ ...row, paidAt }, state) })
        continue
      }
      // Un-paid again (a reversal): no paidAt until it is paid again. Its paid event went out once and stays so.
      const sendDue = (state.status === "Due" || state.status === "Overdue") && !row.dueNotified
      const sendOverdue = state.status === "Overdue" && !row.overdueNotified
      if (row.paidAt !== null || sendDue || sendOverdue) unpaid.push({ periodId: row.id, sendDue, sendOverdue })
      const asAt = (status: PeriodStatus) => toPeriod({ ...row, paidAt: null }, { ...state, status })
      if (sendDue) transitions.push({ atMs: row.dueAt.getTime(), type: "billing.period.due", period: asAt("Due") })
      if (sendOverdue) transitions.push({ atMs: row.overdueAt.getTime(), type: "billing.period.overdue", period: asAt("Overdue") })
    }
    // Stable: transitions at the same instant keep the periods' order.
    transitions.sort((a, b) => a.atMs - b.atMs)
    const events = transitions.map((t) => ({
      tenantId: s.tenantId, mode: s.mode, type: t.type, subjectKey: s.accountRef,
      data: { scheduleId: s.id, reference: s.reference, accountRef: s.accountRef, period: t.period }
    }))
    return { paid, unpaid, events }
  }

  /** Writes plans: two updates and one staging statement, whatever their number (outbox ids in the plans' order). */
  const applyPlan = (...plans: ReadonlyArray<Plan>) =>
    Effect.all([
      store.markPaidMany(plans.flatMap((p) => p.paid)),
      store.markUnpaidMany(plans.flatMap((p) => p.unpaid)),
      outbox.stage(plans.flatMap((p) => p.events))
    ], { discard: true })

  /**
   * One schedule brought up to billing time `nowMs`, in the caller's transaction with the account row and the
   * schedule row locked (in that order): an Active schedule opens every period that has started (each adding its
   * amount to the account's expected amount), then each period's events go out once each: `due`, `overdue`, `paid`
   * (`planOf`).
   */
  const syncLocked = (s0: ScheduleRow, nowMs: number) =>
    Effect.gen(function* () {
      let s = s0
      if (s.status === "Active") {
        const openedBefore = s.periodsOpened
        const anchor = anchorOf(s)
        while (periodCalendar(anchor, s.interval, s.nextK + 1, s.dueOffsetDays).startMs <= nowMs) {
          const cal = periodCalendar(anchor, s.interval, s.nextK + 1, s.dueOffsetDays)
          const amount = s.nextAmountKobo ?? s.amountKobo
          yield* store.insertPeriod(s, cal, amount)
          yield* store.addExpected(s, amount)
          yield* store.periodOpened(s)
          s = { ...s, nextK: s.nextK + 1, periodsOpened: s.periodsOpened + 1, nextAmountKobo: null }
        }
        if (s.periodsOpened > openedBefore) yield* insightsChanged(s)
      }
      yield* applyPlan(planOf(s, yield* store.statesOf(s, nowMs), nowMs))
      return s
    })

  /** One schedule brought up to its tenant's billing time, in the caller's transaction (account row, then schedule row locked). */
  const bringUp = (w: Work) =>
    Effect.gen(function* () {
      const scope: Scope = { tenantId: w.tenantId, mode: w.mode }
      const s = yield* store.lockSchedule(scope, w.id)
      if (s.status !== "Cancelled") yield* syncLocked(s, yield* nowFor(scope))
    })

  /**
   * The billing consumer's bringUp of schedules with no period to open: only their own rows are locked (in `dueWork`'s
   * order, one statement), not their accounts'. Marking periods paid or unpaid writes no account figure, and the amount
   * paid it reads is the latest committed (a deposit that commits after the read brings its own event, so the next pass
   * sees it). Holding the account row for a pass of several statements made every reconcile batch with a billed
   * account wait for the pass to commit (docs/performance.md, "Billing locks"). Set-wise: a handful of statements for
   * the whole run (issue 33: one schedule at a time, six statements each, kept the consumer's transaction open for one
   * to two seconds under load, holding back Postgres's clean-up of every table's dead rows). A schedule that became due
   * to open a period after `dueWork` read it leaves the opening to the billing clock's next pass.
   */
  const bringUpPaidMany = (works: ReadonlyArray<Work>) =>
    Effect.gen(function* () {
      const schedules = (yield* store.lockSchedulesInOrder(works.map((w) => w.id))).filter((s) => s.status !== "Cancelled")
      if (schedules.length === 0) return
      // Billing time once per tenant and mode (a test-mode tenant's sandbox clock is one read).
      const scopeOf = (s: ScheduleRow) => `${s.tenantId}|${s.mode}`
      const nows = new Map<string, number>()
      for (const s of schedules) if (!nows.has(scopeOf(s))) nows.set(scopeOf(s), yield* nowFor({ tenantId: s.tenantId, mode: s.mode }))
      const nowOf = (s: ScheduleRow) => nows.get(scopeOf(s))!
      const states = yield* store.statesOfMany(schedules, nowOf)
      yield* applyPlan(...schedules.map((s, i) => planOf(s, states[i]!, nowOf(s))))
    })

  /**
   * One pass of the billing clock: each schedule with something to do (`dueWork`) brought up to its tenant's billing
   * time in a transaction of its own (account row, then schedule row locked: two workers never open a period twice or
   * send an event twice). A schedule with nothing to do is not locked, so a pass costs the deposit path nothing.
   * Returns how many schedules it brought up to time. The safety net: payments are billed by the billing consumer
   * within a second or so (`syncAccounts`), and the sandbox clock brings its tenant up to time itself (`advanceSandbox`).
   */
  const tick = Effect.fn("Billing.tick")(function* () {
    const due = yield* store.dueWork(yield* (yield* clock.current).currentTimeMillis, { all: true })
    for (const d of due) {
      yield* store.inTransaction(bringUp(d)).pipe(
        Effect.catchAllCause((cause) => Effect.logError(`billing: schedule ${d.id} could not be brought up to time`, cause))
      )
    }
    return due.length
  })

  /**
   * Billing at payment time (the billing consumer, services/billing/BillingConsumer.ts): the schedules of the accounts
   * that deposits (or review decisions) just moved, brought up to billing time in the caller's transaction, so a
   * deposit that pays a period has it `Paid` with `paidAt` and its `billing.period.paid` staged within a consumer pass
   * (a reversal that un-pays one clears `paidAt`). Only the schedules with something to do are locked (their accounts
   * only to open a period: `bringUpPaidMany`), in the reconciler's lock order. Returns how many schedules it brought up to time.
   */
  const syncAccounts = Effect.fn("Billing.syncAccounts")(function* (accounts: ReadonlyArray<AccountKey>) {
    const unique = [...new Map(accounts.map((a) => [`${a.tenantId}|${a.mode}|${a.accountRef}`, a])).values()]
    if (unique.length === 0) return 0
    const due = yield* store.dueWork(yield* (yield* clock.current).currentTimeMillis, { accounts: unique })
    // In `dueWork`'s order: each run of schedules with no period to open set-wise, a schedule that opens one on its own.
    for (let i = 0; i < due.length;) {
      if (due[i]!.opens) {
        yield* bringUp(due[i]!)
        i++
        continue
      }
      let j = i
      while (j < due.length && !due[j]!.opens) j++
      yield* bringUpPaidMany(due.slice(i, j))
      i = j
    }
    return due.length
  })

  const testModeOnly = () =>
    new Forbidden({ code: "live_key_not_allowed", message: "The sandbox clock is test mode's: live mode always runs on real time." })

  /**
   * The sandbox clock (test mode only): moves the tenant's billing time forward by `seconds`, and before it answers
   * brings the tenant's test-mode schedules up to the new time (periods opened, due and overdue, their events staged in
   * transition order), so a read right after sees them. One transaction: the move and the catch-up commit together or
   * not at all (a failed request moved nothing, so trying it again does not move the clock twice); two advances of one
   * tenant take turns on its clock's row.
   */
  const advanceSandbox = Effect.fn("Billing.advanceSandbox")(function* (scope: Scope, seconds: number) {
    if (scope.mode !== "test") return yield* testModeOnly()
    yield* store.inTransaction(Effect.gen(function* () {
      yield* store.advanceSandboxClock(scope.tenantId, seconds * 1000)
      const due = yield* store.dueWork(yield* (yield* clock.current).currentTimeMillis, { tenantId: scope.tenantId, mode: "test" })
      for (const d of due) yield* bringUp(d)
    })).pipe(Effect.orDie)
    return yield* sandboxTime(scope)
  })

  const sandboxTime = Effect.fn("Billing.sandboxTime")(function* (scope: Scope) {
    if (scope.mode !== "test") return yield* testModeOnly()
    const now = yield* nowFor(scope)
    const real = yield* (yield* clock.current).currentTimeMillis
    return { now: new Date(now).toISOString(), offsetSeconds: Math.round((now - real) / 1000), mode: scope.mode }
  })

  return { nowFor, insightsChanged, syncLocked, tick, syncAccounts, advanceSandbox, sandboxTime } as const
}

export type BillingCatchUp = ReturnType<typeof makeBillingCatchUp>
