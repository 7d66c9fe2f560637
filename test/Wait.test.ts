import { expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, TestClock } from "effect"
import { sleep, waitFor, waitForPromise, WaitTimeout } from "./support/Wait.js"

/** test/support/Wait.ts: the one wait, on the wall clock, with a message that says what it saw. */

const failureOf = <A>(exit: Exit.Exit<A, unknown>) => {
  if (Exit.isSuccess(exit)) throw new Error("the wait succeeded")
  return Cause.squash(exit.cause)
}

it.effect("waits on the wall clock under a TestClock, and answers the value that passed", () =>
  Effect.gen(function* () {
    const started = Date.now()
    let n = 0
    const fiber = yield* Effect.fork(waitFor("n to reach 3", Effect.sync(() => ++n), { until: (x) => x >= 3, intervalMs: 10 }))
    // The TestClock never moves: the wait wakes all the same.
    expect(yield* Fiber.join(fiber)).toBe(3)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(yield* TestClock.sleeps()).toHaveLength(0)
  }))

it.effect("without `until`, passes on any value but false, null or undefined; a failing check is not yet", () =>
  Effect.gen(function* () {
    const answers: Array<unknown> = [false, null, undefined, 0]
    expect(yield* waitFor("a value", Effect.sync(() => answers.shift()), { intervalMs: 1 })).toBe(0)
    let tries = 0
    const failsTwice = Effect.suspend(() => (++tries < 3 ? Effect.fail(new Error("not yet")) : Effect.succeed("ok")))
    expect(yield* waitFor("the third try", failsTwice, { intervalMs: 1 })).toBe("ok")
  }))

it.effect("on its deadline dies naming what it waited for, the last value and the last error", () =>
  Effect.gen(function* () {
    let n = 0
    const check = Effect.suspend(() => (++n % 2 === 0 ? Effect.fail(new Error(`refused ${n}`)) : Effect.succeed({ count: n })))
    const started = Date.now()
    const error = failureOf(yield* Effect.exit(waitFor("count to reach 100", check, { until: (v) => v.count >= 100, timeoutMs: 200, intervalMs: 20 })))
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    expect(error).toBeInstanceOf(WaitTimeout)
    const message = (error as WaitTimeout).message
    expect(message).toMatch(/^timed out after 200 ms \(\d+ checks\) waiting for count to reach 100/)
    expect(message).toMatch(/last value: \{"count":\d+\}/)
    expect(message).toMatch(/last error: Error: refused \d+/)
  }))

it.effect("a failed assertion in the check fails the wait at once", () =>
  Effect.gen(function* () {
    const started = Date.now()
    const error = failureOf(yield* Effect.exit(waitFor("never", Effect.sync(() => expect(1).toBe(2)), { timeoutMs: 5_000 })))
    expect((error as Error).name).toBe("AssertionError")
    expect(Date.now() - started).toBeLessThan(2_000)
  }))

it.effect("interrupting the wait stops it", () =>
  Effect.gen(function* () {
    let checks = 0
    const fiber = yield* Effect.fork(waitFor("never", Effect.sync(() => ++checks > 1e9), { intervalMs: 5 }))
    yield* sleep(50)
    yield* Fiber.interrupt(fiber)
    const seen = checks
    yield* sleep(50)
    expect(checks).toBe(seen)
  }))

it("the Promise form: polls a sync or async check; rejects with the last value, the last error and the detail", async () => {
  let n = 0
  expect(await waitForPromise("n to reach 3", () => ++n, { until: (x) => x >= 3, intervalMs: 1 })).toBe(3)
  expect(await waitForPromise("an async answer", async () => "yes")).toBe("yes")
  let m = 0
  const error = await waitForPromise(
    "m to reach 100",
    () => {
      if (++m % 2 === 0) throw new Error(`thrown ${m}`)
      return m
    },
    { until: (x) => x >= 100, timeoutMs: 100, intervalMs: 10, detail: () => "the service said: hello" }
  ).then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(WaitTimeout)
  expect((error as Error).message).toMatch(/waiting for m to reach 100; last value: \d+; last error: Error: thrown \d+\nthe service said: hello$/)
  await expect(waitForPromise("never", () => expect(1).toBe(2), { timeoutMs: 5_000 })).rejects.toThrow(/expected 1 to be 2/)
})
