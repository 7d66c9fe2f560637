import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, TestClock } from "effect"
import { delayBeforeRetry, RETRY_JITTER, retrySchedule } from "../../src/domain/RetrySchedule.js"

const DEFAULT_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]

describe("retry schedule", () => {
  it.effect("the n-th delay is the n-th configured delay, jittered within bounds; none after the last", () =>
    Effect.gen(function* () {
      const schedule = retrySchedule(DEFAULT_DELAYS_MS)
      for (let round = 0; round < 50; round++) {
        for (const [retry, ms] of DEFAULT_DELAYS_MS.entries()) {
          const delay = Duration.toMillis(Option.getOrThrow(yield* delayBeforeRetry(schedule, retry, 1_000_000)))
          expect(delay).toBeGreaterThanOrEqual(ms * (1 - RETRY_JITTER))
          expect(delay).toBeLessThanOrEqual(ms * (1 + RETRY_JITTER))
        }
        expect(Option.isNone(yield* delayBeforeRetry(schedule, DEFAULT_DELAYS_MS.length, 1_000_000))).toBe(true)
      }
    }))

  it.effect("jitter spreads retries that failed together", () =>
    Effect.gen(function* () {
      const schedule = retrySchedule([10_000])
      const delays = new Set<number>()
      for (let i = 0; i < 20; i++) delays.add(Duration.toMillis(Option.getOrThrow(yield* delayBeforeRetry(schedule, 0, 0))))
      expect(delays.size).toBeGreaterThan(1)
    }))

  it.effect("is an ordinary Schedule: Effect.retry with it waits on the TestClock and gives up after the last delay", () =>
    Effect.gen(function* () {
      let attempts = 0
      const failing = Effect.suspend(() => {
        attempts += 1
        return Effect.fail("endpoint answered HTTP 500")
      })
      const fiber = yield* Effect.fork(Effect.retry(failing, retrySchedule([1_000, 2_000, 4_000])))
      yield* TestClock.adjust(0)
      expect(attempts).toBe(1)
      yield* TestClock.adjust(800)
      expect(attempts).toBe(1)
      yield* TestClock.adjust(400)
      expect(attempts).toBe(2)
      yield* TestClock.adjust(2_300)
      expect(attempts).toBe(3)
      yield* TestClock.adjust(4_500)
      expect(attempts).toBe(4)
      const exit = yield* fiber.await
      expect(exit._tag).toBe("Failure")
    }))
})
