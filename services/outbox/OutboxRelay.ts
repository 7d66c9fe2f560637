import { Effect } from "effect"
import { ConsumerRunnerLive, type Consumer, type RunnerOptions } from "./Runner.js"
import { RELAY } from "./Registry.js"
import { ReconciledBus } from "../../streams/ReconciledBus.js"

/** Events per pass, and the idle poll: what the relay used before it ran on the consumer runner. */
export const RELAY_OPTIONS: Partial<RunnerOptions> = { batchSize: 500, pollMs: 200 }

/**
 * The outbox relay as a consumer: publishes committed events to the RECONCILED stream, pipelined, in id order. Only
 * the unbroken run of published events is done, so nothing is skipped (a later event that did go is published again
 * next pass and de-duplicated by its event id); the rest stay pending, untouched, and go again on the next pass.
 */
export const relayConsumer: Consumer<ReconciledBus> = {
  ...RELAY,
  withEnvelope: true,
  handle: (events) =>
    Effect.gen(function* () {
      const bus = yield* ReconciledBus
      // Not before the NATS link is up (a worker just started, or NATS away): the rows wait, untouched and unreported
      // (a restarted worker used to report "6 of 6 events not published" here).
      if (!(yield* bus.ready)) return 0
      const acked = yield* bus.publishMany(events)
      const stop = acked.indexOf(false)
      if (stop < 0) return events.length
      yield* Effect.logWarning(`outbox relay: ${acked.filter((ok) => !ok).length} of ${events.length} events not published; will retry`)
      return stop
    })
}

export const OutboxRelayLive = ConsumerRunnerLive(relayConsumer, RELAY_OPTIONS)
