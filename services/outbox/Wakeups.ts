import { Context } from "effect"
import { BroadcastChannel, isMainThread } from "node:worker_threads"
import { isInternalEvent } from "../../src/contract/Events.js"
import type { Subscription } from "./Registry.js"

/**
 * Wake-ups on staging, within one process: staging events (`Outbox.stage`, the reconciler's batch) nudges the consumer
 * runners that want one of their types, so an idle runner need not poll to notice them soon. A nudge comes as the
 * events are staged, before their transaction commits: a woken runner looks a moment later and once more after its
 * `pollMs` (services/outbox/Runner.ts). Events staged by an API process (SERVICE_ROLE=api) or the operator CLI reach
 * the workers' hubs through Postgres NOTIFY (CrossProcessWakeups.ts); the runners' idle poll (`idlePollMs`) is the
 * safety net for anything else. The reconciler's thread (src/WorkerThread.ts) runs the reconciler and the thread
 * workers (the automation actor: services/Capability.ts `threadWorkers`): nudges cross between the main thread's hub and
 * the thread's on a BroadcastChannel, the thread's always (and they wake its own listeners: its metrics poster and its
 * runners), the main thread's once it has started such a thread (`forwardNudgesToThreads`).
 */
export interface WakeupHub {
  /** Calls `wake` for every nudge of a type `subscription` wants, until the returned function is called. */
  readonly listen: (subscription: { readonly eventTypes: Subscription["eventTypes"] | ReadonlyArray<string> }, wake: () => void) => () => void
  /** Wakes the listeners that want any of `types`. */
  readonly nudge: (types: Iterable<string>) => void
  /** Wakes every listener (this process may have missed other processes' nudges: see CrossProcessWakeups.ts). */
  readonly nudgeAll: () => void
}

const CHANNEL = "collections-outbox-wakeups"

/**
 * Not an event: what the webhook dispatcher's delivery loop listens for, nudged when a delivery is queued for an
 * immediate attempt (a replay). Internal, so no consumer of "all" types wakes for it.
 */
export const DELIVERIES_DUE = "internal.webhook-deliveries-due"

/** On the channel: every listener (`nudgeAll`: the LISTEN connection came back, nudges may have been missed). */
const ALL = "all"

let forwardToThreads = false

/** The main thread's nudges go to its worker threads' hubs too from now on (src/WorkerThread.ts, once it starts one). */
export const forwardNudgesToThreads = () => {
  forwardToThreads = true
}

export const makeWakeupHub = (): WakeupHub => {
  const listeners = new Set<{ readonly wants: (type: string) => boolean; readonly wake: () => void }>()
  const wakeFor = (distinct: ReadonlySet<string>) => {
    for (const l of listeners) {
      for (const t of distinct) {
        if (l.wants(t)) {
          l.wake()
          break
        }
      }
    }
  }
  // Each side hears the other's nudges: the main thread the reconciler thread's (deposits reconciled), the thread the
  // main thread's (runs the planner fired, for the actor). Neither keeps the process up.
  const channel = new BroadcastChannel(CHANNEL)
  const wakeAll = () => {
    for (const l of listeners) l.wake()
  }
  channel.onmessage = (m) => {
    const data = (m as { readonly data: ReadonlyArray<string> | typeof ALL }).data
    if (data === ALL) wakeAll()
    else wakeFor(new Set(data))
  }
  channel.unref()
  const crosses = () => !isMainThread || forwardToThreads
  return {
    listen: (subscription, wake) => {
      const types = subscription.eventTypes
      const listener = { wants: types === "all" ? (t: string) => !isInternalEvent(t) : (t: string) => (types as ReadonlyArray<string>).includes(t), wake }
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    nudge: (types) => {
      if (crosses()) channel.postMessage([...new Set(types)])
      if (listeners.size > 0) wakeFor(new Set(types))
    },
    nudgeAll: () => {
      if (crosses()) channel.postMessage(ALL)
      wakeAll()
    }
  }
}

/** The process's hub (one per process: a Reference's default is made once). */
export class OutboxWakeups extends Context.Reference<OutboxWakeups>()("services/outbox/OutboxWakeups", {
  defaultValue: (): WakeupHub => makeWakeupHub()
}) {}
