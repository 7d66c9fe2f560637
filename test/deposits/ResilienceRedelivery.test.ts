import { SqlClient, SqlError } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Queue, Ref, Stream } from "effect"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { type Delivery, DepositBus, type DepositEnvelope } from "../../streams/DepositBus.js"
import { ReconcilerWorkersLive } from "../../services/deposits/ReconcilerWorkers.js"
import { waitFor } from "../support/Wait.js"
import { AppConfigTag } from "../../src/Config.js"
import { TestSql, testConfig } from "../support/TestApp.js"

/*
 * Bounded redelivery, with the broker replaced by a scripted bus (the real one would need ~90 s of backoff to reach
 * max_deliver) and a reconciler that always fails: the real ReconcilerWorkers must nak with backoff until the last
 * allowed delivery, then record the message in poison_messages and terminate it.
 */
const MAX_DELIVER = 8

type Verb = { readonly seq: number; readonly verb: "ack" | "term" } | { readonly seq: number; readonly verb: "nak"; readonly delayMs: number }

class Script extends Effect.Tag("test/Script")<Script, {
  readonly deliver: (envelope: DepositEnvelope, seq: number, deliveryCount: number) => Effect.Effect<boolean>
  readonly verbs: Effect.Effect<ReadonlyArray<Verb>>
  readonly attempts: Effect.Effect<number>
}>() {}

const ScriptedPipeline = Layer.unwrapEffect(
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Delivery>()
    const verbs = yield* Ref.make<ReadonlyArray<Verb>>([])
    const attempts = yield* Ref.make(0)
    const record = (v: Verb) => Ref.update(verbs, (vs) => [...vs, v])
    const bus = DepositBus.of({
      kind: "in-process",
      maxDeliver: MAX_DELIVER,
      publish: () => Effect.void,
      deliveries: Stream.fromQueue(queue)
    })
    const failing = Reconciler.make({
      reconcile: () =>
        Ref.update(attempts, (n) => n + 1).pipe(Effect.zipRight(Effect.fail(new SqlError.SqlError({ cause: new Error("connection reset"), message: "simulated outage" })))),
      // A failed batch falls back to one delivery at a time, which is what this test counts.
      reconcileBatch: () => Effect.fail(new SqlError.SqlError({ cause: new Error("connection reset"), message: "simulated outage" }))
    })
    const deliver = (envelope: DepositEnvelope, seq: number, deliveryCount: number) =>
      Queue.offer(queue, {
        envelope, subject: `deposits.${envelope.tenantId}.test.${envelope.accountNumber}`, streamSeq: seq, deliveryCount,
        ack: record({ seq, verb: "ack" }), nak: (delayMs) => record({ seq, verb: "nak", delayMs }), term: record({ seq, verb: "term" })
      })
    return ReconcilerWorkersLive.pipe(
      Layer.provide(Layer.succeed(DepositBus, bus)),
      Layer.provide(Layer.succeed(Reconciler, failing)),
      Layer.provide(Layer.succeed(AppConfigTag, testConfig())),
      Layer.merge(Layer.succeed(Script, { deliver, verbs: Ref.get(verbs), attempts: Ref.get(attempts) }))
    )
  })
).pipe(
  Layer.provideMerge(TestSql),
  // The poison record and each failed attempt log loudly; that is expected here.
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

const envelope = (n: number): DepositEnvelope => ({
  inboxId: n, tenantId: "ten_x", mode: "test", provider: "sandbox", reference: `ref-${n}`, accountNumber: "0001000019"
})

layer(ScriptedPipeline, { timeout: 60_000, excludeTestServices: true })("deposit pipeline resilience: bounded redelivery", (it) => {
  it.effect("a failing deposit is retried in place, nak'd with growing backoff, and terminated as poison at max_deliver", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Delivery 1..7 of message 1 fail (each after 1 + 3 in-place retries) and are nak'd with backoff.
      for (let count = 1; count < MAX_DELIVER; count++) yield* Script.deliver(envelope(1), 1, count)
      // The last allowed delivery gives up.
      yield* Script.deliver(envelope(1), 1, MAX_DELIVER)
      const verbs = yield* waitFor(`${MAX_DELIVER} verbs`, Script.verbs, { until: (vs) => vs.length === MAX_DELIVER, timeoutMs: 30_000, intervalMs: 100 })
      expect(verbs.slice(0, MAX_DELIVER - 1)).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((count) => ({ seq: 1, verb: "nak", delayMs: Math.min(30_000, 500 * 2 ** count) }))
      )
      expect(verbs[MAX_DELIVER - 1]).toEqual({ seq: 1, verb: "term" })
      expect(yield* Script.attempts).toBe(MAX_DELIVER * 4)
      const poison = yield* sql<{ source: string; streamSeq: number; reason: string; payload: string }>`
        SELECT source, stream_seq, reason, payload FROM poison_messages`
      expect(poison).toHaveLength(1)
      expect(poison[0]!.source).toBe("deposits:in-process")
      expect(poison[0]!.streamSeq).toBe(1)
      expect(poison[0]!.reason).toContain(`failed ${MAX_DELIVER} deliveries`)
      expect(JSON.parse(poison[0]!.payload)).toEqual(envelope(1))
    })
  )
})
