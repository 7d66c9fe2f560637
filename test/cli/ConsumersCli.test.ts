import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as crypto from "node:crypto"
import { Outbox } from "../../services/outbox/Outbox.js"
import { ConsumerRegistry, type Subscription } from "../../services/outbox/Registry.js"
import { BUILT_IN } from "../../services/Capabilities.js"
import { type Consumer, makeConsumerRunner } from "../../services/outbox/Runner.js"
import { relayConsumer } from "../../services/outbox/OutboxRelay.js"
import { InProcessReconciledBusLive } from "../../streams/ReconciledBus.js"
import { runCli, tempDir } from "../support/Processes.js"
import { TestSql } from "../support/TestApp.js"
import { TestDatabaseUrl } from "../support/TestDatabase.js"
import { shown } from "../support/CliRuns.js"
import { sampleEvent } from "../support/EventSamples.js"

const TEST_TIMEOUT_MS = 180_000

const CLI_TEST: Subscription = { name: "test-cli", eventTypes: ["transfer.reversed"] }

/** A migrated database, and the real Outbox with a test consumer registered beside the built-in ones. */
const Live = Layer.mergeAll(Outbox.Default, InProcessReconciledBusLive).pipe(
  Layer.provideMerge(TestSql),
  Layer.provide(Layer.succeed(ConsumerRegistry, [...BUILT_IN, CLI_TEST]))
)

layer(Live, { timeout: 120_000, excludeTestServices: true })("collections consumers (CLI) on a real Postgres", (it) => {
  const dataDir = tempDir("collections-cli-consumers-")
  const cli = (...args: Array<string>) =>
    Effect.flatMap(TestDatabaseUrl, ({ url }) => Effect.promise(() => runCli(args, { DATABASE_URL: Redacted.value(url), DATA_DIR: dataDir })))

  it.effect("dead-letters list and replay (one, and --all), and replay --stream reconciled --consumer", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tenantId = `ten_${crypto.randomBytes(12).toString("hex")}`
      const events = yield* Effect.flatMap(Outbox, (o) =>
        o.stage([0, 1].map((i) => ({ tenantId, mode: "test" as const, subjectKey: `acct-${i}`, ...sampleEvent("transfer.reversed") })))
      )
      const handled: Array<string> = []
      let failing = true
      const consumer: Consumer = {
        ...CLI_TEST,
        handle: (es) => (failing ? Effect.fail(new Error("receiver said no")) : Effect.sync(() => void handled.push(...es.map((e) => e.eventId))))
      }
      const runner = yield* makeConsumerRunner(consumer, { maxAttempts: 1 })
      expect(yield* runner.pass).toEqual({ claimed: 2, handled: 0, failed: 2 })

      const listed = yield* cli("consumers", "dead-letters", "list", "--consumer", "test-cli", "--json")
      expect(listed.code, shown(listed)).toBe(0)
      const rows = JSON.parse(listed.stdout) as Array<{ id: number; consumer: string; eventId: string; attempts: number; lastError: string }>
      expect(rows.map((r) => r.eventId).sort()).toEqual(events.map((e) => e.id).sort())
      expect(rows.every((r) => r.consumer === "test-cli" && r.attempts === 1 && r.lastError === "Error: receiver said no")).toBe(true)
      const table = yield* cli("consumers", "dead-letters", "list")
      expect(table.code, shown(table)).toBe(0)
      expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+CONSUMER\s+EVENT\s+TYPE\s+TENANT\s+MODE\s+KEY\s+ATTEMPTS\s+DEAD SINCE\s+LAST ERROR$/)
      expect(table.stdout).toContain(events[0]!.id)

      const one = yield* cli("consumers", "dead-letters", "replay", String(rows[0]!.id))
      expect(one.code, shown(one)).toBe(0)
      expect(one.stdout).toMatch(new RegExp(`^requeued dead letter ${rows[0]!.id} \\(consumer test-cli`))
      const back = yield* sql<{ attempts: number; nextAttemptAt: Date | null }>`
        SELECT attempts, next_attempt_at FROM outbox_pending WHERE consumer = 'test-cli'`
      expect(back).toEqual([{ attempts: 0, nextAttemptAt: null }])
      const all = yield* cli("consumers", "dead-letters", "replay", "--consumer", "test-cli", "--all")
      expect(all.code, shown(all)).toBe(0)
      expect(all.stdout.trim()).toBe("requeued 1 dead letter of consumer test-cli")
      expect((yield* cli("consumers", "dead-letters", "list", "--consumer", "test-cli")).stdout.trim()).toBe("no dead letters")

      // Now it succeeds: each replayed event is handled once.
      failing = false
      expect(yield* runner.pass).toEqual({ claimed: 2, handled: 2, failed: 0 })
      expect(handled.sort()).toEqual(events.map((e) => e.id).sort())

      // The relay publishes them (the in-process bus); a replay re-feeds the relay alone, from an outbox id.
      const relay = yield* makeConsumerRunner(relayConsumer)
      yield* relay.pass
      const relayRows = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id WHERE o.tenant_id = ${tenantId} AND p.consumer = 'relay'`
      expect((yield* relayRows)[0]!.n).toBe(0)
      const [first] = yield* sql<{ id: number }>`SELECT min(id)::int AS id FROM outbox WHERE tenant_id = ${tenantId}`
      const replayed = yield* cli("replay", "--stream", "reconciled", "--consumer", "relay", "--from-seq", String(first!.id))
      expect(replayed.code, shown(replayed)).toBe(0)
      expect(JSON.parse(replayed.stdout)).toMatchObject({ stream: "reconciled", source: "outbox", consumer: "relay" })
      expect((yield* relayRows)[0]!.n).toBe(2)
      const others = yield* sql<{ consumer: string }>`
        SELECT DISTINCT p.consumer FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id WHERE o.tenant_id = ${tenantId}`
      // Only the relay's: this tenant has no webhook endpoint, so the stager never had rows (its `interestedWhen`), and
      // test-cli's were not re-fed.
      expect(others.map((r) => r.consumer).sort()).toEqual(["relay"])
    }),
    TEST_TIMEOUT_MS
  )

  it.effect("usage errors exit 2; an unknown dead letter exits 1", () =>
    Effect.gen(function* () {
      const cases: Array<[Array<string>, RegExp]> = [
        [["consumers", "dead-letters", "replay"], /give either <id> or --consumer NAME --all/],
        [["consumers", "dead-letters", "replay", "7", "--all"], /give either <id> or --consumer NAME --all/],
        [["consumers", "dead-letters", "replay", "--consumer", "relay"], /--consumer NAME and --all go together/],
        [["replay", "--stream", "deposits", "--consumer", "relay", "--from-seq", "1"], /--consumer goes with --stream reconciled/],
        [["replay", "--stream", "reconciled", "--consumer", "nobody", "--from-seq", "1"], /--consumer must be one of relay, webhooks/]
      ]
      const results = yield* Effect.forEach(cases, ([args]) => cli(...args), { concurrency: "unbounded" })
      results.forEach((r, i) => {
        expect(r.code, shown(r)).toBe(2)
        expect(r.stderr, shown(r)).toMatch(cases[i]![1])
      })
      const help = yield* cli("consumers", "dead-letters", "replay", "--help")
      expect(help.code, shown(help)).toBe(0)
      expect(help.stdout).toMatch(/Usage: collections consumers dead-letters replay \[<id>\] \[--consumer NAME\] \[--all\]/)
      const missing = yield* cli("consumers", "dead-letters", "replay", "999999")
      expect(missing.code, shown(missing)).toBe(1)
      expect(missing.stderr).toMatch(/no consumer dead letter 999999/)
    }),
    TEST_TIMEOUT_MS
  )
})
