import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, LogLevel, Option } from "effect"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForInboxDrained, waitForTransactions } from "../support/Pipeline.js"
import { freePort, http, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { NAMES, tcpProxy, type TcpProxy } from "../support/Resilience.js"
import { ownNatsServer, type OwnNatsServer } from "../support/NatsServer.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

class Server extends Context.Tag("test/OwnNatsServer")<Server, OwnNatsServer>() {}
class Proxy extends Context.Tag("test/NatsProxy")<Proxy, TcpProxy>() {}

const N = 20

/** Sends N signed webhooks over three accounts, concurrently; all must answer 200 at once, NATS or not. */
const sendDeposits = (t: Effect.Effect.Success<typeof testTenant>, accounts: ReadonlyArray<{ nuban: string }>, n: number) =>
  Effect.gen(function* () {
    const started = Date.now()
    const answers = yield* Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => sendSigned(t, { accountNumber: accounts[i % 3]!.nuban, amountKobo: 5_000 + i * 101, senderName: NAMES[i % 3]! }),
      { concurrency: 8 }
    )
    expect(answers.map((r) => r.status)).toEqual(Array(n).fill(200))
    expect(answers.map((r) => r.body.result)).toEqual(Array(n).fill("processed"))
    // The receiver does not wait on a publish timeout while NATS is down: the bus says "not sent" at once.
    expect(Date.now() - started).toBeLessThan(5_000)
    return answers.map((r) => r.sessionId)
  })

/** Every reference reconciled exactly once, each once in the outbox, balances and ledger consistent. */
const assertReconciledOnce = (tenantId: string, references: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* waitForTransactions(tenantId, references.length)
    yield* waitForInboxDrained
    const txns = yield* sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${tenantId}`
    expect(txns.map((x) => x.reference).sort()).toEqual([...references].sort())
    const events = yield* sql<{ n: number }>`
      SELECT count(*)::bigint AS n FROM outbox WHERE tenant_id = ${tenantId} AND event_type = 'deposit.reconciled'`
    expect(Number(events[0]!.n)).toBe(references.length)
    yield* assertLedgerInvariant
  })

const expectNotReady = Effect.gen(function* () {
  const ready = yield* call("GET", "/readyz")
  expect(ready.status).toBe(503)
  expect(ready.contentType).toContain("application/problem+json")
  expect(ready.body.message).toContain("NATS is unreachable")
  expect((yield* call("GET", "/healthz")).body).toEqual({ status: "ok" })
})

const expectReady = Effect.gen(function* () {
  const ready = yield* waitFor("/readyz to answer 200", call("GET", "/readyz"), { until: (r) => r.status === 200, timeoutMs: 10_000, intervalMs: 100 })
  expect(ready.body).toEqual({ status: "ready", database: "ok", bus: "jetstream" })
})

/** The app on its own nats-server, which is NOT running when the app starts. */
const AppWithoutNats = Layer.unwrapScoped(
  Effect.gen(function* () {
    const server = yield* ownNatsServer(yield* Effect.promise(freePort))
    return makeTestApp({ config: { natsUrl: Option.some(server.url), logLevel: LogLevel.Error } }).pipe(Layer.provideMerge(Layer.succeed(Server, server)))
  })
)

layer(AppWithoutNats, { timeout: 120_000, excludeTestServices: true })("the service while NATS is down from the start", (it) => {
  it.effect(`starts and answers without NATS; ${N} deposits wait in the inbox and are reconciled once NATS comes; a NATS crash later changes nothing`, () =>
    Effect.gen(function* () {
      const server = yield* Server
      const sql = yield* SqlClient.SqlClient
      yield* expectNotReady
      // The API works (signup, keys, accounts) and the receiver answers 200, all without NATS.
      const t = yield* testTenant
      const accounts = yield* Effect.forEach([0, 1, 2], (a) => createAccount(t.token, `down-${a}`, NAMES[a]!))
      const first = yield* sendDeposits(t, accounts, N)
      yield* Effect.sleep("3 seconds") // the sweeper tries (and fails) at least once
      const waiting = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM inbound_events WHERE tenant_id = ${t.tenantId} AND reconciled_at IS NULL`
      expect(Number(waiting[0]!.n)).toBe(N)
      yield* expectNotReady

      // NATS comes: the link connects, ensures the topology, the sweeper re-feeds, the reconciler reconciles.
      yield* server.start
      yield* assertReconciledOnce(t.tenantId, first)
      yield* expectReady

      // NATS crashes and comes back on the same store: the same connection reconnects and the consumer resumes.
      yield* server.kill
      yield* expectNotReady
      const second = yield* sendDeposits(t, accounts, N)
      yield* server.start
      yield* assertReconciledOnce(t.tenantId, [...first, ...second])
      yield* expectReady
    })
  )
})

/**
 * NATS accepts the connection, then dies while the layers are being built: the proxy in front of the app's own
 * nats-server cuts every connection at the first JetStream API request (the topology being ensured at start-up).
 */
const AppWhoseNatsDiesAtStart = Layer.unwrapScoped(
  Effect.gen(function* () {
    const server = yield* ownNatsServer(yield* Effect.promise(freePort))
    yield* server.start
    const proxy = yield* tcpProxy(server.port, { cutWhen: (chunk) => chunk.includes("$JS.API") })
    return makeTestApp({ config: { natsUrl: Option.some(`127.0.0.1:${proxy.port}`), logLevel: LogLevel.Error } }).pipe(
      Layer.provideMerge(Layer.succeed(Proxy, proxy))
    )
  })
)

layer(AppWhoseNatsDiesAtStart, { timeout: 120_000, excludeTestServices: true })("the service whose NATS dies during start-up", (it) => {
  it.effect(`starts anyway; ${N} deposits wait and are reconciled once NATS is back`, () =>
    Effect.gen(function* () {
      const proxy = yield* Proxy
      // NATS was reached, and died at the first JetStream request.
      yield* waitFor("the proxy to NATS to be cut", proxy.tripped, { timeoutMs: 5_000, intervalMs: 50 })
      expect(yield* proxy.tripped).toBe(true)
      yield* expectNotReady
      const t = yield* testTenant
      const accounts = yield* Effect.forEach([0, 1, 2], (a) => createAccount(t.token, `died-${a}`, NAMES[a]!))
      const refs = yield* sendDeposits(t, accounts, N)
      yield* proxy.restore
      yield* assertReconciledOnce(t.tenantId, refs)
      yield* expectReady
    })
  )
})

describe("the service process (SERVICE_ROLE=all, reconciler on its worker thread) with NATS down at start", () => {
  it.live("starts, answers, reports not ready, becomes ready when NATS comes, and stops cleanly", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* ownNatsServer(yield* Effect.promise(freePort))
        const name = yield* Effect.promise(() => createScratchDatabase("natsdown"))
        yield* Effect.addFinalizer(() => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined)))
        const port = yield* Effect.promise(freePort)
        const service = yield* Effect.promise(() =>
          startService({ PORT: String(port), DATABASE_URL: databaseUrl(name), NATS_URL: server.url, NATS_PREFIX: "natsdown.", DATA_DIR: tempDir("natsdown-"), LOG_LEVEL: "Warn" })
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => service.child.kill("SIGKILL")))
        const probe = (path: string) => Effect.promise(() => http(service.baseUrl, "GET", path))
        expect((yield* probe("/healthz")).status).toBe(200)
        const notReady = yield* probe("/readyz")
        expect(notReady.status).toBe(503)
        expect(notReady.body.message).toContain("NATS is unreachable")
        yield* Effect.sleep("2 seconds")
        expect(service.child.exitCode).toBe(null) // still running: NATS is no reason to stop
        yield* server.start
        const ready = yield* waitFor("/readyz to answer 200", probe("/readyz"), { until: (r) => r.status === 200, timeoutMs: 10_000, intervalMs: 100 })
        expect(ready.body).toEqual({ status: "ready", database: "ok", bus: "jetstream" })
        service.child.kill("SIGTERM")
        const exit = yield* Effect.promise(() => Promise.race([service.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 30_000))]))
        expect(exit).toEqual({ code: 0, signal: null })
      })
    ), 120_000)
})
