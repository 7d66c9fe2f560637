import { Cause, Clock, Context, Effect, Layer } from "effect"
import { isDatabaseUnavailable } from "./db/Unreachable.js"

/**
 * An outage as an operator wants to read it (issue 34): one warning per component when its outage begins (the
 * component, what failed, a short message, no stack), quiet while it lasts, and one info line when it ends ("recovered
 * after 5.2 s; 14 passes retried"). A failure that is not an outage (a bug) is still logged at once as an error with
 * its cause. The model was services/outbox/CrossProcessWakeups.ts's "not listening ... listening again".
 *
 * An outage is Postgres unreachable (src/db/Unreachable.ts: refused or reset connections, the pool's connect timeout,
 * the server shutting down) or NATS unreachable (its client's connection, timeout and no-responders errors).
 *
 * A component may have several members that fail and recover apart (the consumer runner's consumers, each partition's
 * consumer): the outage ends when every member that failed has had a pass that worked since, so one member coming back
 * first does not end it while another, still failing, would begin a second.
 */
export interface OutageLog {
  /** A failed pass of `member` (default: the component itself). */
  readonly failed: (cause: Cause.Cause<unknown>, member?: string) => Effect.Effect<void>
  /** A pass of `member` that worked: ends the outage once no member is failing. */
  readonly succeeded: (member?: string) => Effect.Effect<void>
}

const NATS_ERRORS = /^(Connection|ClosedConnection|DrainingConnection|Timeout|NoResponders|Request|JetStreamNotEnabled)Error$/
const NATS_MESSAGES = /\bNATS\b|CONNECTION_CLOSED|CONNECTION_DRAINING|no responders|JetStream (?:is )?not (?:connected|ready)/i

const natsLevel = (e: unknown, depth = 0): boolean => {
  if (depth > 4 || e === null || typeof e !== "object") return false
  const { _tag, name, message, cause } = e as { _tag?: unknown; name?: unknown; message?: unknown; cause?: unknown }
  // The deposit bus's own error (streams/DepositBus.ts): a publish or consume that NATS did not take.
  if (_tag === "BusError") return true
  if (typeof name === "string" && NATS_ERRORS.test(name)) return true
  if (typeof message === "string" && NATS_MESSAGES.test(message)) return true
  return natsLevel(cause, depth + 1)
}

/** "Postgres", "NATS", or undefined when the cause is not an outage of either (a bug, or an error of our own). */
export const outageOf = (cause: Cause.Cause<unknown>): "Postgres" | "NATS" | undefined => {
  if (isDatabaseUnavailable(cause)) return "Postgres"
  return [...Cause.failures(cause), ...Cause.defects(cause)].some((e) => natsLevel(e)) ? "NATS" : undefined
}

/** The failure's own message, one line and short: what an operator reads instead of a stack. */
export const shortMessage = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause) as { message?: unknown; cause?: { message?: unknown } }
  const own = typeof e?.message === "string" ? e.message : String(e)
  const inner = typeof e?.cause?.message === "string" && e.cause.message !== own ? `: ${e.cause.message}` : ""
  return `${own}${inner}`.replace(/\s+/g, " ").slice(0, 200)
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** A component's outage log (`what`: what its passes do, for the lines: "consumer passes", "inbox sweeps"). */
export const makeOutageLog = (component: string, what = "passes"): OutageLog => {
  let since: number | undefined
  let retried = 0
  let dependency = ""
  const failing = new Set<string>()
  const annotate = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.annotateLogs(self, "component", component)
  return {
    failed: (cause, member = "") =>
      Effect.gen(function* () {
        if (Cause.isInterruptedOnly(cause)) return
        const down = outageOf(cause)
        if (down === undefined) return yield* annotate(Effect.logError(`${component}: ${what} failed${member ? ` (${member})` : ""}; retrying`, cause))
        failing.add(member)
        if (since !== undefined) {
          retried++
          return yield* annotate(Effect.logDebug(`${component}: still failing (${down} unreachable): ${shortMessage(cause)}`))
        }
        since = yield* Clock.currentTimeMillis
        retried = 1
        dependency = down
        yield* annotate(Effect.logWarning(`${component}: ${down} unreachable; ${what} will retry until it is back (${shortMessage(cause)})`))
      }),
    succeeded: (member = "") =>
      Effect.suspend(() => {
        if (since === undefined || !failing.delete(member) || failing.size > 0) return Effect.void
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const line = `${component}: ${dependency} back; recovered after ${seconds(now - since!)}; ${retried} ${what} retried`
          since = undefined
          return annotate(Effect.logInfo(line))
        })
      })
  }
}

/**
 * The process's outage logs, one per component name, shared by every loop of that component (the consumer runner's
 * loops, one per consumer, make one "consumers" component). A Reference: outside the service graph each use gets a
 * fresh registry; the graph provides one per service (OutageLogsLive).
 */
export const makeOutageLogs = () => {
  const logs = new Map<string, OutageLog>()
  return {
    of: (component: string, what?: string): OutageLog => {
      let log = logs.get(component)
      if (log === undefined) logs.set(component, (log = makeOutageLog(component, what)))
      return log
    }
  }
}

export class OutageLogs extends Context.Reference<OutageLogs>()("src/OutageLogs", { defaultValue: makeOutageLogs }) {}

export const OutageLogsLive = Layer.sync(OutageLogs, makeOutageLogs)

/** The shared outage log of a component. */
export const outageLog = (component: string, what?: string) => Effect.map(OutageLogs, (logs) => logs.of(component, what))
