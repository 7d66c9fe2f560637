import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue, TestClock } from "effect"
import { nextWaitMs, pacedPasses } from "../../src/Pacing.js"

/** The background passes' pacing (issue 33: quiet at rest): the wait doubles after empty passes, resets on work. */
describe("paced passes", () => {
  const pace = { baseMs: 1_000, idleMaxMs: 8_000 }

  it("the wait: base after work; doubling after empty passes up to the most; back to base on work", () => {
    expect(nextWaitMs(pace, 1_000, true)).toBe(1_000)
    expect(nextWaitMs(pace, 1_000, false)).toBe(2_000)
    expect(nextWaitMs(pace, 4_000, false)).toBe(8_000)
    expect(nextWaitMs(pace, 8_000, false)).toBe(8_000)
    expect(nextWaitMs(pace, 8_000, true)).toBe(1_000)
    // A most below the base: the base.
    expect(nextWaitMs({ baseMs: 500, idleMaxMs: 100 }, 500, false)).toBe(500)
  })

  it.scoped("runs on the fiber's clock: passes at 0, 2, 6, 14, 22 s while empty; work or a wake brings the base back", () =>
    Effect.gen(function* () {
      const ran: Array<number> = []
      let work = false
      let fail = false
      const wake = yield* Queue.sliding<void>(1)
      const failures: Array<string> = []
      const pass = Effect.gen(function* () {
        ran.push(yield* TestClock.currentTimeMillis)
        if (fail) return yield* Effect.fail("down")
        return work ? 1 : 0
      })
      const fiber = yield* Effect.fork(pacedPasses(pace, pass, (n) => n > 0, {
        outages: { failed: (c) => Effect.sync(() => void failures.push(String(c))), succeeded: () => Effect.void },
        wake: Queue.take(wake)
      }))
      yield* TestClock.adjust(23_000)
      expect(ran).toEqual([0, 2_000, 6_000, 14_000, 22_000])
      // Work found (the pass at 30 s): the next wait is the base.
      work = true
      yield* TestClock.adjust(8_000)
      expect(ran.slice(5)).toEqual([30_000, 31_000])
      // Empty again: 2 s, then 4 s; a wake ends the long wait at once.
      work = false
      yield* TestClock.adjust(1_000)
      yield* TestClock.adjust(2_000)
      expect(ran.slice(7)).toEqual([32_000, 34_000])
      yield* Queue.offer(wake, undefined)
      for (let i = 0; i < 50 && ran.length < 10; i++) yield* Effect.yieldNow()
      expect(ran.slice(9)).toEqual([34_000])
      // A failing pass is reported and tried again after the base wait.
      fail = true
      yield* TestClock.adjust(8_000)
      expect(failures).toHaveLength(1)
      yield* TestClock.adjust(1_000)
      expect(failures).toHaveLength(2)
      yield* Fiber.interrupt(fiber)
    }))
})
