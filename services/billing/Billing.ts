import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Outbox } from "../outbox/Outbox.js"
import { makeSwappableClock } from "../Passes.js"
import { makeBillingCatchUp } from "./BillingCatchUp.js"
import { makeBillingReads } from "./BillingReads.js"
import { makeBillingSchedules } from "./BillingSchedules.js"
import { makeBillingStore } from "./BillingStore.js"

export type { AccountKey } from "./BillingStore.js"

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
 *
 * Its parts: the SQL (BillingStore.ts), billing time and the catch-up passes (BillingCatchUp.ts), a schedule's life
 * (BillingSchedules.ts) and the reads (BillingReads.ts).
 */
export class Billing extends Effect.Service<Billing>()("services/billing/Billing", {
  effect: Effect.gen(function* () {
    const store = makeBillingStore(yield* SqlClient.SqlClient)
    const catchUp = makeBillingCatchUp(store, yield* Outbox, yield* BillingClock)
    const { create, setNextAmount, pause, resume, cancel } = makeBillingSchedules(store, catchUp)
    const { get, list, periods } = makeBillingReads(store, catchUp)
    const { tick, syncAccounts, advanceSandbox, sandboxTime, nowFor } = catchUp
    return { create, get, list, periods, setNextAmount, pause, resume, cancel, tick, syncAccounts, advanceSandbox, sandboxTime, nowFor } as const
  })
}) {}
