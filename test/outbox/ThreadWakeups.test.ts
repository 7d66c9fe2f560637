import { describe, expect, it } from "vitest"
import { forwardNudgesToThreads, makeWakeupHub } from "../../services/outbox/Wakeups.js"

/**
 * The wake-up hubs of the main thread and of the reconciler's thread (which runs the automation actor) share a
 * BroadcastChannel (services/outbox/Wakeups.ts). Here both hubs live on this thread: a channel's message reaches every
 * other channel of its name, on any thread, so the second hub stands in for the thread's. The service end to end:
 * test/deposits/WorkerThread.test.ts.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50))

describe("wake-ups between the main thread and the reconciler's thread", () => {
  it("cross from the main thread only once it forwards them, by type, and nudgeAll wakes every listener there", async () => {
    const main = makeWakeupHub()
    const thread = makeWakeupHub()
    const woken: Array<string> = []
    const offActor = thread.listen({ eventTypes: ["internal.automation.fired"] }, () => woken.push("actor"))
    const offOther = thread.listen({ eventTypes: ["payout.completed"] }, () => woken.push("other"))
    try {
      main.nudge(["internal.automation.fired"])
      await settle()
      expect(woken).toEqual([])

      forwardNudgesToThreads()
      main.nudge(["internal.automation.fired"])
      await settle()
      expect(woken).toEqual(["actor"])

      main.nudgeAll()
      await settle()
      expect(woken.slice(1).sort()).toEqual(["actor", "other"])
    } finally {
      offActor()
      offOther()
    }
  })
})
