import { Context, Effect, Layer } from "effect"
import { passesEvery } from "../Passes.js"
import { integerFromEnv } from "../../src/EnvInteger.js"
import { Billing } from "./Billing.js"

export interface BillingWorkerSettingsShape {
  /** How often the billing clock brings every schedule up to time (opens periods, sends due/paid/overdue). */
  readonly intervalMs: number
  /** Whether this process runs the billing clock (tests run their own on a TestClock). */
  readonly worker: boolean
}

export class BillingWorkerSettings extends Context.Reference<BillingWorkerSettings>()("services/billing/BillingWorkerSettings", {
  defaultValue: (): BillingWorkerSettingsShape => ({ intervalMs: integerFromEnv("BILLING_INTERVAL_MS", 30_000, 1), worker: true })
}) {}

/**
 * The billing clock: on a `Schedule` of the fiber's Clock (a test forks it on a TestClock), one pass over the schedules
 * (`Billing.tick`); the pass itself runs on the wall clock, and reads billing time from `BillingClock`. Every worker
 * process may run it: each schedule is brought up to time under its account's and its own row lock.
 */
export const billingPassesLoop = (onPass: (schedules: number) => Effect.Effect<void> = () => Effect.void) =>
  Effect.gen(function* () {
    const billing = yield* Billing
    const settings = yield* BillingWorkerSettings
    return yield* passesEvery("billing clock", settings.intervalMs, billing.tick(), onPass)
  })

export const BillingPassesLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    if (!(yield* BillingWorkerSettings).worker) return
    yield* Effect.forkScoped(billingPassesLoop())
  })
)
