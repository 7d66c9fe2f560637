import { type SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import { isoDate, lagosDateOf, lagosMidnight, type PeriodCalendar, periodStates } from "../../src/domain/Billing.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import { type CreateSchedule, notFound, type PeriodRow, type ScheduleRow, startOf } from "./BillingRows.js"

/** An account a deposit moved, as the outbox names it (its subject key: the accountRef). */
export interface AccountKey {
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly accountRef: string
}

/** A schedule with something to do, and its account's NUBAN (the reconciler's lock order). */
export interface Work {
  readonly id: string
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly nuban: string
  /** It has a period to open (which moves the account's expected amount): the account row must be locked first. */
  readonly opens: boolean
}

/** Where `dueWork` looks: every live schedule, one tenant's in one mode, or the schedules of some accounts. */
export type WorkScope = { readonly all: true } | Scope | { readonly accounts: ReadonlyArray<AccountKey> }

/** What a new schedule row holds beyond the request: its id, account, fingerprint, who made it and when. */
export interface NewSchedule {
  readonly id: string
  readonly virtualAccountId: string
  readonly fingerprint: string
  readonly input: CreateSchedule
  readonly nowMs: number
  readonly baseKobo: number
  readonly actor: string
}

/**
 * The SQL of billing: schedules, their periods, the account figures they move and the sandbox clock. One function per
 * statement (plus the two reads every step composes: `statesOf`, `lockSchedule`), built on the caller's `SqlClient`
 * so every statement runs in the transaction its caller opened.
 */
/** A schedule's periods (oldest first) with their states at `nowMs`, given its account's amount paid. */
const statesFrom = (s: ScheduleRow, amountPaidKobo: number, periods: ReadonlyArray<PeriodRow>, nowMs: number) => {
  const states = periodStates(
    periods.map((p) => ({ amountKobo: p.amountKobo, cancelled: p.cancelled, dueAtMs: p.dueAt.getTime(), overdueAtMs: p.overdueAt.getTime() })),
    s.baseKobo, amountPaidKobo, nowMs
  )
  return periods.map((p, i) => ({ row: p, state: states[i]! }))
}

export const makeBillingStore = (sql: SqlClient.SqlClient) => {
  const selectSchedules = sql`SELECT s.id, s.tenant_id, s.mode, s.virtual_account_id, va.account_ref, s.reference, s.request_fingerprint, s.interval,
      s.amount_kobo, s.next_amount_kobo, s.due_offset_days, s.description, s.status, s.anchor_date::text AS anchor_date, s.next_k,
      s.periods_opened, s.base_kobo, s.created_at
    FROM billing_schedules s JOIN virtual_accounts va ON va.id = s.virtual_account_id`

  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
    sql.withTransaction(effect).pipe(Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)) as never

  /** The tenant's sandbox clock offset (0 when it never moved). */
  const sandboxOffsetMs = (tenantId: string) =>
    sql<{ offsetMs: number }>`SELECT offset_ms FROM sandbox_clocks WHERE tenant_id = ${tenantId}`.pipe(Effect.orDie, Effect.map(([c]) => c?.offsetMs ?? 0))

  const advanceSandboxClock = (tenantId: string, ms: number) =>
    sql`INSERT INTO sandbox_clocks (tenant_id, offset_ms) VALUES (${tenantId}, ${ms})
      ON CONFLICT (tenant_id) DO UPDATE SET offset_ms = sandbox_clocks.offset_ms + ${ms}, updated_at = now()`

  const find = (scope: Scope, id: string, lock = false) =>
    sql<ScheduleRow>`${selectSchedules} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.id = ${id}
      ${lock ? sql`FOR UPDATE OF s` : sql``}`.pipe(Effect.map((r) => r[0]), Effect.orDie)

  const findOrFail = (scope: Scope, id: string) =>
    Effect.flatMap(find(scope, id), (s) => (s ? Effect.succeed(s) : Effect.fail(notFound(id))))

  /** A page of the tenant's schedules, newest first, after the schedule `after`. */
  const list = (scope: Scope, after: string | undefined, limit: number) =>
    sql<ScheduleRow>`${selectSchedules} WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode}
      ${after === undefined ? sql`` : sql`AND (s.created_at, s.id) < (SELECT created_at, id FROM billing_schedules WHERE id = ${after})`}
      ORDER BY s.created_at DESC, s.id DESC LIMIT ${limit}`.pipe(Effect.orDie)

  /** The list cursor's lookup. */
  const idOf = (scope: Scope, id: string) =>
    sql<{ id: string }>`SELECT id FROM billing_schedules WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`

  const selectPeriods = sql`SELECT id, schedule_id, index, period_start, period_end, due_date::text AS due_date, due_at, overdue_at, amount_kobo,
      cancelled, paid_at, due_notified, paid_notified, overdue_notified
    FROM billing_periods`

  const periodsOf = (scheduleId: string) =>
    sql<PeriodRow>`${selectPeriods} WHERE schedule_id = ${scheduleId} ORDER BY index`.pipe(Effect.orDie)

  const amountPaidOf = (virtualAccountId: string, lock: boolean) =>
    sql<{ expectedAmountKobo: number | null; amountPaidKobo: number }>`SELECT expected_amount_kobo, amount_paid_kobo FROM virtual_accounts
      WHERE id = ${virtualAccountId} ${lock ? sql`FOR UPDATE` : sql``}`.pipe(Effect.map((r) => r[0]!), Effect.orDie)

  /** The schedule's periods, oldest first, with their states now. */
  const statesOf = (s: ScheduleRow, nowMs: number, lock = false) =>
    Effect.gen(function* () {
      const account = yield* amountPaidOf(s.virtualAccountId, lock)
      return statesFrom(s, account.amountPaidKobo, yield* periodsOf(s.id), nowMs)
    })

  /**
   * `statesOf` for several schedules in two statements (no account row locked): each schedule's periods with their
   * states at `nowOf(schedule)`, in the order of `schedules`.
   */
  const statesOfMany = (schedules: ReadonlyArray<ScheduleRow>, nowOf: (s: ScheduleRow) => number) =>
    Effect.gen(function* () {
      if (schedules.length === 0) return []
      const paid = yield* sql<{ id: string; amountPaidKobo: number }>`SELECT id, amount_paid_kobo FROM virtual_accounts
        WHERE id = ANY(${[...new Set(schedules.map((s) => s.virtualAccountId))]}::text[])`.pipe(Effect.orDie)
      const periods = yield* sql<PeriodRow>`${selectPeriods} WHERE schedule_id = ANY(${schedules.map((s) => s.id)}::text[])
        ORDER BY schedule_id, index`.pipe(Effect.orDie)
      const paidOf = new Map(paid.map((a) => [a.id, a.amountPaidKobo]))
      const periodsOfSchedule = new Map<string, Array<PeriodRow>>()
      for (const p of periods) {
        const list = periodsOfSchedule.get(p.scheduleId)
        if (list) list.push(p)
        else periodsOfSchedule.set(p.scheduleId, [p])
      }
      return schedules.map((s) => statesFrom(s, paidOf.get(s.virtualAccountId) ?? 0, periodsOfSchedule.get(s.id) ?? [], nowOf(s)))
    })

  /**
   * The schedules of `ids` that exist, locked one after another in the order of `ids` (Postgres locks the sorted rows as
   * it returns them), so a pass that locks several keeps the order every other step locks in.
   */
  const lockSchedulesInOrder = (ids: ReadonlyArray<string>) =>
    sql<ScheduleRow>`${selectSchedules} JOIN unnest(${ids}::text[]) WITH ORDINALITY AS u(id, ord) ON u.id = s.id
      ORDER BY u.ord FOR UPDATE OF s`.pipe(Effect.orDie)

  /** Periods seen paid: `paidAt` set (kept when it was set before) and their paid event noted as sent. One statement. */
  const markPaidMany = (marks: ReadonlyArray<{ readonly periodId: string; readonly paidAt: Date }>) =>
    marks.length === 0 ? Effect.void : sql`UPDATE billing_periods p SET paid_at = u.paid_at, paid_notified = true
      FROM unnest(${marks.map((m) => m.periodId)}::text[], ${marks.map((m) => m.paidAt.toISOString())}::timestamptz[]) AS u(id, paid_at)
      WHERE p.id = u.id`.pipe(Effect.asVoid, Effect.orDie)

  /** Periods not paid (again): `paidAt` cleared and their due and overdue events noted as sent where they are. One statement. */
  const markUnpaidMany = (marks: ReadonlyArray<{ readonly periodId: string; readonly sendDue: boolean; readonly sendOverdue: boolean }>) =>
    marks.length === 0 ? Effect.void : sql`UPDATE billing_periods p SET paid_at = NULL, due_notified = p.due_notified OR u.due,
        overdue_notified = p.overdue_notified OR u.overdue
      FROM unnest(${marks.map((m) => m.periodId)}::text[], ${marks.map((m) => m.sendDue)}::boolean[], ${marks.map((m) => m.sendOverdue)}::boolean[])
        AS u(id, due, overdue)
      WHERE p.id = u.id`.pipe(Effect.asVoid, Effect.orDie)

  /** Locks the account row, then the schedule row (the lock order of every step that moves the account's figures). */
  const lockSchedule = (scope: Scope, id: string) =>
    Effect.gen(function* () {
      const seen = yield* findOrFail(scope, id)
      yield* amountPaidOf(seen.virtualAccountId, true)
      return (yield* find(scope, id, true))!
    })

  /** Period `s.periodsOpened + 1` of the schedule, on calendar `cal`. */
  const insertPeriod = (s: ScheduleRow, cal: PeriodCalendar, amount: number) =>
    sql`INSERT INTO billing_periods (id, schedule_id, index, period_start, period_end, due_date, due_at, overdue_at, amount_kobo)
      VALUES (${newId("bp")}, ${s.id}, ${s.periodsOpened + 1}, ${new Date(cal.startMs)}, ${new Date(cal.endMs)}, ${isoDate(cal.dueDate)}::date,
        ${new Date(cal.dueAtMs)}, ${new Date(cal.overdueAtMs)}, ${amount})`

  /** A period opened: its amount joins the account's expected amount. */
  const addExpected = (s: ScheduleRow, amount: number) =>
    sql`UPDATE virtual_accounts SET expected_amount_kobo = COALESCE(expected_amount_kobo, ${s.baseKobo}) + ${amount} WHERE id = ${s.virtualAccountId}`

  /** A period opened: the schedule moves on to the next. */
  const periodOpened = (s: ScheduleRow) =>
    sql`UPDATE billing_schedules SET next_k = next_k + 1, next_start_at = ${startOf(s, s.nextK + 1)}, periods_opened = periods_opened + 1,
      next_amount_kobo = NULL WHERE id = ${s.id}`

  /** Sets `paidAt` on the periods that have none yet. */
  const stampPaid = (periodIds: ReadonlyArray<string>, paidAt: Date) =>
    sql`UPDATE billing_periods SET paid_at = ${paidAt} WHERE id IN ${sql.in([...periodIds])} AND paid_at IS NULL`

  /** The account a new schedule bills, locked: active, in the tenant and mode. */
  const lockActiveAccount = (scope: Scope, accountRef: string) =>
    sql<{ id: string; expectedAmountKobo: number | null; amountPaidKobo: number }>`SELECT id, expected_amount_kobo, amount_paid_kobo
      FROM virtual_accounts WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account_ref = ${accountRef} AND status = 'Active'
      FOR UPDATE`

  const byReference = (scope: Scope, reference: string) =>
    sql<{ id: string; requestFingerprint: string }>`SELECT id, request_fingerprint FROM billing_schedules
      WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference}`

  /** The account's active or paused schedule, if any. */
  const liveScheduleOf = (virtualAccountId: string) =>
    sql<{ id: string }>`SELECT id FROM billing_schedules WHERE virtual_account_id = ${virtualAccountId} AND status IN ('Active', 'Paused')`

  /** Inserts an Active schedule anchored on the Lagos day of `nowMs`; no row back when the reference is taken. */
  const insertSchedule = (scope: Scope, n: NewSchedule) =>
    sql`INSERT INTO billing_schedules (id, tenant_id, mode, virtual_account_id, reference, request_fingerprint, interval, amount_kobo,
        due_offset_days, description, status, anchor_date, next_k, next_start_at, base_kobo, created_by)
      VALUES (${n.id}, ${scope.tenantId}, ${scope.mode}, ${n.virtualAccountId}, ${n.input.reference}, ${n.fingerprint}, ${n.input.interval}, ${n.input.amountKobo},
        ${n.input.dueOffsetDays ?? 0}, ${n.input.description ?? null}, 'Active', ${isoDate(lagosDateOf(n.nowMs))}::date, 0,
        ${new Date(lagosMidnight(lagosDateOf(n.nowMs)))},
        ${n.baseKobo}, ${n.actor})
      ON CONFLICT (tenant_id, mode, reference) DO NOTHING RETURNING id`

  const setNextAmount = (id: string, amountKobo: number) => sql`UPDATE billing_schedules SET next_amount_kobo = ${amountKobo} WHERE id = ${id}`

  const pause = (id: string) => sql`UPDATE billing_schedules SET status = 'Paused' WHERE id = ${id}`

  const resume = (id: string, nextK: number, nextStartAt: Date) =>
    sql`UPDATE billing_schedules SET status = 'Active', next_k = ${nextK}, next_start_at = ${nextStartAt} WHERE id = ${id}`

  /** A period cancelled: it keeps only what was paid of it. */
  const cancelPeriod = (periodId: string, paidKobo: number) =>
    sql`UPDATE billing_periods SET cancelled = true, amount_kobo = ${paidKobo} WHERE id = ${periodId}`

  /**
   * What cancelled periods still expected leaves the account's expected amount. Back to 0 only when the account expected
   * nothing before the schedule (base 0) and nothing of it was paid: it is open again (NULL), as it was; an expected
   * amount of 0 is no state of an account (paymentStateOf refuses it).
   */
  const removeExpected = (virtualAccountId: string, removed: number) =>
    sql`UPDATE virtual_accounts SET expected_amount_kobo = NULLIF(expected_amount_kobo - ${removed}, 0) WHERE id = ${virtualAccountId}`

  const cancel = (id: string) => sql`UPDATE billing_schedules SET status = 'Cancelled', cancelled_at = now() WHERE id = ${id}`

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
        SELECT id, tenant_id, mode, nuban, true AS opens FROM t WHERE status = 'Active' AND next_start_at <= billing_now
        UNION
        SELECT id, tenant_id, mode, nuban, false AS opens FROM p WHERE NOT cancelled AND (
          (amount_paid_kobo >= covered_at AND (NOT paid_notified OR paid_at IS NULL))
          OR (amount_paid_kobo < covered_at AND (paid_at IS NOT NULL OR (due_at <= billing_now AND NOT due_notified)
            OR (overdue_at <= billing_now AND NOT overdue_notified))))`.pipe(Effect.orDie)
      const key = (w: Work) => `${w.tenantId}|${w.mode}|${w.nuban}`
      // A schedule both opening and otherwise due comes twice from the UNION: once, opening.
      const byId = new Map<string, Work>()
      for (const w of rows) if (!byId.get(w.id)?.opens) byId.set(w.id, w)
      return [...byId.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    })

  return {
    inTransaction, sandboxOffsetMs, advanceSandboxClock, find, findOrFail, list, idOf, periodsOf, amountPaidOf, statesOf, lockSchedule,
    insertPeriod, addExpected, periodOpened, stampPaid, statesOfMany, lockSchedulesInOrder, markPaidMany, markUnpaidMany, lockActiveAccount, byReference, liveScheduleOf, insertSchedule,
    setNextAmount, pause, resume, cancelPeriod, removeExpected, cancel, dueWork
  } as const
}

export type BillingStore = ReturnType<typeof makeBillingStore>
