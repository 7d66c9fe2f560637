import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { CrossProcessWakeupsLive, notifyOtherProcesses, stagesForOthers } from "../../services/outbox/CrossProcessWakeups.js"
import { Outbox } from "../../services/outbox/Outbox.js"
import { makeWakeupHub, OutboxWakeups } from "../../services/outbox/Wakeups.js"
import { makeTestApp, testConfig } from "../support/TestApp.js"
import { TestDatabaseUrl } from "../support/TestDatabase.js"
import { realSleep } from "../support/Webhooks.js"
import { waitFor } from "../support/Wait.js"

/**
 * Wake-ups between processes (issue 33): an API process (SERVICE_ROLE=api) runs no consumers, so its staging NOTIFYs,
 * and a worker process LISTENs and nudges its own hub. The "worker" here is a second hub with CrossProcessWakeupsLive
 * on its own connection, as another process would have; the staging goes through the real Outbox on the real Postgres.
 */

const staged = (tenantId: string) =>
  Effect.flatMap(Outbox, (outbox) =>
    outbox.stage([{
      tenantId, mode: "test", subjectKey: "acct-1", type: "deposit.reconciled",
      data: { transaction: { reference: `ref-${tenantId}` }, account: null, risk: { score: 0, reasons: [] } } as never
    }]))

/** A hub as another process has, listening through Postgres; counts the wakes of a runner of each type. */
const otherProcess = Effect.gen(function* () {
  const { url } = yield* TestDatabaseUrl
  const hub = makeWakeupHub()
  const wakes = { reconciled: 0, reversed: 0 }
  hub.listen({ eventTypes: ["deposit.reconciled"] }, () => void wakes.reconciled++)
  hub.listen({ eventTypes: ["transfer.reversed"] }, () => void wakes.reversed++)
  yield* Layer.build(CrossProcessWakeupsLive.pipe(
    Layer.provide(Layer.succeed(AppConfigTag, testConfig({ databaseUrl: Option.some(url) }))),
    Layer.provide(Layer.succeed(OutboxWakeups, hub))
  ))
  // Listening: on (re)connecting it wakes every runner once, for what it may have missed.
  yield* waitFor("the listener to connect", Effect.sync(() => wakes.reconciled), { until: (n) => n >= 1, timeoutMs: 10_000 })
  const reset = () => {
    wakes.reconciled = 0
    wakes.reversed = 0
  }
  return { wakes, reset }
})

layer(makeTestApp({ workers: false, config: { role: "api" } }), { timeout: 60_000, excludeTestServices: true })("wake-ups between processes", (it) => {
  it.scoped("an API process's staging wakes another process's runners of that type once it commits; a rollback wakes none", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const other = yield* otherProcess
      other.reset()

      // Rolled back: nothing is delivered.
      yield* sql.withTransaction(staged("ten_rollback").pipe(Effect.zipRight(Effect.fail("abort" as const)))).pipe(Effect.flip)
      yield* realSleep(500)
      expect(other.wakes).toEqual({ reconciled: 0, reversed: 0 })

      // Committed: the runner of that type wakes, another type's does not.
      yield* sql.withTransaction(staged("ten_commit"))
      yield* waitFor("the wake-up", Effect.sync(() => other.wakes.reconciled), { until: (n) => n === 1, timeoutMs: 10_000 })
      yield* realSleep(200)
      expect(other.wakes).toEqual({ reconciled: 1, reversed: 0 })
    }))

  it.scoped("the listener comes back after its connection is killed, wakes every runner once, and hears the next one", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const other = yield* otherProcess
      other.reset()
      const killed = yield* sql<{ n: number }>`
        SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE application_name = 'collections-wakeups' AND datname = current_database()`
      expect(killed[0]!.n).toBeGreaterThanOrEqual(1)
      // Back (every 2 s): one wake for each runner, as it may have missed events meanwhile.
      yield* waitFor("the listener to reconnect", Effect.sync(() => other.wakes.reversed), { until: (n) => n === 1, timeoutMs: 15_000 })
      other.reset()
      yield* sql.withTransaction(notifyOtherProcesses(sql, ["transfer.reversed"]))
      yield* waitFor("the wake-up after the reconnect", Effect.sync(() => other.wakes.reversed), { until: (n) => n === 1, timeoutMs: 10_000 })
      expect(other.wakes.reconciled).toBe(0)
    }))

  it("only an API process notifies: the others stage for runners of their own", () => {
    expect(stagesForOthers("api")).toBe(true)
    expect(stagesForOthers("all")).toBe(false)
    expect(stagesForOthers("worker")).toBe(false)
  })
})
