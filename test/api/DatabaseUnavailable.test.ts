import { HttpClient, HttpClientRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, LogLevel, Option } from "effect"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { createAccount, eventBody, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { tcpProxy, type TcpProxy } from "../support/Resilience.js"
import { makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

class Proxy extends Context.Tag("test/PgProxy")<Proxy, TcpProxy>() {}

/** The app reaches Postgres only through a proxy the test can cut (the shared Postgres itself is never touched). */
const AppBehindPgProxy = (fastPath: boolean) =>
  Layer.unwrapScoped(
    Effect.map(tcpProxy(5432), (proxy) =>
      // In-process bus: this is about the database. Fatal level: every failed request during the outage logs.
      makeTestApp({ databasePort: proxy.port, fastPath, config: { natsUrl: Option.none(), logLevel: LogLevel.Fatal } }).pipe(
        Layer.provideMerge(Layer.succeed(Proxy, proxy))
      )
    )
  )

/** A raw request, with the headers of the answer. */
const send = (method: "GET" | "POST", url: string, opts: { token?: string; body?: string; headers?: Record<string, string> } = {}) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(opts.headers ?? {}))
    if (opts.token) req = HttpClientRequest.bearerToken(req, opts.token)
    if (opts.body !== undefined) req = HttpClientRequest.bodyText(req, opts.body, "application/json")
    const res = yield* client.execute(req)
    const text = yield* res.text
    return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) }
  }).pipe(Effect.scoped, Effect.orDie)

const expectDatabaseUnavailable = (r: Effect.Effect.Success<ReturnType<typeof send>>) => {
  expect(r.status).toBe(503)
  expect(r.headers["content-type"]).toContain("application/problem+json")
  expect(r.headers["retry-after"]).toBe("5")
  expect(r.body).toMatchObject({ status: 503, code: "database_unavailable", type: "urn:collections:problem:database_unavailable" })
}

/** Retries until the call answers `status` (the pool may hand out a connection the outage broke, once): about 10 s. */
const until = (status: number, call: ReturnType<typeof send>) =>
  waitFor(
    `an answer ${status}`,
    // never a 500 on the way back (an assertion: fails the wait at once)
    Effect.tap(call, (r) => Effect.sync(() => r.status === status || expect(r.status).toBe(503))),
    { until: (r) => r.status === status, timeoutMs: 10_000, intervalMs: 200 }
  )

layer(AppBehindPgProxy(true), { timeout: 120_000, excludeTestServices: true })("Postgres unreachable", (it) => {
  it.effect("the API, the receiver's fast path and /readyz answer 503 database_unavailable with Retry-After; all recover", () =>
    Effect.gen(function* () {
      const proxy = yield* Proxy
      const t = yield* testTenant
      const acct = yield* createAccount(t.token, "pg-1", "John Adeyemi")
      const webhook = (path: string) => {
        const body = eventBody(t, { accountNumber: acct.nuban, amountKobo: 10_000 })
        return send("POST", path, { body: JSON.stringify(body), headers: { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, body) } })
      }
      // Before: all fine (and the receiver has the merchant's credentials cached).
      expect((yield* webhook("/webhooks/sandbox")).status).toBe(200)
      expect((yield* send("GET", "/api/v1/virtual-accounts/pg-1", { token: t.token })).status).toBe(200)

      yield* proxy.cut
      const getAccount = send("GET", "/api/v1/virtual-accounts/pg-1", { token: t.token })
      expectDatabaseUnavailable(yield* getAccount)
      // The receiver's fast path, for a merchant whose credentials it has cached and for one it must look up.
      const during = eventBody(t, { accountNumber: acct.nuban, amountKobo: 20_000 })
      const duringRequest = send("POST", "/webhooks/sandbox", { body: JSON.stringify(during), headers: { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, during) } })
      expectDatabaseUnavailable(yield* duringRequest)
      expectDatabaseUnavailable(yield* webhook("/api/v1/webhooks/sandbox"))
      const stranger = eventBody({ merchantId: "mch_unknown" }, { accountNumber: acct.nuban, amountKobo: 1 })
      expectDatabaseUnavailable(yield* send("POST", "/webhooks/sandbox", { body: JSON.stringify(stranger), headers: { "x-sandbox-signature": "x" } }))
      const ready = yield* send("GET", "/readyz")
      expectDatabaseUnavailable(ready)
      expect(ready.body.message).toContain("database is unreachable")
      expect((yield* send("GET", "/healthz")).status).toBe(200)

      yield* proxy.restore
      expect((yield* until(200, getAccount)).body.accountRef).toBe("pg-1")
      // The provider retries the webhook it got a 503 for: now it is taken, once.
      const retried = yield* until(200, duringRequest)
      expect(retried.body).toEqual({ result: "processed", reference: during.sessionId })
      yield* waitForTransactions(t.tenantId, 2)
      expect((yield* send("GET", "/readyz")).status).toBe(200)
    })
  )
})

layer(AppBehindPgProxy(false), { timeout: 120_000, excludeTestServices: true })("Postgres unreachable, receiver without its fast path", (it) => {
  it.effect("the HttpApi receiver answers 503 database_unavailable with Retry-After, then takes the retried webhook", () =>
    Effect.gen(function* () {
      const proxy = yield* Proxy
      const t = yield* testTenant
      const acct = yield* createAccount(t.token, "pg-2", "John Adeyemi")
      const body = eventBody(t, { accountNumber: acct.nuban, amountKobo: 30_000 })
      const webhook = send("POST", "/api/v1/webhooks/sandbox", { body: JSON.stringify(body), headers: { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, body) } })
      yield* proxy.cut
      expectDatabaseUnavailable(yield* webhook)
      yield* proxy.restore
      expect((yield* until(200, webhook)).body).toEqual({ result: "processed", reference: body.sessionId })
      yield* waitForTransactions(t.tenantId, 1)
    })
  )
})
