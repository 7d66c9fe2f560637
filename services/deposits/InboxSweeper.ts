import { Effect, Layer } from "effect"
import { pacedPasses } from "../../src/Pacing.js"
import { envelopeOf, Inbox } from "./Inbox.js"
import { DepositBus } from "../../streams/DepositBus.js"

/** Every 2 s while it finds rows (or the bus is down); after empty passes the wait doubles up to 16 s. */
export const SWEEP_PACE = { baseMs: 2_000, idleMaxMs: 16_000 } as const
const SWEEP_BATCH = 1000

/** Re-feeds inbox rows the bus may have lost (NATS was down, or a message gave up), so an outage delays and loses nothing. */
export const sweepOnce = Effect.gen(function* () {
  const inbox = yield* Inbox
  const bus = yield* DepositBus
  const rows = yield* inbox.unreconciled(SWEEP_BATCH)
  if (rows.length === 0) return 0
  yield* bus.publish(rows.map(envelopeOf))
  yield* inbox.markPublished(rows.map((r) => r.id))
  yield* Effect.logInfo(`sweeper re-fed ${rows.length} unreconciled inbox rows`)
  return rows.length
})

/**
 * Paced by SWEEP_PACE. While the bus is unavailable (NATS down) each pass fails; the first failure of a run is logged
 * as a warning and then one a minute, not one every two seconds for the whole outage.
 */
export const InboxSweeperLive = Layer.scopedDiscard(
  Effect.suspend(() => {
    let failures = 0
    const pass = sweepOnce.pipe(
      Effect.tap(() => Effect.sync(() => void (failures = 0))),
      Effect.catchAll((e) =>
        (failures++ % 30 === 0 ? Effect.logWarning(`sweeper could not publish; will retry: ${e.message}`) : Effect.logDebug(`sweeper could not publish: ${e.message}`)).pipe(Effect.as(-1))
      )
    )
    // A failed pass (-1) counts as work found: it is tried again after the base wait.
    return pacedPasses(SWEEP_PACE, pass, (n) => n !== 0, { onFailure: (cause) => Effect.logError("inbox sweeper pass failed", cause) }).pipe(Effect.forkScoped)
  })
)
