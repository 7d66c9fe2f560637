import { expect, layer } from "@effect/vitest"
import { Chunk, Context, Effect, Fiber, Layer, LogLevel, Option, Stream } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { makeServices } from "../../src/Services.js"
import { SandboxProviderLive } from "../../services/providers/SandboxProvider.js"
import { BusHealth } from "../../streams/Nats.js"
import { type Change, Subscribe } from "../../streams/Subscribe.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { tcpProxy, type TcpProxy, TEST_NATS_URL } from "../support/Resilience.js"
import { makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

class ApiSide extends Context.Tag("test/ApiSide")<ApiSide, { readonly subscribe: Context.Tag.Service<Subscribe>; readonly proxy: TcpProxy }>() {}

/**
 * Two "processes" on one database and one NATS prefix: the worker app (the full service: receiver, reconciler, outbox
 * relay) and, beside it, what a SERVICE_ROLE=api process builds (the services and buses, no workers, so no relay) on
 * a NATS connection of its own, through a proxy the test can cut.
 */
const TwoProcesses = Layer.unwrapScoped(
  Effect.gen(function* () {
    const proxy = yield* tcpProxy(Number(TEST_NATS_URL.split(":").at(-1)))
    const worker = makeTestApp({ config: { logLevel: LogLevel.Error } })
    const apiSide = Layer.scoped(
      ApiSide,
      Effect.gen(function* () {
        const config = yield* AppConfigTag
        const services = yield* Layer.build(
          makeServices(SandboxProviderLive).pipe(
            Layer.provide(Layer.succeed(AppConfigTag, { ...config, role: "api", natsUrl: Option.some(`127.0.0.1:${proxy.port}`) }))
          )
        )
        // Up before the test starts, as a started process would be.
        yield* waitFor("the API side's NATS link to be up (no bus problem)", Context.get(services, BusHealth).problem, {
          until: Option.isNone,
          timeoutMs: 20_000,
          intervalMs: 100
        })
        return { subscribe: Context.get(services, Subscribe), proxy }
      })
    )
    return apiSide.pipe(Layer.provideMerge(worker))
  })
)

/** Changes of a type heard on the stream until `n` have come (bounded). */
const firstOf = (changes: Stream.Stream<Change>, type: string, n: number) =>
  changes.pipe(
    Stream.filter((c) => c.type === type),
    Stream.take(n),
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray),
    Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`fewer than ${n} ${type} changes within 30 s`) }),
    Effect.orDie
  )

layer(TwoProcesses, { timeout: 120_000, excludeTestServices: true })("subscribe (core NATS) in an API-only process", (it) => {
  it.effect("hears the deposits the worker reconciles, for the account asked about only, across a NATS reconnect", () =>
    Effect.gen(function* () {
      const { subscribe, proxy } = yield* ApiSide
      const t = yield* testTenant
      const watched = yield* createAccount(t.token, "sub-1", "John Adeyemi")
      const other = yield* createAccount(t.token, "sub-2", "Ngozi Eze")
      const heard = yield* Effect.fork(firstOf(subscribe.subscribe(t.tenantId, "test", "sub-1"), "deposit.reconciled", 2))
      const all = yield* Effect.fork(firstOf(subscribe.subscribe(t.tenantId, "test"), "deposit.reconciled", 3))
      yield* Effect.sleep("500 millis") // the subscriptions reach the server

      const first = yield* sendSigned(t, { accountNumber: other.nuban, amountKobo: 1_000, senderName: "Ngozi Eze" })
      const second = yield* sendSigned(t, { accountNumber: watched.nuban, amountKobo: 2_000, senderName: "John Adeyemi" })
      yield* waitForTransactions(t.tenantId, 2)
      yield* Effect.sleep("1 second") // relayed

      // The API process loses NATS for a while and gets it back: its subscriptions carry on.
      yield* proxy.cut
      yield* Effect.sleep("1 second")
      yield* proxy.restore
      yield* Effect.sleep("2 seconds") // reconnected (the client retries every 500 ms) and re-subscribed
      const third = yield* sendSigned(t, { accountNumber: watched.nuban, amountKobo: 3_000, senderName: "John Adeyemi" })
      yield* waitForTransactions(t.tenantId, 3)

      const mine = yield* Fiber.join(heard)
      expect(mine.map((c) => c.subjectKey)).toEqual(["sub-1", "sub-1"])
      expect(mine.map((c) => (c.envelope.data as { transaction?: { reference?: string } }).transaction?.reference)).toEqual([second.sessionId, third.sessionId])
      for (const c of mine) {
        expect(c).toMatchObject({ type: "deposit.reconciled", tenantId: t.tenantId, mode: "test" })
        expect(c.eventId).toBe(c.envelope.id)
        expect(c.envelope).toMatchObject({ type: "deposit.reconciled", mode: "test" })
      }
      const everything = yield* Fiber.join(all)
      expect(everything.map((c) => c.subjectKey)).toEqual(["sub-2", "sub-1", "sub-1"])
      expect(first.body.result).toBe("processed")
    })
  )
})
