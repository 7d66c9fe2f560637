import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import type { BillingInterval } from "../../src/domain/Billing.js"
import {
  collectedSql, dayOf, daySql, type Receivable, receivablesOf, riskBandSql, scheduleDues
} from "../../src/domain/InsightRollups.js"
import type { Mode } from "../../src/domain/Mode.js"
import { anchorOf } from "../billing/BillingRows.js"

/** An account whose figures may have changed, and when (the day a receivable it fully pays counts as paid). */
export interface AccountTouch {
  readonly tenantId: string
  readonly mode: Mode
  readonly accountId: string
  readonly atMs: number
}

/** A billing schedule whose dues may have changed, and the billing day it changed on (its dues are kept from there). */
export interface ScheduleTouch {
  readonly tenantId: string
  readonly mode: Mode
  readonly scheduleId: string
  readonly day: number
}

interface DayDelta { tenantId: string; mode: string; key: string; day: number; count: number; amount: number }
interface DueDelta { tenantId: string; mode: string; dueDay: number; receivables: number; outstanding: number; expected: number; collected: number }
interface CustomerDelta { tenantId: string; mode: string; customerId: string; expected: number; outstanding: number }

/** Chunk sizes of a full build: transactions per statement, accounts and schedules per recompute. */
const BUILD_TX_CHUNK = 200_000
const BUILD_ACCOUNT_CHUNK = 2_000

/**
 * Keeps the insight roll-ups (migrations/0016_insights.ts) in step with the data, in the caller's transaction. Every
 * operation is a recompute and a difference: what a deposit, an account or a schedule contributes now, less what the
 * roll-ups hold for it, is added. So replaying an event, or building everything while events flow, changes nothing
 * twice. Work is set-based: one call handles a whole batch of the consumer's events in a handful of statements.
 * Concurrent callers touching one account or schedule are serialised by its row in `insight_accounts` /
 * `insight_schedules`; the additive rows are written in key order, so two callers cannot deadlock on them.
 */
export class Rollups extends Effect.Service<Rollups>()("services/insights/Rollups", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const addDays = (deltas: Iterable<DayDelta>) =>
      Effect.gen(function* () {
        const rows = [...deltas].filter((d) => d.count !== 0 || d.amount !== 0)
          .sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.mode.localeCompare(b.mode) || a.key.localeCompare(b.key) || a.day - b.day)
        if (rows.length === 0) return
        yield* sql`INSERT INTO insight_days (tenant_id, mode, key, day, count, amount_kobo)
          SELECT * FROM unnest(${rows.map((r) => r.tenantId)}::text[], ${rows.map((r) => r.mode)}::text[], ${rows.map((r) => r.key)}::text[],
            ${rows.map((r) => r.day)}::int[], ${rows.map((r) => r.count)}::bigint[], ${rows.map((r) => r.amount)}::bigint[])
          ON CONFLICT (tenant_id, mode, key, day) DO UPDATE SET count = insight_days.count + excluded.count,
            amount_kobo = insight_days.amount_kobo + excluded.amount_kobo`
      })

    /**
     * Each deposit counted once: its reconciliation status and risk band on its paid day (new deposits only), and its
     * `collected` contribution, corrected when its status changed since it was counted (a review's decision).
     */
    const applyTransactions = (ids: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        if (ids.length === 0) return
        const unique = [...new Set(ids)].sort((a, b) => a - b)
        // Deposits counted before: the collected contribution now against the one counted (rows locked).
        const changed = yield* sql<{ id: number; tenantId: string; mode: string; day: number; now: number; was: number; pendingNow: boolean; pendingWas: boolean }>`
          SELECT t.id, t.tenant_id, t.mode, ${sql.literal(daySql("t.paid_at"))} AS day,
            (${sql.literal(collectedSql("t"))}) AS now, x.collected_kobo AS was, t.status = 'PendingReview' AS pending_now, x.pending AS pending_was
          FROM insight_tx x JOIN transactions t ON t.id = x.id WHERE x.id = ANY(${unique}::bigint[]) ORDER BY x.id FOR UPDATE OF x`
        const moved = changed.filter((c) => Number(c.now) !== Number(c.was) || c.pendingNow !== c.pendingWas)
        if (moved.length > 0) {
          yield* sql`UPDATE insight_tx x SET collected_kobo = u.c, pending = u.p
            FROM unnest(${moved.map((m) => m.id)}::bigint[], ${moved.map((m) => m.now)}::bigint[], ${moved.map((m) => m.pendingNow)}::boolean[]) AS u(id, c, p)
            WHERE x.id = u.id`
          const deltas = new Map<string, DayDelta>()
          const add = (m: (typeof moved)[number], key: string, count: number, amount: number) => {
            const k = `${m.tenantId}|${m.mode}|${key}|${m.day}`
            const d = deltas.get(k) ?? { tenantId: m.tenantId, mode: m.mode, key, day: m.day, count: 0, amount: 0 }
            d.count += count
            d.amount += amount
            deltas.set(k, d)
          }
          for (const m of moved) {
            add(m, "collected", 0, Number(m.now) - Number(m.was))
            add(m, "pending", Number(m.pendingNow) - Number(m.pendingWas), 0)
          }
          yield* addDays(deltas.values())
        }
        const seen = new Set(changed.map((c) => Number(c.id)))
        const fresh = unique.filter((id) => !seen.has(id))
        if (fresh.length > 0) yield* countNew(sql`t.id = ANY(${fresh}::bigint[])`)
      })

    /** Counts the deposits the condition selects that are not counted yet: one statement, whatever their number. */
    const countNew = (where: Statement.Fragment) =>
      sql`WITH src AS (
            SELECT t.id, t.tenant_id, t.mode, ${sql.literal(daySql("t.paid_at"))} AS day, t.reconciliation_status, t.amount_kobo,
              ${sql.literal(riskBandSql("t"))} AS band,
              (${sql.literal(collectedSql("t"))}) AS collected, t.status = 'PendingReview' AS pending
            FROM transactions t WHERE ${where}
          ),
          ins AS (INSERT INTO insight_tx (id, collected_kobo, pending) SELECT id, collected, pending FROM src ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id)
        INSERT INTO insight_days (tenant_id, mode, key, day, count, amount_kobo)
        SELECT s.tenant_id, s.mode, k.key, s.day, sum(k.count), sum(k.amount)
        FROM src s JOIN ins USING (id)
          CROSS JOIN LATERAL (VALUES ('rs:' || s.reconciliation_status, 1, s.amount_kobo), ('risk:' || s.band, 1, 0::bigint),
            ('collected', 0, s.collected), ('pending', s.pending::int, 0::bigint)) AS k(key, count, amount)
        GROUP BY s.tenant_id, s.mode, k.key, s.day
        ORDER BY s.tenant_id, s.mode, k.key, s.day
        ON CONFLICT (tenant_id, mode, key, day) DO UPDATE SET count = insight_days.count + excluded.count,
          amount_kobo = insight_days.amount_kobo + excluded.amount_kobo`

    /**
     * Recomputes the receivables of each account (src/domain/InsightRollups.ts `receivablesOf`) and adds the difference
     * to the due-day and customer roll-ups. An account that is gone, or not yet active, has none.
     */
    const touchAccounts = (touches: ReadonlyArray<AccountTouch>) =>
      Effect.gen(function* () {
        if (touches.length === 0) return
        const byId = new Map<string, AccountTouch>()
        for (const t of touches) {
          const prev = byId.get(t.accountId)
          byId.set(t.accountId, prev && prev.atMs > t.atMs ? prev : t)
        }
        const list = [...byId.values()].sort((a, b) => (a.accountId < b.accountId ? -1 : 1))
        const ids = list.map((t) => t.accountId)
        // One recompute of an account at a time: its row here is locked first.
        yield* sql`INSERT INTO insight_accounts (account_id, tenant_id, mode)
          SELECT * FROM unnest(${ids}::text[], ${list.map((t) => t.tenantId)}::text[], ${list.map((t) => t.mode)}::text[])
          ON CONFLICT (account_id) DO UPDATE SET updated_at = now()`
        const accounts = yield* sql<{
          id: string; customerId: string; expectedAmountKobo: number | null; amountPaidKobo: number; createdAt: Date; expiryDateUtc: Date | null
        }>`SELECT id, customer_id, expected_amount_kobo, amount_paid_kobo, created_at, expiry_date_utc FROM virtual_accounts
          WHERE id = ANY(${ids}::text[]) AND status = 'Active'`
        const periods = yield* sql<{ accountId: string; amountKobo: number; dueAt: Date }>`
          SELECT s.virtual_account_id AS account_id, p.amount_kobo, p.due_at FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id
          WHERE s.virtual_account_id = ANY(${ids}::text[]) AND p.amount_kobo > 0 ORDER BY s.virtual_account_id, s.created_at, s.id, p.index`
        const old = yield* sql<{ accountId: string; seq: number; customerId: string; dueDay: number; amountKobo: number; collectedKobo: number; paidDay: number | null }>`
          SELECT account_id, seq, customer_id, due_day, amount_kobo, collected_kobo, paid_day FROM insight_receivables
          WHERE account_id = ANY(${ids}::text[]) ORDER BY account_id, seq`
        const periodsOf = new Map<string, Array<{ amountKobo: number; dueAtMs: number }>>()
        for (const p of periods) {
          const l = periodsOf.get(p.accountId) ?? []
          l.push({ amountKobo: Number(p.amountKobo), dueAtMs: p.dueAt.getTime() })
          periodsOf.set(p.accountId, l)
        }
        const oldOf = new Map<string, Array<(typeof old)[number]>>()
        for (const r of old) {
          const l = oldOf.get(r.accountId) ?? []
          l.push(r)
          oldOf.set(r.accountId, l)
        }
        const accountOf = new Map(accounts.map((a) => [a.id, a]))

        const dues = new Map<string, DueDelta>()
        const customers = new Map<string, CustomerDelta>()
        const upserts: Array<{ accountId: string; seq: number; customerId: string; dueDay: number; amountKobo: number; collectedKobo: number; paidDay: number | null }> = []
        const deletes: Array<{ accountId: string; seq: number }> = []
        const addDue = (t: AccountTouch, dueDay: number, sign: number, r: { amountKobo: number; collectedKobo: number }) => {
          const k = `${t.tenantId}|${t.mode}|${dueDay}`
          const d = dues.get(k) ?? { tenantId: t.tenantId, mode: t.mode, dueDay, receivables: 0, outstanding: 0, expected: 0, collected: 0 }
          d.receivables += sign
          d.outstanding += r.collectedKobo < r.amountKobo ? sign : 0
          d.expected += sign * r.amountKobo
          d.collected += sign * r.collectedKobo
          dues.set(k, d)
        }
        const addCustomer = (t: AccountTouch, customerId: string, sign: number, r: { amountKobo: number; collectedKobo: number }) => {
          const c = customers.get(customerId) ?? { tenantId: t.tenantId, mode: t.mode, customerId, expected: 0, outstanding: 0 }
          c.expected += sign * r.amountKobo
          c.outstanding += sign * (r.amountKobo - r.collectedKobo)
          customers.set(customerId, c)
        }
        for (const t of list) {
          const a = accountOf.get(t.accountId)
          const now: ReadonlyArray<Receivable> = a
            ? receivablesOf({
                expectedKobo: a.expectedAmountKobo === null ? null : Number(a.expectedAmountKobo),
                amountPaidKobo: Number(a.amountPaidKobo),
                createdAtMs: a.createdAt.getTime(),
                expiryMs: a.expiryDateUtc?.getTime() ?? null
              }, periodsOf.get(t.accountId) ?? [])
            : []
          const before = new Map((oldOf.get(t.accountId) ?? []).map((r) => [r.seq, { ...r, amountKobo: Number(r.amountKobo), collectedKobo: Number(r.collectedKobo) }]))
          for (const r of now) {
            const was = before.get(r.seq)
            before.delete(r.seq)
            const full = r.collectedKobo >= r.amountKobo
            const paidDay = !full ? null : was && was.collectedKobo >= was.amountKobo && was.paidDay !== null ? was.paidDay : dayOf(t.atMs)
            if (was && was.dueDay === r.dueDay && was.amountKobo === r.amountKobo && was.collectedKobo === r.collectedKobo &&
              was.paidDay === paidDay && was.customerId === a!.customerId) continue
            if (was) {
              addDue(t, was.dueDay, -1, was)
              addCustomer(t, was.customerId, -1, was)
            }
            addDue(t, r.dueDay, 1, r)
            addCustomer(t, a!.customerId, 1, r)
            upserts.push({ accountId: t.accountId, seq: r.seq, customerId: a!.customerId, dueDay: r.dueDay, amountKobo: r.amountKobo, collectedKobo: r.collectedKobo, paidDay })
          }
          for (const was of before.values()) {
            addDue(t, was.dueDay, -1, was)
            addCustomer(t, was.customerId, -1, was)
            deletes.push({ accountId: t.accountId, seq: was.seq })
          }
        }
        if (deletes.length > 0) {
          yield* sql`DELETE FROM insight_receivables r USING unnest(${deletes.map((d) => d.accountId)}::text[], ${deletes.map((d) => d.seq)}::int[]) AS u(a, s)
            WHERE r.account_id = u.a AND r.seq = u.s`
        }
        if (upserts.length > 0) {
          yield* sql`INSERT INTO insight_receivables (account_id, seq, customer_id, due_day, amount_kobo, collected_kobo, paid_day)
            SELECT * FROM unnest(${upserts.map((u) => u.accountId)}::text[], ${upserts.map((u) => u.seq)}::int[], ${upserts.map((u) => u.customerId)}::text[],
              ${upserts.map((u) => u.dueDay)}::int[], ${upserts.map((u) => u.amountKobo)}::bigint[], ${upserts.map((u) => u.collectedKobo)}::bigint[],
              ${upserts.map((u) => u.paidDay)}::int[])
            ON CONFLICT (account_id, seq) DO UPDATE SET customer_id = excluded.customer_id, due_day = excluded.due_day, amount_kobo = excluded.amount_kobo,
              collected_kobo = excluded.collected_kobo, paid_day = excluded.paid_day`
        }
        const dueRows = [...dues.values()].filter((d) => d.receivables !== 0 || d.outstanding !== 0 || d.expected !== 0 || d.collected !== 0)
          .sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.mode.localeCompare(b.mode) || a.dueDay - b.dueDay)
        if (dueRows.length > 0) {
          yield* sql`INSERT INTO insight_due_days (tenant_id, mode, due_day, receivables, outstanding_count, expected_kobo, collected_kobo)
            SELECT * FROM unnest(${dueRows.map((d) => d.tenantId)}::text[], ${dueRows.map((d) => d.mode)}::text[], ${dueRows.map((d) => d.dueDay)}::int[],
              ${dueRows.map((d) => d.receivables)}::bigint[], ${dueRows.map((d) => d.outstanding)}::bigint[], ${dueRows.map((d) => d.expected)}::bigint[],
              ${dueRows.map((d) => d.collected)}::bigint[])
            ON CONFLICT (tenant_id, mode, due_day) DO UPDATE SET receivables = insight_due_days.receivables + excluded.receivables,
              outstanding_count = insight_due_days.outstanding_count + excluded.outstanding_count,
              expected_kobo = insight_due_days.expected_kobo + excluded.expected_kobo,
              collected_kobo = insight_due_days.collected_kobo + excluded.collected_kobo`
        }
        const customerRows = [...customers.values()].filter((c) => c.expected !== 0 || c.outstanding !== 0)
          .sort((a, b) => (a.customerId < b.customerId ? -1 : 1))
        if (customerRows.length > 0) {
          yield* sql`INSERT INTO insight_customers (customer_id, tenant_id, mode, expected_kobo, outstanding_kobo)
            SELECT * FROM unnest(${customerRows.map((c) => c.customerId)}::text[], ${customerRows.map((c) => c.tenantId)}::text[],
              ${customerRows.map((c) => c.mode)}::text[], ${customerRows.map((c) => c.expected)}::bigint[], ${customerRows.map((c) => c.outstanding)}::bigint[])
            ON CONFLICT (customer_id) DO UPDATE SET expected_kobo = insight_customers.expected_kobo + excluded.expected_kobo,
              outstanding_kobo = insight_customers.outstanding_kobo + excluded.outstanding_kobo`
        }
      })

    /** Recomputes each schedule's dues from its billing day (`scheduleDues`) and adds the difference to `sched`. */
    const touchSchedules = (touches: ReadonlyArray<ScheduleTouch>) =>
      Effect.gen(function* () {
        if (touches.length === 0) return
        const byId = new Map<string, ScheduleTouch>()
        for (const t of touches) {
          const prev = byId.get(t.scheduleId)
          byId.set(t.scheduleId, prev && prev.day > t.day ? prev : t)
        }
        const list = [...byId.values()].sort((a, b) => (a.scheduleId < b.scheduleId ? -1 : 1))
        const ids = list.map((t) => t.scheduleId)
        const old = yield* sql<{ scheduleId: string; days: Array<number>; amounts: Array<number | string> }>`
          INSERT INTO insight_schedules (schedule_id, tenant_id, mode, days, amounts)
          SELECT s, t, m, '{}', '{}' FROM unnest(${ids}::text[], ${list.map((t) => t.tenantId)}::text[], ${list.map((t) => t.mode)}::text[]) AS u(s, t, m)
          ON CONFLICT (schedule_id) DO UPDATE SET days = insight_schedules.days RETURNING schedule_id, days, amounts`
        const schedules = yield* sql<{
          id: string; status: "Active" | "Paused" | "Cancelled"; interval: BillingInterval; anchorDate: string; dueOffsetDays: number;
          amountKobo: number; nextAmountKobo: number | null; nextK: number
        }>`SELECT id, status, interval, anchor_date::text AS anchor_date, due_offset_days, amount_kobo, next_amount_kobo, next_k
          FROM billing_schedules WHERE id = ANY(${ids}::text[])`
        const opened = yield* sql<{ scheduleId: string; amountKobo: number; dueAt: Date }>`
          SELECT schedule_id, amount_kobo, due_at FROM billing_periods WHERE schedule_id = ANY(${ids}::text[]) AND NOT cancelled AND amount_kobo > 0`
        const scheduleOf = new Map(schedules.map((s) => [s.id, s]))
        const openedOf = new Map<string, Array<{ amountKobo: number; dueAtMs: number }>>()
        for (const p of opened) openedOf.set(p.scheduleId, [...(openedOf.get(p.scheduleId) ?? []), { amountKobo: Number(p.amountKobo), dueAtMs: p.dueAt.getTime() }])
        const oldOf = new Map(old.map((o) => [o.scheduleId, o]))
        const deltas = new Map<string, DayDelta>()
        const add = (t: ScheduleTouch, day: number, amount: number) => {
          const k = `${t.tenantId}|${t.mode}|${day}`
          const d = deltas.get(k) ?? { tenantId: t.tenantId, mode: t.mode, key: "sched", day, count: 0, amount: 0 }
          d.amount += amount
          deltas.set(k, d)
        }
        const next: Array<{ id: string; days: Array<number>; amounts: Array<number> }> = []
        for (const t of list) {
          const s = scheduleOf.get(t.scheduleId)
          const dues = s
            ? scheduleDues({
                status: s.status, interval: s.interval, anchor: anchorOf(s), dueOffsetDays: s.dueOffsetDays,
                amountKobo: Number(s.amountKobo), nextAmountKobo: s.nextAmountKobo === null ? null : Number(s.nextAmountKobo), nextK: s.nextK,
                opened: openedOf.get(s.id) ?? []
              }, t.day)
            : []
          const was = oldOf.get(t.scheduleId)
          if (was) was.days.forEach((day, i) => add(t, day, -Number(was.amounts[i])))
          for (const d of dues) add(t, d.day, d.amountKobo)
          next.push({ id: t.scheduleId, days: dues.map((d) => d.day), amounts: dues.map((d) => d.amountKobo) })
        }
        for (const n of next) yield* sql`UPDATE insight_schedules SET days = ${n.days}::int[], amounts = ${n.amounts}::bigint[] WHERE schedule_id = ${n.id}`
        yield* addDays(deltas.values())
      })

    /**
     * Builds the roll-ups from the data already here (a deployment that had data before the roll-ups existed, or a
     * seeded benchmark): every deposit not counted yet, every active account, every schedule. Each chunk is its own
     * transaction; the consumer may run meanwhile (everything is a recompute and a difference).
     */
    const build = (billingDayOf: (tenantId: string, mode: Mode) => Effect.Effect<number>) =>
      Effect.gen(function* () {
        const [bounds] = yield* sql<{ lo: number | null; hi: number | null }>`SELECT min(id) AS lo, max(id) AS hi FROM transactions`
        if (bounds?.lo !== null && bounds?.lo !== undefined) {
          for (let lo = Number(bounds.lo); lo <= Number(bounds.hi); lo += BUILD_TX_CHUNK) {
            yield* sql.withTransaction(countNew(sql`t.id >= ${lo} AND t.id < ${lo + BUILD_TX_CHUNK}`))
          }
        }
        let after = ""
        for (;;) {
          const chunk = yield* sql<{ id: string; tenantId: string; mode: Mode; lastPaidAt: Date | null }>`
            SELECT va.id, va.tenant_id, va.mode,
              (SELECT max(t.paid_at) FROM transactions t WHERE t.virtual_account_id = va.id AND t.kind = 'inflow') AS last_paid_at
            FROM virtual_accounts va WHERE va.id > ${after} ORDER BY va.id LIMIT ${BUILD_ACCOUNT_CHUNK}`
          if (chunk.length === 0) break
          after = chunk[chunk.length - 1]!.id
          yield* sql.withTransaction(touchAccounts(chunk.map((a) => ({
            tenantId: a.tenantId, mode: a.mode, accountId: a.id, atMs: a.lastPaidAt?.getTime() ?? Date.now()
          }))))
        }
        after = ""
        const days = new Map<string, number>()
        for (;;) {
          const chunk = yield* sql<{ id: string; tenantId: string; mode: Mode }>`
            SELECT id, tenant_id, mode FROM billing_schedules WHERE id > ${after} ORDER BY id LIMIT ${BUILD_ACCOUNT_CHUNK}`
          if (chunk.length === 0) break
          after = chunk[chunk.length - 1]!.id
          const touches: Array<ScheduleTouch> = []
          for (const s of chunk) {
            const k = `${s.tenantId}|${s.mode}`
            if (!days.has(k)) days.set(k, yield* billingDayOf(s.tenantId, s.mode))
            touches.push({ tenantId: s.tenantId, mode: s.mode, scheduleId: s.id, day: days.get(k)! })
          }
          yield* sql.withTransaction(touchSchedules(touches))
        }
      }).pipe(Effect.orDie)

    return {
      applyTransactions: (ids: ReadonlyArray<number>) => applyTransactions(ids).pipe(Effect.orDie),
      touchAccounts: (touches: ReadonlyArray<AccountTouch>) => touchAccounts(touches).pipe(Effect.orDie),
      touchSchedules: (touches: ReadonlyArray<ScheduleTouch>) => touchSchedules(touches).pipe(Effect.orDie),
      build
    } as const
  })
}) {}
