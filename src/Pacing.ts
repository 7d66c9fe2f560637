import { type Cause, Duration, Effect } from "effect"
import type { OutageLog } from "./OutageLog.js"

/** How a paced loop waits (see pacedPasses). */
export interface Pace {
  /** The wait after a pass that found work. */
  readonly baseMs: number
  /** The longest wait: after passes that found nothing the wait doubles from baseMs up to this. */
  readonly idleMaxMs: number
}

/** The wait after a pass: baseMs when it found work, else twice the last wait, within [baseMs, idleMaxMs]. */
export const nextWaitMs = (pace: Pace, lastWaitMs: number, foundWork: boolean) =>
  foundWork ? pace.baseMs : Math.min(Math.max(pace.idleMaxMs, pace.baseMs), Math.max(pace.baseMs, lastWaitMs * 2))

/**
 * A background pass that is quiet at rest: it runs `pass`, then waits `baseMs` while it finds work and, after passes
 * that find none, twice as long each time up to `idleMaxMs` (issue 33: at rest the service's periodic passes cost a
 * few per cent of a core). `wake`, when given, ends a wait early (something this process did made work for it). The
 * waits are on the fiber's Clock (a test drives them with a TestClock). A failed pass is reported to the component's
 * `outages` log (one warning when an outage begins, one line when it ends, an error with its cause for a bug:
 * src/OutageLog.ts) and counts as finding work (so recovery is tried again soon). Interruption ends the loop.
 */
export const pacedPasses = <A, E, R>(
  pace: Pace,
  pass: Effect.Effect<A, E, R>,
  foundWork: (result: A) => boolean,
  options: { readonly outages: OutageLog; readonly wake?: Effect.Effect<void> }
) =>
  Effect.gen(function* () {
    let waitMs = pace.baseMs
    for (;;) {
      const found = yield* pass.pipe(
        Effect.tap(() => options.outages.succeeded()),
        Effect.map(foundWork),
        Effect.catchAllCause((cause: Cause.Cause<E>) => Effect.as(options.outages.failed(cause), true))
      )
      waitMs = nextWaitMs(pace, waitMs, found)
      const sleep = Effect.sleep(Duration.millis(waitMs))
      yield* options.wake === undefined ? sleep : Effect.raceFirst(sleep, options.wake)
    }
  })
