import { Effect } from "effect"
import { Conflict, NotFound } from "../../src/contract/Problems.js"
import { periodsStartedBy } from "../../src/domain/Billing.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import { paymentStateOf } from "../../src/domain/Reconciliation.js"
import type { BillingCatchUp } from "./BillingCatchUp.js"
import { anchorOf, type CreateSchedule, fingerprintOf, reused, startOf, toSchedule } from "./BillingRows.js"
import type { BillingStore } from "./BillingStore.js"

/**
 * A schedule's life: create, the next period's amount, pause, resume and cancel. Each is one transaction with the
 * account row, then the schedule row locked. Built inside the Billing service's layer (services/billing/Billing.ts).
 */
export const makeBillingSchedules = (store: BillingStore, catchUp: BillingCatchUp) => {
  const { inTransaction, find, lockSchedule } = store
  const { nowFor, insightsChanged, syncLocked } = catchUp

  const create = Effect.fn("Billing.create")(function* (scope: Scope, input: CreateSchedule, actor: string) {
    const fingerprint = fingerprintOf(input)
    return yield* inTransaction(Effect.gen(function* () {
      const [va] = yield* store.lockActiveAccount(scope, input.accountRef)
      if (!va) return yield* new NotFound({ code: "virtual_account_not_found", message: `No virtual account ${JSON.stringify(input.accountRef)} in this tenant and mode.` })
      const [same] = yield* store.byReference(scope, input.reference)
      if (same) {
        if (same.requestFingerprint !== fingerprint) return yield* reused(input.reference)
        return { created: false, schedule: toSchedule((yield* find(scope, same.id))!) }
      }
      const [live] = yield* store.liveScheduleOf(va.id)
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
      const inserted = yield* store.insertSchedule(scope, {
        id, virtualAccountId: va.id, fingerprint, input, nowMs, baseKobo: va.expectedAmountKobo ?? va.amountPaidKobo, actor
      })
      // The same reference taken meanwhile for another account (this account's row lock does not cover that).
      if (inserted.length === 0) return yield* reused(input.reference)
      const s = yield* syncLocked((yield* find(scope, id, true))!, nowMs)
      return { created: true, schedule: toSchedule((yield* find(scope, s.id))!) }
    }))
  })

  const cancelled = (id: string) => new Conflict({ code: "schedule_cancelled", message: `Schedule ${id} is cancelled: that is permanent. Create a new one.` })

  const setNextAmount = Effect.fn("Billing.setNextAmount")(function* (scope: Scope, id: string, amountKobo: number) {
    return yield* inTransaction(Effect.gen(function* () {
      const s = yield* lockSchedule(scope, id)
      if (s.status === "Cancelled") return yield* cancelled(id)
      yield* store.setNextAmount(id, amountKobo)
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
        yield* store.pause(id)
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
        yield* store.resume(id, nextK, startOf(s, nextK))
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
      for (const { row, state } of yield* store.statesOf(s, yield* nowFor(scope))) {
        if (row.cancelled || state.outstandingKobo === 0) continue
        removed += state.outstandingKobo
        yield* store.cancelPeriod(row.id, state.paidKobo)
      }
      if (removed > 0) yield* store.removeExpected(s.virtualAccountId, removed)
      yield* store.cancel(id)
      yield* insightsChanged(s)
      return toSchedule((yield* find(scope, id))!)
    }))
  })

  return { create, setNextAmount, pause, resume, cancel } as const
}
