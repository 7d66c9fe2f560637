import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, LogLevel, Option } from "effect"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForInboxDrained, waitForTransactions } from "../support/Pipeline.js"
import { accountBalance, appTopology, NAMES, tcpProxy, type TcpProxy, TestNatsLive, waitForConsumerIdle } from "../support/Resilience.js"
import { makeTestApp } from "../support/TestApp.js"

class Proxy extends Context.Tag("test/NatsProxy")<Proxy, TcpProxy>() {}

/**
 * The app reaches NATS only through a TCP proxy the test controls; the proxy is built first, so it outlives the app
 * (and the app's JetStream cleanup, which also goes through it).
 */
const AppBehindProxy = Layer.unwrapScoped(
  Effect.map(tcpProxy(4222), (proxy) =>
    // Error level: the outage makes every publish log a (expected) warning.
    makeTestApp({ config: { natsUrl: Option.some(`127.0.0.1:${proxy.port}`), logLevel: LogLevel.Error } }).pipe(Layer.provideMerge(Layer.succeed(Proxy, proxy)))
  )
).pipe(Layer.provideMerge(TestNatsLive))

const N = 30

layer(AppBehindProxy, { timeout: 120_000, excludeTestServices: true })("deposit pipeline resilience: NATS outage", (it) => {
  it.effect(`${N} webhooks that arrive while NATS is down all answer 200 and are all reconciled after it returns`, () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const proxy = yield* Proxy
      const topology = yield* appTopology
      const t = yield* testTenant
      const accounts = yield* Effect.forEach([0, 1, 2], (a) => createAccount(t.token, `outage-${a}`, NAMES[a]!))
      // The pipeline works through the proxy before the outage.
      const warmup = yield* sendSigned(t, { accountNumber: accounts[0]!.nuban, amountKobo: 1_000, senderName: NAMES[0]! })
      expect(warmup.body.result).toBe("processed")
      yield* waitForTransactions(t.tenantId, 1)

      yield* proxy.cut
      const deposits = Array.from({ length: N }, (_, i) => ({ a: i % 3, amountKobo: 5_000 + i * 101 }))
      const started = Date.now()
      // Concurrently: each receiver's publish fails only after its bounded PubAck timeout.
      const answers = yield* Effect.forEach(
        deposits,
        ({ a, amountKobo }) => sendSigned(t, { accountNumber: accounts[a]!.nuban, amountKobo, senderName: NAMES[a]! }),
        { concurrency: "unbounded" }
      )
      const answeredIn = Date.now() - started
      expect(answers.map((r) => r.status)).toEqual(Array(N).fill(200))
      expect(answers.map((r) => r.body.result)).toEqual(Array(N).fill("processed"))
      expect(answeredIn).toBeLessThan(10_000)

      // Durable in the inbox, yet nothing published and nothing reconciled while NATS is away.
      yield* Effect.sleep("3 seconds") // long enough for the sweeper to try (and fail) too
      const during = yield* sql<{ total: number; unpublished: number; reconciled: number }>`
        SELECT count(*)::bigint AS total, count(*) FILTER (WHERE published_at IS NULL)::bigint AS unpublished,
          count(*) FILTER (WHERE reconciled_at IS NOT NULL)::bigint AS reconciled
        FROM inbound_events WHERE tenant_id = ${t.tenantId}`
      expect(during[0]).toEqual({ total: N + 1, unpublished: N, reconciled: 1 })
      const txnsDuring = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM transactions WHERE tenant_id = ${t.tenantId}`
      expect(Number(txnsDuring[0]!.n)).toBe(1)

      yield* proxy.restore
      // The client reconnects; the sweeper re-feeds the unpublished rows; the workers reconcile them.
      yield* waitForTransactions(t.tenantId, N + 1)
      yield* waitForInboxDrained
      yield* waitForConsumerIdle(topology)

      const txns = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId}`
      expect(txns).toHaveLength(N + 1)
      expect(new Set(txns.map((x) => x.reference))).toEqual(new Set([warmup.sessionId, ...answers.map((r) => r.sessionId)]))
      for (const a of [0, 1, 2]) {
        const sum = deposits.filter((d) => d.a === a).reduce((s, d) => s + d.amountKobo, 0) + (a === 0 ? 1_000 : 0)
        expect(yield* accountBalance(t.tenantId, `outage-${a}`)).toBe(sum)
      }
      const published = yield* sql<{ n: number }>`
        SELECT count(*)::bigint AS n FROM inbound_events WHERE tenant_id = ${t.tenantId} AND published_at IS NOT NULL`
      expect(Number(published[0]!.n)).toBe(N + 1)
      yield* assertLedgerInvariant
    })
  )
})
