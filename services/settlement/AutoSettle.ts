import { Effect, Layer } from "effect"
import { passesEvery } from "../Passes.js"
import { type RunSummary, SettlementRunSettings } from "./SettlementRunSettings.js"
import { Settlements } from "./Settlements.js"

/**
 * The auto-settle worker: on a `Schedule` (every `intervalMs` of the fiber's Clock), one pass over the tenants with
 * autoSettle and a settlement account. The schedule reads the ambient Clock, so a test drives the worker with the
 * TestClock; each pass itself runs on the wall clock (its provider timeouts and leases are real time). Every worker
 * process may run it: a tenant's run lease lets one pass at a time settle a tenant, and each account's claim locks
 * its account row, so nothing is settled twice.
 */
export const autoSettleLoop = (onPass: (summaries: ReadonlyArray<RunSummary>) => Effect.Effect<void> = () => Effect.void) =>
  Effect.gen(function* () {
    const settlements = yield* Settlements
    const settings = yield* SettlementRunSettings
    return yield* passesEvery("auto-settle", settings.intervalMs, settlements.runDue(), onPass)
  })

export const AutoSettleLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    if (!(yield* SettlementRunSettings).worker) return
    yield* Effect.forkScoped(autoSettleLoop())
  })
)
