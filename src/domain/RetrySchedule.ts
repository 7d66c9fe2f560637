import { Duration, Effect, Option, Schedule, ScheduleDecision, ScheduleIntervals } from "effect"

/** Each configured delay is stretched or shrunk by up to this fraction, so failed deliveries do not retry in lockstep. */
export const RETRY_JITTER = 0.1

/**
 * The retry policy for webhook deliveries as an Effect `Schedule`: the delays from
 * WEBHOOK_RETRY_DELAYS_MS (an exponential-like ladder, 5 s to 10 h by default), each jittered by
 * ±RETRY_JITTER, and done once the ladder is used up (the delivery is then dead-lettered).
 */
export const retrySchedule = (delaysMs: ReadonlyArray<number>): Schedule.Schedule<Duration.Duration> => {
  const [first, ...rest] = delaysMs.map((ms) => Duration.millis(ms))
  if (first === undefined) return Schedule.stop.pipe(Schedule.as(Duration.zero))
  return Schedule.fromDelays(first, ...rest).pipe(Schedule.jitteredWith({ min: 1 - RETRY_JITTER, max: 1 + RETRY_JITTER }))
}

/**
 * How long to wait before retry number `retry` (0 = the retry after the first failed attempt), or None when
 * the schedule is exhausted. The delivery's attempt history lives in Postgres, not in a sleeping fiber, so
 * instead of `Effect.retry` we step the schedule from its start to the wanted decision, at the Clock's now:
 * a TestClock moves it like any other schedule.
 */
export const delayBeforeRetry = (
  schedule: Schedule.Schedule<Duration.Duration>,
  retry: number,
  nowMs: number
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function* () {
    let state = schedule.initial
    for (let step = 0; step <= retry; step++) {
      const [next, , decision] = yield* schedule.step(nowMs, undefined, state)
      if (ScheduleDecision.isDone(decision)) return Option.none()
      if (step === retry) return Option.some(Duration.millis(Math.max(0, ScheduleIntervals.start(decision.intervals) - nowMs)))
      state = next
    }
    return Option.none()
  })
