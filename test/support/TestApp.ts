import { AutomationSettings, type AutomationSettingsShape, TEST_AUTOMATION } from "../../services/automation/AutomationSettings.js"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Layer, LogLevel, Logger, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { type AppConfig, AppConfigTag } from "../../src/Config.js"
import { MigratorLive, pgClientLayer } from "../../src/db/Database.js"
import { NodeServerTest } from "../../src/http/NodeServer.js"
import { ReceiverFastPathLive } from "../../src/http/ReceiverFastPath.js"
import { HttpLive } from "../../src/http/Server.js"
import { makeServices, WorkersLive } from "../../src/Services.js"
import { SandboxProviderLive } from "../../services/providers/SandboxProvider.js"
import type { BankProvider } from "../../services/providers/BankProvider.js"
import { deleteTopology } from "../../streams/JetStream.js"
import { NatsLive } from "../../streams/Nats.js"
import { tempDir } from "./Processes.js"
import { TestDatabaseUrl, TestMigratedDatabaseLive } from "./TestDatabase.js"
import { MoneyOutSettings, type MoneyOutSettingsShape } from "../../services/transfers/Settings.js"
import { SettlementRunSettings, type SettlementRunSettingsShape } from "../../services/settlement/SettlementRunSettings.js"
import { CheckoutSettings, type CheckoutSettingsShape } from "../../services/checkout/Checkout.js"
import { BillingWorkerSettings, type BillingWorkerSettingsShape } from "../../services/billing/BillingPasses.js"

/**
 * Settlement in tests: no auto-settle worker of the app's own (a test that needs one runs `autoSettleLoop` on its
 * TestClock, or calls POST /settlements/run); runs as in production otherwise.
 */
export const TEST_SETTLEMENT: SettlementRunSettingsShape = { intervalMs: 60_000, worker: false, concurrency: 4, maxAccountsPerRun: 50_000, runLeaseMs: 60_000 }

/**
 * Money-out timings for tests: a claim's lease and the status checks short, the completer and the sandbox bank's
 * reports quick, so crash recovery and asynchronous outcomes happen within a test's patience.
 */
export const TEST_MONEY_OUT: MoneyOutSettingsShape = {
  leaseMs: 1_500,
  completerIntervalMs: 200,
  statusCheckAfterMs: 600,
  // Below the lease: a claimer still waiting on the provider must never see its lease taken over.
  providerTimeoutMs: 700,
  bankListTtlMs: 3_600_000,
  sandboxReportDelayMs: 50,
  sandboxReportIntervalMs: 50
}

export const testConfig = (overrides: Partial<AppConfig> = {}): AppConfig => ({
  port: 0,
  host: "127.0.0.1",
  databaseUrl: Option.none(),
  natsUrl: Option.some(process.env.TEST_NATS_URL ?? "127.0.0.1:4222"),
  natsPrefix: `t${crypto.randomBytes(5).toString("hex")}.`,
  dataDir: tempDir("collections-test-"),
  tokenSigningKey: Option.some(Redacted.make(crypto.randomBytes(32).toString("base64url"))),
  dataEncryptionKey: Option.some(Redacted.make(crypto.randomBytes(32).toString("base64url"))),
  logLevel: LogLevel.Warning,
  logFormat: "text",
  webhookAllowInsecureTargets: true,
  webhookRetryDelaysMs: [100, 200, 400],
  dbPoolSize: 8,
  dbPreparedStatements: true,
  reconcilerPartitions: 4,
  receiverCommitters: 2,
  role: "all",
  workerThread: false,
  // Tests and demos let the sandbox serve live mode; test/providers/NotSandbox.test.ts runs with it off.
  sandboxLiveMode: true,
  paystackBaseUrl: "http://127.0.0.1:9",
  monnifyBaseUrl: Option.some("http://127.0.0.1:9"),
  providerSyncIntervalMs: 0,
  providerSyncWindowHours: 48,
  publicUrl: Option.none(),
  otelEndpoint: Option.none(),
  otelServiceName: "collections-service",
  ...overrides
})

/**
 * A migrated fresh database on the real Postgres (a clone of the migrated template: see TestDatabase.ts), with its
 * SqlClient. The migrator still runs, and finds nothing to do.
 */
export const TestSql = Layer.unwrapEffect(
  Effect.map(TestDatabaseUrl, ({ url }) => MigratorLive.pipe(Layer.provideMerge(pgClientLayer(url, 8))))
).pipe(Layer.provideMerge(TestMigratedDatabaseLive))

/** As TestSql, but the app reaches its database through 127.0.0.1:`port` (a TCP proxy a test can cut). */
export const TestSqlVia = (port: number) =>
  Layer.unwrapEffect(
    Effect.map(TestDatabaseUrl, ({ url }) => {
      const via = new URL(Redacted.value(url))
      via.hostname = "127.0.0.1"
      via.port = String(port)
      return MigratorLive.pipe(Layer.provideMerge(pgClientLayer(Redacted.make(via.toString()), 8)))
    })
  ).pipe(Layer.provideMerge(TestMigratedDatabaseLive))

/**
 * When the app runs on JetStream, deletes the run's streams (prefix `natsPrefix`) as the app stops. Built before the
 * app, so its finalizer runs after the workers and the app's NATS connection are gone. Best effort and bounded.
 */
const JetStreamCleanupLive = (config: AppConfig) =>
  Option.match(config.natsUrl, {
    onNone: () => Layer.empty,
    onSome: (url) =>
      Layer.scopedDiscard(
        Effect.addFinalizer(() =>
          deleteTopology({ prefix: config.natsPrefix }).pipe(
            Effect.provide(NatsLive(url, "test-cleanup")),
            Effect.timeout("10 seconds"),
            Effect.ignore
          )
        )
      )
  })

/**
 * The workers' loops (partition leases, sweepers, runners) sleep on the fiber's Clock. Under @effect/vitest's `layer()`
 * without `excludeTestServices: true` that is a TestClock, and a loop's first sleep never ends: the reconciler's
 * partitions went unowned whenever NATS was not up at its first look (test/events/Events.test.ts reconciled nothing in
 * two loaded full runs). So an app with workers refuses to start on a TestClock.
 */
const WorkersOnLiveClock = Layer.effectDiscard(
  Effect.clockWith((clock) =>
    typeof (clock as { readonly adjust?: unknown }).adjust === "function"
      ? Effect.dieMessage("makeTestApp with workers needs the live clock: give layer() { excludeTestServices: true }, or make the app with workers: false")
      : Effect.void
  )
)

/**
 * The real service over real HTTP (random port) on a fresh database. `HttpClient` in the context points at it.
 * `fastPath: false` leaves the provider webhooks to the HttpApi handler (the receiver's fast path is on in the service).
 */
export const makeTestApp = <E = never, R = never>(
  options: {
    config?: Partial<AppConfig>
    provider?: Layer.Layer<BankProvider, E, R>
    workers?: boolean
    fastPath?: boolean
    /** The app reaches Postgres through this local port (a proxy to 127.0.0.1:5432) instead of directly. */
    databasePort?: number
    /** Money-out timings over TEST_MONEY_OUT. */
    moneyOut?: Partial<MoneyOutSettingsShape>
    /** Rules-and-flows consumer timings over TEST_AUTOMATION. */
    automation?: Partial<AutomationSettingsShape>
    /** Settlement runs over TEST_SETTLEMENT. */
    settlement?: Partial<SettlementRunSettingsShape>
    /** Checkout stream settings over the defaults (heartbeat 15 s, 2,000 streams, 5 per token). */
    checkout?: Partial<CheckoutSettingsShape>
    /** The billing clock: off by default in tests (a test forks `billingPassesLoop` on its TestClock, or calls tick). */
    billing?: Partial<BillingWorkerSettingsShape>
    /** Built before the app, as src/Service.ts builds TracingLive (e.g. src/TracingSdk.ts's tracingLayer with an in-memory exporter). */
    tracing?: Layer.Layer<never>
  } = {}
) => {
  const config = testConfig(options.config)
  const http = options.fastPath === false ? HttpLive : Layer.merge(HttpLive, ReceiverFastPathLive)
  return (options.workers === false ? http : Layer.mergeAll(http, WorkersLive, WorkersOnLiveClock)).pipe(
    Layer.provideMerge(NodeServerTest),
    Layer.provideMerge(makeServices(options.provider ?? (SandboxProviderLive as unknown as Layer.Layer<BankProvider, E, R>))),
    Layer.provideMerge(options.databasePort === undefined ? TestSql : TestSqlVia(options.databasePort)),
    Layer.provideMerge(Layer.succeed(AppConfigTag, config)),
    Layer.provideMerge(JetStreamCleanupLive(config)),
    Layer.provideMerge(Layer.succeed(MoneyOutSettings, { ...TEST_MONEY_OUT, ...options.moneyOut })),
    Layer.provideMerge(Layer.succeed(AutomationSettings, { ...TEST_AUTOMATION, ...options.automation })),
    Layer.provideMerge(Layer.succeed(SettlementRunSettings, { ...TEST_SETTLEMENT, ...options.settlement })),
    Layer.provideMerge(Layer.succeed(BillingWorkerSettings, { intervalMs: 30_000, worker: false, ...options.billing })),
    Layer.provideMerge(Layer.succeed(CheckoutSettings, { heartbeatMs: 15_000, maxStreams: 2_000, maxStreamsPerToken: 5, ...options.checkout })),
    // Without a tracing layer, Effect's tracer is off, as in the service without OTEL_EXPORTER_OTLP_ENDPOINT (src/Tracing.ts).
    Layer.provideMerge(options.tracing ?? Layer.setTracerEnabled(false)),
    Layer.provide(Logger.minimumLogLevel(config.logLevel))
  )
}

export interface Answer {
  readonly status: number
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
}

/**
 * Raw HTTP calls, so tests see exact statuses, headers and content types. `rawBody` goes as it is, with `contentType`
 * (application/json unless given).
 */
export const call = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  url: string,
  opts: { token?: string; json?: unknown; rawBody?: string; contentType?: string; headers?: Record<string, string> } = {}
) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(opts.headers ?? {}))
    if (opts.token) req = HttpClientRequest.bearerToken(req, opts.token)
    if (opts.json !== undefined) req = HttpClientRequest.bodyUnsafeJson(req, opts.json)
    if (opts.rawBody !== undefined) req = HttpClientRequest.bodyText(req, opts.rawBody, opts.contentType ?? "application/json")
    const res = yield* client.execute(req)
    const text = yield* res.text
    let body: any = text
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      body = text
    }
    return { status: res.status, contentType: res.headers["content-type"] ?? "", headers: res.headers, body } satisfies Answer
  }).pipe(Effect.scoped, Effect.orDie)

/** One signed-up tenant and a test API token, made on first use and shared by a test file's cases. */
export const sharedTenant = () =>
  Effect.cached(
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      return { ownerToken, token }
    })
  ).pipe(Effect.runSync)


/** Signs up a tenant and returns its Owner's dashboard token (live mode) and ids. */
export const signup = (suffix = crypto.randomBytes(4).toString("hex")) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/dashboard/signup", {
      json: { businessName: `Biz ${suffix}`, email: `owner-${suffix}@example.ng`, password: "correct horse battery staple" }
    })
    if (r.status !== 201) return yield* Effect.die(new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`))
    return { tenantId: r.body.tenantId as string, ownerToken: r.body.accessToken as string, email: `owner-${suffix}@example.ng` }
  })

/** Creates an API key of the mode and exchanges it for a bearer token. */
export const apiToken = (dashboardToken: string, mode: "test" | "live") =>
  Effect.gen(function* () {
    const key = yield* call("POST", "/api/v1/dashboard/api-keys", { token: dashboardToken, json: { mode } })
    if (key.status !== 201) return yield* Effect.die(new Error(`key creation failed: ${key.status} ${JSON.stringify(key.body)}`))
    const tok = yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })
    return { keyId: key.body.id as string, clientId: key.body.clientId as string, clientSecret: key.body.clientSecret as string, token: tok.body.accessToken as string }
  })
