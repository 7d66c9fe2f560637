import { Effect, Layer, Ref } from "effect"
import { pacedPasses } from "../../src/Pacing.js"
import { envelopeOf, Inbox, type SweepCeiling } from "./Inbox.js"
import { DepositBus } from "../../streams/DepositBus.js"
import { outageLog } from "../../src/OutageLog.js"

/** Every 2 s while it finds rows (or the bus is down); after empty passes the wait doubles up to 16 s. */
export const SWEEP_PACE = { baseMs: 2_000, idleMaxMs: 16_000 } as const
const SWEEP_BATCH = 1000

/**
 * Re-feeds inbox rows the bus may have lost (NATS was down, or a message gave up), so an outage delays and loses
 * nothing. Each pass first moves the sweep mark up with the ceiling the pass before it saw (`ceiling`: this sweeper's
 * own, so a new process starts its mark's advance afresh), then reads from the mark up.
 */
export const sweepOnce = (ceiling: Ref.Ref<SweepCeiling | undefined>) => Effect.gen(function* () {
  const inbox = yield* Inbox
  const bus = yield* DepositBus
  yield* Ref.set(ceiling, yield* inbox.advanceSweepMark(yield* Ref.get(ceiling)))
  const rows = yield* inbox.unreconciled(SWEEP_BATCH)
  if (rows.length === 0) return 0
  yield* bus.publish(rows.map(envelopeOf))
  yield* inbox.markPublished(rows.map((r) => r.id))
  yield* Effect.logInfo(`sweeper re-fed ${rows.length} unreconciled inbox rows`)
  return rows.length
})

/**
 * Paced by SWEEP_PACE. While the bus is unavailable (NATS down) or Postgres is, each pass fails: one warning when that
 * begins and one line when it ends (src/OutageLog.ts), not one every two seconds for the whole outage.
 */
export const InboxSweeperLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const outages = yield* outageLog("inbox sweeper", "sweeps")
    // The bus unavailable (NATS down): the pass fails with a BusError, which the log reads as NATS being away.
    const ceiling = yield* Ref.make<SweepCeiling | undefined>(undefined)
    return yield* pacedPasses(SWEEP_PACE, sweepOnce(ceiling), (n) => n !== 0, { outages }).pipe(Effect.forkScoped)
  })
)

