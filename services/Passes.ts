import { Clock, Duration, Effect, Ref, Schedule } from "effect"
import { outageLog } from "../src/OutageLog.js"

/**
 * A worker's loop: `pass` on a `Schedule` of the fiber's Clock (every `intervalMs`, the first after one interval), so a
 * test forks the loop on a TestClock and drives it with `adjust`; each pass itself runs on the wall clock, so its
 * timeouts and leases are real time. A failed pass is logged (an outage once, as src/OutageLog.ts tells) and the loop goes on.
 */
export const passesEvery = <A, E, R>(
  what: string,
  intervalMs: number,
  pass: Effect.Effect<A, E, R>,
  onPass: (result: A) => Effect.Effect<void>
) => {
  const wall = Clock.make()
  return Effect.flatMap(outageLog(what), (outages) => {
    const once = pass.pipe(
      Effect.withClock(wall),
      Effect.tap(onPass),
      Effect.zipLeft(outages.succeeded()),
      Effect.catchAllCause((cause) => outages.failed(cause))
    )
    return Effect.schedule(once, Schedule.spaced(Duration.millis(intervalMs)))
  })
}

/**
 * A clock a service reads its business time from (checkout expiry, billing time): the wall clock, which a test swaps
 * for a TestClock instance with `use`.
 */
export const makeSwappableClock = Effect.map(Ref.make<Clock.Clock>(Clock.make()), (ref) => ({
  current: Ref.get(ref),
  use: (clock: Clock.Clock) => Ref.set(ref, clock)
}))
