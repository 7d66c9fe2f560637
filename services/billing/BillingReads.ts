import { Effect } from "effect"
import { BadRequest } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import type { PeriodState } from "../../src/domain/Billing.js"
import type { Scope } from "../../src/domain/Mode.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import type { BillingCatchUp } from "./BillingCatchUp.js"
import { type PeriodRow, type ScheduleRow, toPeriod, toSchedule } from "./BillingRows.js"
import type { BillingStore } from "./BillingStore.js"

/** What billing answers: a schedule, a page of schedules, a page of a schedule's periods. Built inside the Billing service's layer. */
export const makeBillingReads = (store: BillingStore, catchUp: BillingCatchUp) => {
  const get = Effect.fn("Billing.get")(function* (scope: Scope, id: string) {
    return toSchedule(yield* store.findOrFail(scope, id))
  })

  const list = Effect.fn("Billing.list")(function* (scope: Scope, page: PageRequest) {
    const after = yield* cursorId(page, "id", (id) => store.idOf(scope, id))
    const limit = limitOf(page)
    const rows = yield* store.list(scope, after, limit)
    return pageOf(rows.map(toSchedule), limit - 1)
  })

  const unstamped = ({ row, state }: { readonly row: PeriodRow; readonly state: PeriodState }) => state.status === "Paid" && row.paidAt === null

  /**
   * The schedule's periods and their states at `nowMs`, for a read: a period that reads `Paid` always has its
   * `paidAt`. When a deposit paid it a moment ago and neither the billing consumer nor the clock's pass has seen it
   * yet, this read is the first to: it sets `paidAt` to now, under the account's and the schedule's row locks (the
   * schedule's is the one the consumer marks under, so it is set once; the account's keeps the money it was read from
   * put while it is), and they keep it and send the paid event with it.
   */
  const statesForRead = (s: ScheduleRow, nowMs: number) =>
    Effect.gen(function* () {
      const all = yield* store.statesOf(s, nowMs)
      if (!all.some(unstamped)) return all
      return yield* store.inTransaction(Effect.gen(function* () {
        // Account row, then schedule row (the lock order): the billing consumer marks periods under the schedule row alone.
        yield* store.lockSchedule({ tenantId: s.tenantId, mode: s.mode }, s.id).pipe(Effect.orDie)
        const locked = yield* store.statesOf(s, nowMs)
        const ids = new Set(locked.filter(unstamped).map(({ row }) => row.id))
        if (ids.size === 0) return locked
        const paidAt = new Date(nowMs)
        yield* store.stampPaid([...ids], paidAt)
        return locked.map((p) => (ids.has(p.row.id) ? { row: { ...p.row, paidAt }, state: p.state } : p))
      }))
    })

  /** Most recent first. */
  const periods = Effect.fn("Billing.periods")(function* (scope: Scope, id: string, page: PageRequest) {
    const s = yield* store.findOrFail(scope, id)
    const all = yield* statesForRead(s, yield* catchUp.nowFor(scope))
    const newest = all.map(({ row, state }) => toPeriod(row, state)).reverse()
    const start = page.startingAfter === undefined ? 0 : newest.findIndex((p) => p.id === page.startingAfter) + 1
    if (page.startingAfter !== undefined && start === 0) {
      return yield* new BadRequest({ code: "unknown_starting_after", message: `startingAfter ${JSON.stringify(page.startingAfter)} is not the id of a period of this schedule.` })
    }
    const limit = limitOf(page)
    return pageOf(newest.slice(start, start + limit), limit - 1)
  })

  return { get, list, periods } as const
}
