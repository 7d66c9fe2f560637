import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue, TestClock } from "effect"
import { nextWaitMs, pacedPasses } from "../../src/Pacing.js"
import { REPORTER_IDLE_MAX_MS, reporterWaitMs } from "../../services/providers/SandboxReporter.js"

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

  it("the sandbox reporter waits for the next due report, one interval at least, a minute at most", () => {
    expect(reporterWaitMs(1_000, 0, null)).toBe(REPORTER_IDLE_MAX_MS)
    expect(reporterWaitMs(1_000, 0, 2_500)).toBe(2_500)
    expect(reporterWaitMs(1_000, 3, 0)).toBe(1_000)
    expect(reporterWaitMs(1_000, 0, -40)).toBe(1_000)
    expect(reporterWaitMs(1_000, 0, 3_600_000)).toBe(REPORTER_IDLE_MAX_MS)
    // A full pass: more may be due at once.
    expect(reporterWaitMs(1_000, 100, 3_600_000)).toBe(1_000)
  })
})
