import { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import {
  isoDate, lagosDateOf, lagosMidnight, periodCalendar, periodsStartedBy, type PeriodState, type PeriodStatus, periodStates
} from "../../src/domain/Billing.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import { paymentStateOf } from "../../src/domain/Reconciliation.js"
import { INSIGHTS_SCHEDULE, type InsightsScheduleData } from "../outbox/Registry.js"
import { Outbox } from "../outbox/Outbox.js"
import {
  anchorOf, type CreateSchedule, fingerprintOf, notFound, type Period, type PeriodRow, reused, type ScheduleRow, startOf, toPeriod, toSchedule
} from "./BillingRows.js"
import { makeSwappableClock } from "../Passes.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"

/** An account a deposit moved, as the outbox names it (its subject key: the accountRef). */
export interface AccountKey {
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly accountRef: string
}

/** A schedule with something to do, and its account's NUBAN (the reconciler's lock order). */
interface Work {
  readonly id: string
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly nuban: string
}

/** Where `dueWork` looks: every live schedule, one tenant's in one mode, or the schedules of some accounts. */
type WorkScope = { readonly all: true } | Scope | { readonly accounts: ReadonlyArray<AccountKey> }

/** The clock billing time runs by (the wall clock; a test swaps in a TestClock with `use`). */
export class BillingClock extends Effect.Service<BillingClock>()("services/billing/BillingClock", {
  effect: makeSwappableClock
}) {}

/**
 * Recurring billing. The service never pulls funds: it opens periods on the Africa/Lagos calendar, adds each period's
 * amount to the account's expected amount (so the reconciler classifies billed deposits as it always does, and what
 * was paid pays the oldest period first), and tells the tenant when a period is due, paid or overdue. A period's
 * paid/outstanding/status are computed on read from the account's amount paid and the billing time; the billing clock
 * (`tick`) opens periods and sends each event once.
 */
export class Billing extends Effect.Service<Billing>()("services/billing/Billing", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const clock = yield* BillingClock

    /** Billing time for a tenant and mode: the billing clock, plus the tenant's sandbox clock in test mode. */
    const nowFor = (scope: Scope) =>
      Effect.gen(function* () {
        const now = yield* (yield* clock.current).currentTimeMillis
        if (scope.mode === "live") return now
        const [c] = yield* sql<{ offsetMs: number }>`SELECT offset_ms FROM sandbox_clocks WHERE tenant_id = ${scope.tenantId}`.pipe(Effect.orDie)
        return now + (c?.offsetMs ?? 0)
      })

    /** Tells the insights consumer that a schedule's dues (and its account's expected amount) may have changed. */
    const insightsChanged = (s: Pick<ScheduleRow, "id" | "tenantId" | "mode" | "accountRef" | "virtualAccountId">) =>
      outbox.stage([{
        tenantId: s.tenantId, mode: s.mode, type: INSIGHTS_SCHEDULE, subjectKey: s.accountRef,
        data: { scheduleId: s.id, accountId: s.virtualAccountId } satisfies InsightsScheduleData
      }])

    const selectSchedules = sql`SELECT s.id, s.tenant_id, s.mode, s.virtual_account_id, va.account_ref, s.reference, s.request_fingerprint, s.interval,
        s.amount_kobo, s.next_amount_kobo, s.due_offset_days, s.description, s.status, s.anchor_date::text AS anchor_date, s.next_k,
        s.periods_opened, s.base_kobo, s.created_at
      FROM billing_schedules s JOIN virtual_accounts va ON va.id = s.virtual_account_id`

    const find = (scope: Scope, id: string, lock = false) =>
      sql<ScheduleRow>`${selectSchedules} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.id = ${id}
        ${lock ? sql`FOR UPDATE OF s` : sql``}`.pipe(Effect.map((r) => r[0]), Effect.orDie)

    const findOrFail = (scope: Scope, id: string) =>
      Effect.flatMap(find(scope, id), (s) => (s ? Effect.succeed(s) : Effect.fail(notFound(id))))

    const periodsOf = (scheduleId: string) =>
      sql<PeriodRow>`SELECT id, schedule_id, index, period_start, period_end, due_date::text AS due_date, due_at, overdue_at, amount_kobo, cancelled,
          paid_at, due_notified, paid_notified, overdue_notified
        FROM billing_periods WHERE schedule_id = ${scheduleId} ORDER BY index`.pipe(Effect.orDie)

    const amountPaidOf = (virtualAccountId: string, lock: boolean) =>
      sql<{ expectedAmountKobo: number | null; amountPaidKobo: number }>`SELECT expected_amount_kobo, amount_paid_kobo FROM virtual_accounts
        WHERE id = ${virtualAccountId} ${lock ? sql`FOR UPDATE` : sql``}`.pipe(Effect.map((r) => r[0]!), Effect.orDie)

    /** The schedule's periods, oldest first, with their states now. */
    const statesOf = (s: ScheduleRow, nowMs: number, lock = false) =>
      Effect.gen(function* () {
        const account = yield* amountPaidOf(s.virtualAccountId, lock)
        const periods = yield* periodsOf(s.id)
        const states = periodStates(
          periods.map((p) => ({ amountKobo: p.amountKobo, cancelled: p.cancelled, dueAtMs: p.dueAt.getTime(), overdueAtMs: p.overdueAt.getTime() })),
          s.baseKobo, account.amountPaidKobo, nowMs
        )
        return periods.map((p, i) => ({ row: p, state: states[i]! }))
      })

    /**
     * One schedule brought up to billing time `nowMs`, in the caller's transaction with the account row and the
     * schedule row locked (in that order): an Active schedule opens every period that has started (each adding its
     * amount to the account's expected amount), then each period's events go out once each: `due`, `overdue`, `paid`.
     * The events of one pass are staged in the order their transitions happened (a period's due date, the next Lagos
     * day, the moment it was first seen paid), and each carries the period as it was at its own transition: a clock
     * that jumped past a due date and the day after sends `.due` saying `Due`, then `.overdue` saying `Overdue`.
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
            yield* sql`INSERT INTO billing_periods (id, schedule_id, index, period_start, period_end, due_date, due_at, overdue_at, amount_kobo)
              VALUES (${newId("bp")}, ${s.id}, ${s.periodsOpened + 1}, ${new Date(cal.startMs)}, ${new Date(cal.endMs)}, ${isoDate(cal.dueDate)}::date,
                ${new Date(cal.dueAtMs)}, ${new Date(cal.overdueAtMs)}, ${amount})`
            yield* sql`UPDATE virtual_accounts SET expected_amount_kobo = COALESCE(expected_amount_kobo, ${s.baseKobo}) + ${amount} WHERE id = ${s.virtualAccountId}`
            yield* sql`UPDATE billing_schedules SET next_k = next_k + 1, next_start_at = ${startOf(s, s.nextK + 1)}, periods_opened = periods_opened + 1,
              next_amount_kobo = NULL WHERE id = ${s.id}`
            s = { ...s, nextK: s.nextK + 1, periodsOpened: s.periodsOpened + 1, nextAmountKobo: null }
          }
          if (s.periodsOpened > openedBefore) yield* insightsChanged(s)
        }
        const transitions: Array<{ readonly atMs: number; readonly type: string; readonly period: Period }> = []
        for (const { row, state } of yield* statesOf(s, nowMs)) {
          if (row.cancelled) continue
          if (state.status === "Paid") {
            // Set once, by whoever sees it paid first (this pass, the billing consumer, or a read: `statesForRead`).
            const paidAt = row.paidAt ?? new Date(nowMs)
            if (row.paidAt === null || !row.paidNotified) {
              yield* sql`UPDATE billing_periods SET paid_at = ${paidAt}, paid_notified = true WHERE id = ${row.id}`
            }
            if (!row.paidNotified) transitions.push({ atMs: paidAt.getTime(), type: "billing.period.paid", period: toPeriod({ ...row, paidAt }, state) })
            continue
          }
          // Un-paid again (a reversal): no paidAt until it is paid again. Its paid event went out once and stays so.
          const sendDue = (state.status === "Due" || state.status === "Overdue") && !row.dueNotified
          const sendOverdue = state.status === "Overdue" && !row.overdueNotified
          if (row.paidAt !== null || sendDue || sendOverdue) {
            yield* sql`UPDATE billing_periods SET paid_at = NULL, due_notified = due_notified OR ${sendDue}, overdue_notified = overdue_notified OR ${sendOverdue}
              WHERE id = ${row.id}`
          }
          const asAt = (status: PeriodStatus) => toPeriod({ ...row, paidAt: null }, { ...state, status })
          if (sendDue) transitions.push({ atMs: row.dueAt.getTime(), type: "billing.period.due", period: asAt("Due") })
          if (sendOverdue) transitions.push({ atMs: row.overdueAt.getTime(), type: "billing.period.overdue", period: asAt("Overdue") })
        }
        // Stable: transitions at the same instant keep the periods' order. One statement: outbox ids in this order.
        transitions.sort((a, b) => a.atMs - b.atMs)
        yield* outbox.stage(transitions.map((t) => ({
          tenantId: s.tenantId, mode: s.mode, type: t.type, subjectKey: s.accountRef,
          data: { scheduleId: s.id, reference: s.reference, accountRef: s.accountRef, period: t.period }
        })))
        return s
      })

    /** Locks the account row, then the schedule row (the lock order of every step that moves the account's figures). */
    const lockSchedule = (scope: Scope, id: string) =>
      Effect.gen(function* () {
        const seen = yield* findOrFail(scope, id)
        yield* amountPaidOf(seen.virtualAccountId, true)
        return (yield* find(scope, id, true))!
      })

    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
      sql.withTransaction(effect).pipe(Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)) as never

    const create = Effect.fn("Billing.create")(function* (scope: Scope, input: CreateSchedule, actor: string) {
      const fingerprint = fingerprintOf(input)
      return yield* inTransaction(Effect.gen(function* () {
        const [va] = yield* sql<{ id: string; expectedAmountKobo: number | null; amountPaidKobo: number }>`SELECT id, expected_amount_kobo, amount_paid_kobo
          FROM virtual_accounts WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account_ref = ${input.accountRef} AND status = 'Active'
          FOR UPDATE`
        if (!va) return yield* new NotFound({ code: "virtual_account_not_found", message: `No virtual account ${JSON.stringify(input.accountRef)} in this tenant and mode.` })
        const [same] = yield* sql<{ id: string; requestFingerprint: string }>`SELECT id, request_fingerprint FROM billing_schedules
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${input.reference}`
        if (same) {
          if (same.requestFingerprint !== fingerprint) return yield* reused(input.reference)
          return { created: false, schedule: toSchedule((yield* find(scope, same.id))!) }
        }
        const [live] = yield* sql<{ id: string }>`SELECT id FROM billing_schedules WHERE virtual_account_id = ${va.id} AND status IN ('Active', 'Paused')`
        if (live) {
          return yield* new Conflict({ code: "schedule_exists", message: `Account ${JSON.stringify(input.accountRef)} already has an active or paused schedule (${live.id}); cancel it first.` })
        }
        const state = paymentStateOf(va)
        if (state !== "Open" && state !== "FullyPaid") {
          return yield* new Conflict({
            code: "account_not_billable",
            message: `Account ${JSON.stringify(input.accountRef)} is ${state}: a schedule starts on an account that is open or fully paid, so its periods' payments are told apart from what it owed before.`
          })
        }
        const nowMs = yield* nowFor(scope)
        const id = newId("bs")
        const inserted = yield* sql`INSERT INTO billing_schedules (id, tenant_id, mode, virtual_account_id, reference, request_fingerprint, interval, amount_kobo,
            due_offset_days, description, status, anchor_date, next_k, next_start_at, base_kobo, created_by)
          VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${va.id}, ${input.reference}, ${fingerprint}, ${input.interval}, ${input.amountKobo},
            ${input.dueOffsetDays ?? 0}, ${input.description ?? null}, 'Active', ${isoDate(lagosDateOf(nowMs))}::date, 0,
            ${new Date(lagosMidnight(lagosDateOf(nowMs)))},
            ${va.expectedAmountKobo ?? va.amountPaidKobo}, ${actor})
          ON CONFLICT (tenant_id, mode, reference) DO NOTHING RETURNING id`
        // The same reference taken meanwhile for another account (this account's row lock does not cover that).
        if (inserted.length === 0) return yield* reused(input.reference)
        const s = yield* syncLocked((yield* find(scope, id, true))!, nowMs)
        return { created: true, schedule: toSchedule((yield* find(scope, s.id))!) }
      }))
    })

    const get = Effect.fn("Billing.get")(function* (scope: Scope, id: string) {
      return toSchedule(yield* findOrFail(scope, id))
    })

    const list = Effect.fn("Billing.list")(function* (scope: Scope, page: PageRequest) {
      const after = yield* cursorId(page, "id", (id) =>
        sql<{ id: string }>`SELECT id FROM billing_schedules WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`)
      const limit = limitOf(page)
      const rows = yield* sql<ScheduleRow>`${selectSchedules} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode}
        ${after === undefined ? sql`` : sql`AND (s.created_at, s.id) < (SELECT created_at, id FROM billing_schedules WHERE id = ${after})`}
        ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit}`.pipe(Effect.orDie)
      return pageOf(rows.map(toSchedule), limit - 1)
    })

    const unstamped = ({ row, state }: { readonly row: PeriodRow; readonly state: PeriodState }) => state.status === "Paid" && row.paidAt === null

    /**
     * The schedule's periods and their states at `nowMs`, for a read: a period that reads `Paid` always has its
     * `paidAt`. When a deposit paid it a moment ago and neither the billing consumer nor the clock's pass has seen it
     * yet, this read is the first to: it sets `paidAt` to now, under the account's row lock as they do (so it is set
     * once, and the money it was read from stays put while it is), and they keep it and send the paid event with it.
     */
    const statesForRead = (s: ScheduleRow, nowMs: number) =>
      Effect.gen(function* () {
        const all = yield* statesOf(s, nowMs)
        if (!all.some(unstamped)) return all
        return yield* inTransaction(Effect.gen(function* () {
          const locked = yield* statesOf(s, nowMs, true)
          const ids = new Set(locked.filter(unstamped).map(({ row }) => row.id))
          if (ids.size === 0) return locked
          const paidAt = new Date(nowMs)
          yield* sql`UPDATE billing_periods SET paid_at = ${paidAt} WHERE id IN ${sql.in([...ids])} AND paid_at IS NULL`
          return locked.map((p) => (ids.has(p.row.id) ? { row: { ...p.row, paidAt }, state: p.state } : p))
        }))
      })

    /** Most recent first. */
    const periods = Effect.fn("Billing.periods")(function* (scope: Scope, id: string, page: PageRequest) {
      const s = yield* findOrFail(scope, id)
      const all = yield* statesForRead(s, yield* nowFor(scope))
      const newest = all.map(({ row, state }) => toPeriod(row, state)).reverse()
      const start = page.startingAfter === undefined ? 0 : newest.findIndex((p) => p.id === page.startingAfter) + 1
      if (page.startingAfter !== undefined && start === 0) {
        return yield* new BadRequest({ code: "unknown_starting_after", message: `startingAfter ${JSON.stringify(page.startingAfter)} is not the id of a period of this schedule.` })
      }
      const limit = limitOf(page)
      return pageOf(newest.slice(start, start + limit), limit - 1)
    })

    const cancelled = (id: string) => new Conflict({ code: "schedule_cancelled", message: `Schedule ${id} is cancelled: that is permanent. Create a new one.` })

    const setNextAmount = Effect.fn("Billing.setNextAmount")(function* (scope: Scope, id: string, amountKobo: number) {
      return yield* inTransaction(Effect.gen(function* () {
        const s = yield* lockSchedule(scope, id)
        if (s.status === "Cancelled") return yield* cancelled(id)
        yield* sql`UPDATE billing_schedules SET next_amount_kobo = ${amountKobo} WHERE id = ${id}`
        yield* insightsChanged(s)
        return toSchedule((yield* find(scope, id))!)
      }))
    })

    const pause = Effect.fn("Billing.pause")(function* (scope: Scope, id: string) {
      return yield* inTransaction(Effect.gen(function* () {
        const s = yield* lockSchedule(scope, id)
        if (s.status === "Cancelled") return yield* cancelled(id)
        if (s.status === "Active") {
          // What is due up to now is opened first: a pause stops what comes next, not what already started.
          yield* syncLocked(s, yield* nowFor(scope))
          yield* sql`UPDATE billing_schedules SET status = 'Paused' WHERE id = ${id}`
          yield* insightsChanged(s)
        }
        return toSchedule((yield* find(scope, id))!)
      }))
    })

    /** Resumes at the next period boundary after now: the periods that started while paused are never opened. */
    const resume = Effect.fn("Billing.resume")(function* (scope: Scope, id: string) {
      return yield* inTransaction(Effect.gen(function* () {
        const s = yield* lockSchedule(scope, id)
        if (s.status === "Cancelled") return yield* cancelled(id)
        if (s.status === "Paused") {
          const nextK = Math.max(s.nextK, periodsStartedBy(anchorOf(s), s.interval, yield* nowFor(scope)))
          yield* sql`UPDATE billing_schedules SET status = 'Active', next_k = ${nextK}, next_start_at = ${startOf(s, nextK)} WHERE id = ${id}`
          yield* insightsChanged(s)
        }
        return toSchedule((yield* find(scope, id))!)
      }))
    })

    /** Cancels for good: unpaid periods are cancelled and what they still expected leaves the account's expected amount. */
    const cancel = Effect.fn("Billing.cancel")(function* (scope: Scope, id: string) {
      return yield* inTransaction(Effect.gen(function* () {
        const s = yield* lockSchedule(scope, id)
        if (s.status === "Cancelled") return toSchedule(s)
        let removed = 0
        for (const { row, state } of yield* statesOf(s, yield* nowFor(scope))) {
          if (row.cancelled || state.outstandingKobo === 0) continue
          removed += state.outstandingKobo
          yield* sql`UPDATE billing_periods SET cancelled = true, amount_kobo = ${state.paidKobo} WHERE id = ${row.id}`
        }
        // Back to 0 only when the account expected nothing before the schedule (base 0) and nothing of it was paid: it is
        // open again (NULL), as it was; an expected amount of 0 is no state of an account (paymentStateOf refuses it).
        if (removed > 0) yield* sql`UPDATE virtual_accounts SET expected_amount_kobo = NULLIF(expected_amount_kobo - ${removed}, 0) WHERE id = ${s.virtualAccountId}`
        yield* sql`UPDATE billing_schedules SET status = 'Cancelled', cancelled_at = now() WHERE id = ${id}`
        yield* insightsChanged(s)
        return toSchedule((yield* find(scope, id))!)
      }))
    })

    /**
     * The schedules with something to do at their tenant's billing time (`nowMs` plus the sandbox offset in test mode),
     * found without locking anything: an Active schedule whose next period has started, or a period whose paid state or
     * pending event moved (paid iff what the account was paid covers the periods up to it: `base + running sum`).
     * Among every live schedule (the clock's pass), one tenant's in one mode (the sandbox clock), or the schedules of
     * some accounts (the billing consumer: one index probe per account, so the accounts with no schedule cost nothing
     * more). In the reconciler's lock order (tenant, mode, NUBAN: `HotPath.lockAccounts`), so a caller that locks
     * several accounts in one transaction never waits on a reconcile batch that waits on it.
     */
    const dueWork = (nowMs: number, among: WorkScope) =>
      Effect.gen(function* () {
        const from = "accounts" in among
          ? sql`unnest(${among.accounts.map((a) => a.tenantId)}::text[], ${among.accounts.map((a) => a.mode)}::text[],
                ${among.accounts.map((a) => a.accountRef)}::text[]) AS k(tenant_id, mode, account_ref)
              JOIN virtual_accounts va ON va.account_ref = k.account_ref AND va.tenant_id = k.tenant_id AND va.mode = k.mode
              JOIN billing_schedules s ON s.virtual_account_id = va.id AND s.status IN ('Active', 'Paused')`
          : sql`billing_schedules s JOIN virtual_accounts va ON va.id = s.virtual_account_id`
        const where = "accounts" in among
          ? sql``
          : "tenantId" in among
            ? sql`WHERE s.status <> 'Cancelled' AND s.tenant_id = ${among.tenantId} AND s.mode = ${among.mode}`
            : sql`WHERE s.status <> 'Cancelled'`
        const rows = yield* sql<Work>`
          WITH t AS (
            SELECT s.id, s.tenant_id, s.mode, COALESCE(va.nuban, '') AS nuban, s.status, s.next_start_at, s.base_kobo, va.amount_paid_kobo,
              to_timestamp((${nowMs}::bigint + CASE WHEN s.mode = 'test' THEN COALESCE(c.offset_ms, 0) ELSE 0 END) / 1000.0) AS billing_now
            FROM ${from} LEFT JOIN sandbox_clocks c ON c.tenant_id = s.tenant_id
            ${where}
          ), p AS (
            SELECT t.id, t.tenant_id, t.mode, t.nuban, t.billing_now, p.cancelled, p.due_at, p.overdue_at, p.due_notified, p.paid_notified,
              p.overdue_notified, p.paid_at, t.amount_paid_kobo,
              t.base_kobo + sum(p.amount_kobo) OVER (PARTITION BY p.schedule_id ORDER BY p.index) AS covered_at
            FROM t JOIN billing_periods p ON p.schedule_id = t.id
          )
          SELECT id, tenant_id, mode, nuban FROM t WHERE status = 'Active' AND next_start_at <= billing_now
          UNION
          SELECT id, tenant_id, mode, nuban FROM p WHERE NOT cancelled AND (
            (amount_paid_kobo >= covered_at AND (NOT paid_notified OR paid_at IS NULL))
            OR (amount_paid_kobo < covered_at AND (paid_at IS NOT NULL OR (due_at <= billing_now AND NOT due_notified)
              OR (overdue_at <= billing_now AND NOT overdue_notified))))`.pipe(Effect.orDie)
        const key = (w: Work) => `${w.tenantId}|${w.mode}|${w.nuban}`
        return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      })

    /** One schedule brought up to its tenant's billing time, in the caller's transaction (account row, then schedule row locked). */
    const bringUp = (w: Work) =>
      Effect.gen(function* () {
        const scope: Scope = { tenantId: w.tenantId, mode: w.mode }
        const s = yield* lockSchedule(scope, w.id)
        if (s.status !== "Cancelled") yield* syncLocked(s, yield* nowFor(scope))
      })

    /**
     * One pass of the billing clock: each schedule with something to do (`dueWork`) brought up to its tenant's billing
     * time in a transaction of its own (account row, then schedule row locked: two workers never open a period twice or
     * send an event twice). A schedule with nothing to do is not locked, so a pass costs the deposit path nothing.
     * Returns how many schedules it brought up to time. The safety net: payments are billed by the billing consumer
     * within a second or so (`syncAccounts`), and the sandbox clock brings its tenant up to time itself (`advanceSandbox`).
     */
    const tick = Effect.fn("Billing.tick")(function* () {
      const due = yield* dueWork(yield* (yield* clock.current).currentTimeMillis, { all: true })
      for (const d of due) {
        yield* inTransaction(bringUp(d)).pipe(
          Effect.catchAllCause((cause) => Effect.logError(`billing: schedule ${d.id} could not be brought up to time`, cause))
        )
      }
      return due.length
    })

    /**
     * Billing at payment time (the billing consumer, services/billing/BillingConsumer.ts): the schedules of the accounts
     * that deposits (or review decisions) just moved, brought up to billing time in the caller's transaction, so a
     * deposit that pays a period has it `Paid` with `paidAt` and its `billing.period.paid` staged within a consumer pass
     * (a reversal that un-pays one clears `paidAt`). Only the billed accounts with something to do are locked, in the
     * reconciler's lock order. Returns how many schedules it brought up to time.
     */
    const syncAccounts = Effect.fn("Billing.syncAccounts")(function* (accounts: ReadonlyArray<AccountKey>) {
      const unique = [...new Map(accounts.map((a) => [`${a.tenantId}|${a.mode}|${a.accountRef}`, a])).values()]
      if (unique.length === 0) return 0
      const due = yield* dueWork(yield* (yield* clock.current).currentTimeMillis, { accounts: unique })
      for (const d of due) yield* bringUp(d)
      return due.length
    })

    /**
     * The sandbox clock (test mode only): moves the tenant's billing time forward by `seconds`, and before it answers
     * brings the tenant's test-mode schedules up to the new time (periods opened, due and overdue, their events staged in
     * transition order), so a read right after sees them. One transaction: the move and the catch-up commit together or
     * not at all (a failed request moved nothing, so trying it again does not move the clock twice); two advances of one
     * tenant take turns on its clock's row.
     */
    const advanceSandbox = Effect.fn("Billing.advanceSandbox")(function* (scope: Scope, seconds: number) {
      if (scope.mode !== "test") {
        return yield* new Forbidden({ code: "live_key_not_allowed", message: "The sandbox clock is test mode's: live mode always runs on real time." })
      }
      yield* inTransaction(Effect.gen(function* () {
        yield* sql`INSERT INTO sandbox_clocks (tenant_id, offset_ms) VALUES (${scope.tenantId}, ${seconds * 1000})
          ON CONFLICT (tenant_id) DO UPDATE SET offset_ms = sandbox_clocks.offset_ms + ${seconds * 1000}, updated_at = now()`
        const due = yield* dueWork(yield* (yield* clock.current).currentTimeMillis, { tenantId: scope.tenantId, mode: "test" })
        for (const d of due) yield* bringUp(d)
      })).pipe(Effect.orDie)
      return yield* sandboxTime(scope)
    })

    const sandboxTime = Effect.fn("Billing.sandboxTime")(function* (scope: Scope) {
      if (scope.mode !== "test") {
        return yield* new Forbidden({ code: "live_key_not_allowed", message: "The sandbox clock is test mode's: live mode always runs on real time." })
      }
      const now = yield* nowFor(scope)
      const real = yield* (yield* clock.current).currentTimeMillis
      return { now: new Date(now).toISOString(), offsetSeconds: Math.round((now - real) / 1000), mode: scope.mode }
    })

    return { create, get, list, periods, setNextAmount, pause, resume, cancel, tick, syncAccounts, advanceSandbox, sandboxTime, nowFor } as const
  })
}) {}
