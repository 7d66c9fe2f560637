import { Cause, Chunk, Effect, Exit } from "effect"

/**
 * The one way tests wait for something to happen: poll a check on the WALL clock (Date.now and setTimeout, never the
 * fiber's Clock, so it works the same in `it.effect` tests whose clock is a TestClock, in `it.live` ones and in plain
 * async tests) every `intervalMs` until it passes or `timeoutMs` has passed since the first check. On the deadline it
 * fails with a message naming what it waited for, the last value the check gave and the last error it raised.
 *
 * A check passes when it succeeds with a value that `until` accepts; without `until`, with any value but false, null
 * or undefined (so a boolean check, a check that answers `undefined` until it finds something, and a check that fails
 * until it is satisfied all work as they are). A check that fails, dies or throws is "not yet": its error is kept for
 * the timeout message, and the poll goes on; but a failed assertion (vitest's `expect` inside the check) fails the
 * wait at once, as it would have without the wait.
 */
export interface WaitOptions<A> {
  /** When the check's value is good enough (default: not false, null or undefined). */
  readonly until?: (value: A) => boolean
  /** How long to keep trying, from the first check (default 20 s). */
  readonly timeoutMs?: number
  /** The pause between two checks (default 50 ms). */
  readonly intervalMs?: number
  /** More to put in the timeout message, read on the deadline (e.g. what a service process has written). */
  readonly detail?: () => string
}

export const DEFAULT_TIMEOUT_MS = 20_000
export const DEFAULT_INTERVAL_MS = 50

/** The error a wait dies (Effect) or rejects (Promise) with on its deadline. */
export class WaitTimeout extends Error {
  override readonly name = "WaitTimeout"
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly checks: number,
    readonly lastValue: { readonly value: unknown } | undefined,
    readonly lastError: unknown,
    detail?: string
  ) {
    super(
      [
        `timed out after ${timeoutMs} ms (${checks} checks) waiting for ${what}`,
        lastValue === undefined ? "no check succeeded" : `last value: ${show(lastValue.value)}`,
        ...(lastError === undefined ? [] : [`last error: ${showError(lastError)}`])
      ].join("; ") + (detail === undefined ? "" : `\n${detail}`)
    )
  }
}

const passes = (value: unknown) => value !== false && value !== null && value !== undefined

/** A failed `expect` (chai's AssertionError, which vitest throws): never a "not yet". */
const isAssertion = (error: unknown) => error instanceof Error && error.name === "AssertionError"

const clip = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}…` : text)

const show = (value: unknown): string => {
  if (value === undefined) return "undefined"
  if (Array.isArray(value)) return `(${value.length} items) ${showJson(value)}`
  return showJson(value)
}

const showJson = (value: unknown): string => {
  if (typeof value === "string") return clip(JSON.stringify(value))
  try {
    return clip(JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value))
  } catch {
    return clip(String(value))
  }
}

const showError = (error: unknown): string => clip(error instanceof Error ? `${error.name}: ${error.message}` : show(error))

/** A pause on the wall clock, whatever Clock the fiber has (a TestClock would never wake Effect.sleep). */
export const sleep = (ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Math.max(0, ms))
    return Effect.sync(() => clearTimeout(timer))
  })

/** A pause on the wall clock, for async tests. */
export const sleepPromise = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

/**
 * Effect form: runs `check` until it passes and answers the value that passed; dies with a WaitTimeout on the
 * deadline. Interrupting the wait interrupts the running check.
 */
export const waitFor = <A, E, R>(what: string, check: Effect.Effect<A, E, R>, options: WaitOptions<A> = {}): Effect.Effect<A, never, R> =>
  Effect.suspend(() => {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
    const good = options.until ?? passes
    const deadline = Date.now() + timeoutMs
    let checks = 0
    let lastValue: { value: A } | undefined
    let lastError: unknown
    const attempt: Effect.Effect<A, never, R> = Effect.flatMap(Effect.exit(check), (exit) => {
      checks++
      if (Exit.isSuccess(exit)) {
        lastValue = { value: exit.value }
        try {
          if (good(exit.value)) return Effect.succeed(exit.value)
        } catch (error) {
          if (isAssertion(error)) return Effect.die(error)
          lastError = error
        }
      } else {
        if (Cause.isInterruptedOnly(exit.cause) || Cause.defects(exit.cause).pipe(Chunk.some(isAssertion))) {
          return Effect.failCause(exit.cause) as Effect.Effect<never>
        }
        lastError = Cause.squash(exit.cause)
      }
      const left = deadline - Date.now()
      if (left <= 0) return Effect.die(new WaitTimeout(what, timeoutMs, checks, lastValue, lastError, options.detail?.()))
      return Effect.zipRight(sleep(Math.min(intervalMs, left)), attempt)
    })
    return attempt
  })

/** Promise form, for async tests: calls `check` (sync or async) until it passes; rejects with a WaitTimeout on the deadline. */
export const waitForPromise = async <A>(what: string, check: () => A | Promise<A>, options: WaitOptions<Awaited<A>> = {}): Promise<Awaited<A>> => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
  const good = options.until ?? passes
  const deadline = Date.now() + timeoutMs
  let checks = 0
  let lastValue: { value: Awaited<A> } | undefined
  let lastError: unknown
  for (;;) {
    checks++
    try {
      const value = await check()
      lastValue = { value }
      if (good(value)) return value
    } catch (error) {
      if (isAssertion(error)) throw error
      lastError = error
    }
    const left = deadline - Date.now()
    if (left <= 0) throw new WaitTimeout(what, timeoutMs, checks, lastValue, lastError, options.detail?.())
    await sleepPromise(Math.min(intervalMs, left))
  }
}
