import { Config, ConfigError, Effect, Either, LogLevel, Option, Redacted } from "effect"


/** Deposit stream partitions when DEPOSIT_PARTITIONS is not set (docs/configuration.md). */
export const DEFAULT_DEPOSIT_PARTITIONS = 8
/** A reconciler's lease on a partition when RECONCILER_LEASE_MS is not set. */
export const DEFAULT_RECONCILER_LEASE_MS = 6_000

export interface AppConfig {
  readonly port: number
  readonly host: string
  /** None: the embedded Postgres under DATA_DIR. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** None: the in-process bus. */
  readonly natsUrl: Option.Option<string>
  /** Prefixes stream names and subjects so several deployments (or test runs) can share one NATS. */
  readonly natsPrefix: string
  readonly dataDir: string
  /** None: generated and kept under DATA_DIR. */
  readonly tokenSigningKey: Option.Option<Redacted.Redacted<string>>
  /** None: generated and kept under DATA_DIR. Encrypts secrets we must be able to read back (webhook secrets). */
  readonly dataEncryptionKey: Option.Option<Redacted.Redacted<string>>
  readonly logLevel: LogLevel.LogLevel
  /** `text` (default: the readable lines) or `json` (one JSON object per line: LOG_FORMAT=json). */
  readonly logFormat: "text" | "json"
  readonly webhookAllowInsecureTargets: boolean
  readonly webhookRetryDelaysMs: ReadonlyArray<number>
  readonly dbPoolSize: number
  /** Run repeated statements as named prepared statements (off behind a pooler that cannot keep them, e.g. PgBouncer in transaction mode). */
  readonly dbPreparedStatements: boolean
  /** Reconciler partitions: fibers that each apply one set of accounts' deposits in order, a batch per transaction. */
  readonly reconcilerPartitions: number
  /**
   * DEPOSIT_PARTITIONS: the deposit stream's partitions on NATS (subject `deposits.p<N>.<tenant>.<mode>.<NUBAN>`, one
   * durable consumer each). Each is owned by ONE reconciler process at a time (a lease in Postgres), so one account's
   * deposits apply in stream order across worker processes. Must be the same in every process of a deployment (the
   * API processes publish by it). Absent (a configuration built by hand, as in tests): DEFAULT_DEPOSIT_PARTITIONS.
   */
  readonly depositPartitions?: number
  /**
   * RECONCILER_LEASE_MS: how long a reconciler process's ownership of a partition lasts unless renewed (it renews every
   * third of it). A partition whose owner died is taken over after at most this long. Absent: DEFAULT_RECONCILER_LEASE_MS.
   */
  readonly reconcilerLeaseMs?: number
  /** Receiver fibers that commit inbox batches side by side. */
  readonly receiverCommitters: number
  /**
   * What this process runs: `all` (the HTTP API and the workers), `api` (the HTTP API and the receiver only) or
   * `worker` (the reconciler, sweeper, outbox relay, webhook dispatch and table statistics; no HTTP). Split roles
   * need DATABASE_URL and NATS_URL: the embedded database and the in-process bus live in one process.
   */
  readonly role: "all" | "api" | "worker"
  /**
   * With SERVICE_ROLE=all on a real Postgres and NATS: the reconciler runs on a second thread of the process (its own
   * event loop), so the service uses two cores. Off, or on the embedded default, everything shares one thread.
   */
  readonly workerThread: boolean
  /**
   * SANDBOX_LIVE_MODE=1 (development and demos only, announced at start-up): the built-in sandbox bank serves live mode
   * for tenants with no provider connection. Off: live mode needs a real provider (409 provider_not_connected).
   */
  readonly sandboxLiveMode: boolean
  /** PAYSTACK_BASE_URL: where the Paystack adapter calls, for both modes (tests and rehearsals point it at the fake). */
  readonly paystackBaseUrl: string
  /**
   * MONNIFY_BASE_URL: where the Monnify adapter calls, for both modes; unset: https://sandbox.monnify.com for test
   * connections and https://api.monnify.com for live ones (PROVIDERS.md B1).
   */
  readonly monnifyBaseUrl: Option.Option<string>
  /** PROVIDER_SYNC_INTERVAL_MS: how often the missed-webhook sync lists each connection's credits (0: never). */
  readonly providerSyncIntervalMs: number
  /** PROVIDER_SYNC_WINDOW_HOURS: how far back each sync pass looks. */
  readonly providerSyncWindowHours: number
  /** PUBLIC_URL: the service's public origin, for the webhook URL a tenant pastes into its provider's dashboard. */
  readonly publicUrl: Option.Option<string>
  /**
   * METRICS_TOKEN: when set, `GET /metrics` answers only `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise); unset
   * (or absent, as in a configuration built by hand), it is open. Redacted: never logged.
   */
  readonly metricsToken?: Option.Option<Redacted.Redacted<string>>
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: an OTLP/HTTP collector (e.g. http://localhost:4318); spans go to `<it>/v1/traces`.
   * None: no tracer is installed and nothing is exported (src/Tracing.ts).
   */
  readonly otelEndpoint: Option.Option<string>
  /** OTEL_SERVICE_NAME: the traces' `service.name` (default "collections-service"). */
  readonly otelServiceName: string
}

const emptyAsNone = (c: Config.Config<Option.Option<string>>) =>
  c.pipe(Config.map(Option.filter((s) => s.trim() !== "")))

const delaysMs = Config.string("WEBHOOK_RETRY_DELAYS_MS").pipe(
  Config.withDefault("5000,300000,1800000,7200000,18000000,36000000,36000000"),
  Config.mapOrFail((raw) => {
    const parts = raw.split(",").map((p) => p.trim()).filter((p) => p !== "")
    const nums = parts.map(Number)
    return nums.length > 0 && nums.every((n) => Number.isSafeInteger(n) && n >= 0)
      ? Either.right(nums)
      : Either.left(ConfigError.InvalidData([], `WEBHOOK_RETRY_DELAYS_MS must be a comma list of non-negative integer milliseconds, got ${JSON.stringify(raw)}`))
  })
)

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

const flag = (name: string, unset = false) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((raw) => {
      const v = raw.trim().toLowerCase()
      if (v === "") return Either.right(unset)
      if (["0", "false", "no", "off"].includes(v)) return Either.right(false)
      if (["1", "true", "yes", "on"].includes(v)) return Either.right(true)
      return Either.left(ConfigError.InvalidData([], `${name} must be 1 or 0, got ${JSON.stringify(raw)}`))
    })
  )

export const appConfig: Config.Config<AppConfig> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: emptyAsNone(Config.option(Config.string("DATABASE_URL"))).pipe(Config.map(Option.map(Redacted.make))),
  natsUrl: emptyAsNone(Config.option(Config.string("NATS_URL"))),
  natsPrefix: Config.string("NATS_PREFIX").pipe(
    Config.withDefault(""),
    Config.validate({ message: "NATS_PREFIX may hold only letters, digits, '_' and '-', and end with '.'", validation: (s) => s === "" || /^[A-Za-z0-9_-]+\.$/.test(s) })
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  tokenSigningKey: emptyAsNone(Config.option(Config.string("TOKEN_SIGNING_KEY"))).pipe(Config.map(Option.map(Redacted.make))),
  dataEncryptionKey: emptyAsNone(Config.option(Config.string("DATA_ENCRYPTION_KEY"))).pipe(Config.map(Option.map(Redacted.make))),
  logLevel: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  logFormat: Config.literal("text", "json")("LOG_FORMAT").pipe(Config.withDefault("text" as const)),
  webhookAllowInsecureTargets: flag("WEBHOOK_ALLOW_INSECURE_TARGETS"),
  webhookRetryDelaysMs: delaysMs,
  dbPoolSize: Config.integer("DB_POOL_SIZE").pipe(Config.withDefault(10), Config.validate({ message: "DB_POOL_SIZE must be 1..100", validation: (n) => n >= 1 && n <= 100 })),
  dbPreparedStatements: flag("DB_PREPARED_STATEMENTS", true),
  reconcilerPartitions: Config.integer("RECONCILER_PARTITIONS").pipe(
    Config.withDefault(4),
    Config.validate({ message: "RECONCILER_PARTITIONS must be 1..64", validation: (n) => n >= 1 && n <= 64 })
  ),
  depositPartitions: Config.integer("DEPOSIT_PARTITIONS").pipe(
    Config.withDefault(DEFAULT_DEPOSIT_PARTITIONS),
    Config.validate({ message: "DEPOSIT_PARTITIONS must be 1..64", validation: (n) => n >= 1 && n <= 64 })
  ),
  reconcilerLeaseMs: Config.integer("RECONCILER_LEASE_MS").pipe(
    Config.withDefault(DEFAULT_RECONCILER_LEASE_MS),
    Config.validate({ message: "RECONCILER_LEASE_MS must be 1000..600000", validation: (n) => n >= 1_000 && n <= 600_000 })
  ),
  receiverCommitters: Config.integer("RECEIVER_COMMITTERS").pipe(
    Config.withDefault(2),
    Config.validate({ message: "RECEIVER_COMMITTERS must be 1..16", validation: (n) => n >= 1 && n <= 16 })
  ),
  role: Config.literal("all", "api", "worker")("SERVICE_ROLE").pipe(Config.withDefault("all" as const)),
  workerThread: flag("WORKER_THREAD", true),
  sandboxLiveMode: flag("SANDBOX_LIVE_MODE"),
  paystackBaseUrl: Config.string("PAYSTACK_BASE_URL").pipe(
    Config.withDefault("https://api.paystack.co"),
    Config.validate({ message: "PAYSTACK_BASE_URL must be an http(s) URL", validation: isHttpUrl })
  ),
  monnifyBaseUrl: emptyAsNone(Config.option(Config.string("MONNIFY_BASE_URL"))).pipe(
    Config.validate({ message: "MONNIFY_BASE_URL must be an http(s) URL", validation: (o) => Option.isNone(o) || isHttpUrl(o.value) })
  ),
  providerSyncIntervalMs: Config.integer("PROVIDER_SYNC_INTERVAL_MS").pipe(
    Config.withDefault(600_000),
    Config.validate({ message: "PROVIDER_SYNC_INTERVAL_MS must be 0 (off) or at least 1000", validation: (n) => n === 0 || n >= 1000 })
  ),
  providerSyncWindowHours: Config.integer("PROVIDER_SYNC_WINDOW_HOURS").pipe(
    Config.withDefault(48),
    Config.validate({ message: "PROVIDER_SYNC_WINDOW_HOURS must be 1..720", validation: (n) => n >= 1 && n <= 720 })
  ),
  metricsToken: emptyAsNone(Config.option(Config.string("METRICS_TOKEN"))).pipe(Config.map(Option.map(Redacted.make))),
  publicUrl: emptyAsNone(Config.option(Config.string("PUBLIC_URL"))).pipe(
    Config.validate({ message: "PUBLIC_URL must be an http(s) URL", validation: (o) => Option.isNone(o) || isHttpUrl(o.value) }),
    Config.map(Option.map((u) => u.replace(/\/+$/, "")))
  ),
  otelEndpoint: emptyAsNone(Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"))).pipe(
    Config.validate({ message: "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL", validation: (o) => Option.isNone(o) || isHttpUrl(o.value) }),
    Config.map(Option.map((u) => u.replace(/\/+$/, "")))
  ),
  otelServiceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault(""), Config.map((s) => s.trim() || "collections-service"))
}).pipe(
  Config.validate({
    message: "SERVICE_ROLE=api or worker needs DATABASE_URL and NATS_URL (the embedded database and the in-process bus live in one process)",
    validation: (c) => c.role === "all" || (Option.isSome(c.databaseUrl) && Option.isSome(c.natsUrl))
  })
)

export class AppConfigTag extends Effect.Tag("src/AppConfig")<AppConfigTag, AppConfig>() {}
