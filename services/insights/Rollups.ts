import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dayOf, type Receivable, receivablesOf, scheduleDues } from "../../src/domain/InsightRollups.js"
import type { Mode } from "../../src/domain/Mode.js"
import { anchorOf } from "../billing/BillingRows.js"
import { type CursorPosition, type CustomerDelta, type DayDelta, type DueDelta, makeRollupStore, type ReceivableRow } from "./RollupStore.js"

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

/** Chunk sizes of a full build: transactions per statement, accounts and schedules per recompute. */
const BUILD_TX_CHUNK = 200_000
const BUILD_ACCOUNT_CHUNK = 2_000

/**
 * Keeps the insight roll-ups (migrations/0016_insights.ts) in step with the data, in the caller's transaction. Every
 * operation is a recompute and a difference: what a deposit, an account or a schedule contributes now, less what the
 * roll-ups hold for it, is added. So replaying an event, or building everything while events flow, changes nothing
 * twice. Work is set-based: one call handles a whole batch of the consumer's events in a handful of statements.
 * Every operation first takes the roll-ups' writer lock (the insights consumer's turn: RollupStore.ts `writerLock`), so
 * the consumer's passes and the one-time build's chunks never interleave. The SQL is RollupStore.ts; this is the
 * recompute and the difference.
 */
export class Rollups extends Effect.Service<Rollups>()("services/insights/Rollups", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = makeRollupStore(sql)

    const addDays = (deltas: Iterable<DayDelta>) =>
      Effect.gen(function* () {
        const rows = [...deltas].filter((d) => d.count !== 0 || d.amount !== 0)
          .sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.mode.localeCompare(b.mode) || a.key.localeCompare(b.key) || a.day - b.day)
        if (rows.length === 0) return
        yield* store.addDays(rows)
      })

    /**
     * Each deposit counted once: its reconciliation status and risk band on its paid day (new deposits only), and its
     * `collected` contribution, corrected when its status changed since it was counted (a review's decision). The same
     * statement as the cursor's window (RollupStore.ts `countSelected`), over the given ids.
     */
    const applyTransactions = (ids: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        if (ids.length === 0) return
        yield* store.writerLock()
        yield* store.countIds(ids)
      })

    /**
     * The insights cursor's batch: the window after `after` and below `horizon` (at most `limit` rows) counted as
     * `applyTransactions` counts them, in one statement (RollupStore.ts `countSelected`). Answers the rows counted, the
     * last one's (xid, id), and the accounts they touch, for `touchAccounts`.
     */
    const countWindow = (after: CursorPosition, horizon: string, limit: number) =>
      Effect.gen(function* () {
        yield* store.writerLock()
        const rows = yield* store.countWindow(after, horizon, limit)
        const touches: Array<AccountTouch> = []
        let counted = 0
        let last: CursorPosition | undefined
        for (const r of rows) {
          if (r.accountId === null) {
            counted = r.counted
            if (r.lastXid !== null && r.lastId !== null) last = { xid: r.lastXid, txId: Number(r.lastId) }
          } else touches.push({ tenantId: r.tenantId!, mode: r.mode!, accountId: r.accountId, atMs: r.at!.getTime() })
        }
        return { counted, last, touches }
      })

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
        yield* store.writerLock()
        const accounts = yield* store.activeAccounts(ids)
        const periods = yield* store.billedPeriods(ids)
        const old = yield* store.countedReceivables(ids)
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
        const upserts: Array<ReceivableRow> = []
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
        if (deletes.length > 0) yield* store.deleteReceivables(deletes)
        if (upserts.length > 0) yield* store.upsertReceivables(upserts)
        const dueRows = [...dues.values()].filter((d) => d.receivables !== 0 || d.outstanding !== 0 || d.expected !== 0 || d.collected !== 0)
          .sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.mode.localeCompare(b.mode) || a.dueDay - b.dueDay)
        if (dueRows.length > 0) yield* store.addDueDays(dueRows)
        const customerRows = [...customers.values()].filter((c) => c.expected !== 0 || c.outstanding !== 0)
          .sort((a, b) => (a.customerId < b.customerId ? -1 : 1))
        if (customerRows.length > 0) yield* store.addCustomers(customerRows)
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
        yield* store.writerLock()
        const old = yield* store.lockSchedules(list)
        const schedules = yield* store.schedulesOf(ids)
        const opened = yield* store.openedPeriods(ids)
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
        for (const n of next) yield* store.setScheduleDues(n.id, n.days, n.amounts)
        yield* addDays(deltas.values())
      })

    /**
     * Builds the roll-ups from the data already here (a deployment that had data before the roll-ups existed, or a
     * seeded benchmark): every deposit from before the cursor (no stamp) not counted yet, every active account, every
     * schedule. Each chunk is its own transaction, under the writer lock; the consumer may run between them (everything
     * is a recompute and a difference). The stamped deposits are the cursor's: `buildOnce` runs it to the horizon.
     */
    const build = (billingDayOf: (tenantId: string, mode: Mode) => Effect.Effect<number>) =>
      Effect.gen(function* () {
        const [bounds] = yield* store.transactionIdBounds()
        if (bounds?.lo !== null && bounds?.lo !== undefined) {
          for (let lo = Number(bounds.lo); lo <= Number(bounds.hi); lo += BUILD_TX_CHUNK) {
            yield* sql.withTransaction(Effect.zipRight(store.writerLock(), store.countNewRange(lo, lo + BUILD_TX_CHUNK)))
          }
        }
        let after = ""
        for (;;) {
          const chunk = yield* store.accountsAfter(after, BUILD_ACCOUNT_CHUNK)
          if (chunk.length === 0) break
          after = chunk[chunk.length - 1]!.id
          yield* sql.withTransaction(touchAccounts(chunk.map((a) => ({
            tenantId: a.tenantId, mode: a.mode, accountId: a.id, atMs: a.lastPaidAt?.getTime() ?? Date.now()
          }))))
        }
        after = ""
        const days = new Map<string, number>()
        for (;;) {
          const chunk = yield* store.schedulesAfter(after, BUILD_ACCOUNT_CHUNK)
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
      countWindow: (after: CursorPosition, horizon: string, limit: number) => countWindow(after, horizon, limit).pipe(Effect.orDie),
      touchAccounts: (touches: ReadonlyArray<AccountTouch>) => touchAccounts(touches).pipe(Effect.orDie),
      touchSchedules: (touches: ReadonlyArray<ScheduleTouch>) => touchSchedules(touches).pipe(Effect.orDie),
      build
    } as const
  })
}) {}
