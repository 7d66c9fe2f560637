import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import http from "node:http"
import type net from "node:net"
import { Webhook } from "standardwebhooks"
import type { AppConfig } from "../../src/Config.js"
import type { Mode } from "../../src/domain/Mode.js"
import { Outbox } from "../../services/outbox/Outbox.js"
import { sampleTransaction } from "./EventSamples.js"
import type { DispatcherOptions } from "../../services/webhooks/Dispatcher.js"
import type { Resolver } from "../../services/webhooks/SafeTarget.js"
import { TargetRejected } from "../../services/webhooks/TargetRejected.js"
import { TargetResolver } from "../../services/webhooks/TargetResolver.js"
import { makeWebhookDispatcherLive } from "../../services/webhooks/WebhooksLive.js"
import { makeTestApp } from "./TestApp.js"
import { sleep } from "./Wait.js"

// ---------------------------------------------------------------- the app

/** A DNS table the test can rewrite at any time (to play DNS rebinding); unknown names do not resolve. */
export const mutableDns = (initial: Record<string, ReadonlyArray<string>> = {}) => {
  const table = new Map(Object.entries(initial))
  const resolve: Resolver = (host) => {
    const answer = table.get(host)
    return answer === undefined ? Effect.fail(new TargetRejected({ reason: `host ${host} does not resolve` })) : Effect.succeed(answer)
  }
  return { resolve, set: (host: string, addresses: ReadonlyArray<string>) => void table.set(host, addresses) }
}

/**
 * Every log line (message, annotations and cause, rendered) the app and the dispatchers write, in place of the
 * console. Give the app `logLevel: LogLevel.All` too: makeTestApp sets its own minimum level.
 */
export const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
    const parts = [logLevel.label, Array.isArray(message) ? message.map(String).join(" ") : String(message)]
    for (const [k, v] of annotations) parts.push(`${k}=${String(v)}`)
    if (!Cause.isEmpty(cause)) parts.push(Cause.pretty(cause, { renderErrorCause: true }))
    lines.push(parts.join(" "))
  })
  return { lines, layer: Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.All)) }
}

/**
 * The real HTTP app without the background workers (each test starts its own dispatchers), with an optional DNS
 * table for endpoint host names and an optional log capture.
 */
export const makeWebhooksTestApp = (options: { config?: Partial<AppConfig>; resolver?: Resolver; logs?: Layer.Layer<never> } = {}) => {
  const app = makeTestApp<never, never>({ config: { webhookRetryDelaysMs: [50, 100, 200, 400, 800], ...options.config }, workers: false })
  const withResolver = options.resolver === undefined ? app : app.pipe(Layer.provideMerge(Layer.succeed(TargetResolver, options.resolver)))
  return options.logs === undefined ? withResolver : withResolver.pipe(Layer.provide(options.logs))
}

/** Starts a dispatcher in its own scope, as a separate process would; `stop` closes that scope (a restart). */
export const startDispatcher = (options: Partial<DispatcherOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(makeWebhookDispatcherLive({ pollMs: 50, ...options }), scope)
    return { stop: Scope.close(scope, Exit.void) }
  })

/** Stages events straight into the outbox, as the reconciler does in its transaction. */
export const stageEvents = (tenantId: string, mode: Mode, count: number, type: "deposit.reconciled" | "transaction.review_required" = "deposit.reconciled") =>
  Effect.gen(function* () {
    const outbox = yield* Outbox
    const events = Array.from({ length: count }, (_, i) => ({
      tenantId,
      mode,
      type,
      subjectKey: `acct-${i}`,
      // A deposit's data as its schema has it (src/contract/Events.ts), with text that must reach the receiver as is.
      data: { transaction: { ...sampleTransaction, reference: `ref-${i}`, amountKobo: 150_000 + i, narration: "naïve café ₦" }, account: null, risk: { score: 0, reasons: [] } }
    }))
    return yield* outbox.stage(events)
  })

/** Sleeps on the wall clock whatever Clock the test runs with (a TestClock would never wake a plain sleep). */
export const realSleep = sleep

export interface DeliveryState {
  readonly id: string
  readonly eventId: string
  readonly endpointId: string
  readonly status: string
  readonly attempts: number
  readonly roundFailures: number
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly nextAttemptAt: Date | null
}

/** The tenant's delivery rows as stored, oldest first. */
export const deliveryRows = (tenantId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<DeliveryState>`
      SELECT id, event_id, endpoint_id, status, attempts, round_failures, last_status_code, last_error, next_attempt_at
      FROM webhook_deliveries WHERE tenant_id = ${tenantId} ORDER BY seq`
  }).pipe(Effect.orDie)

// ---------------------------------------------------------------- the receiver

export interface ReceivedRequest {
  readonly path: string
  readonly webhookId: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  /** The status this receiver answered. */
  readonly status: number
  /** True when `standardwebhooks` accepted the signature with the path's secret. */
  readonly verified: boolean
}

/** What the receiver answers on a path; may delay. Default: 200. */
export type Behaviour = (req: { readonly path: string; readonly webhookId: string }) => number | Promise<number>

/**
 * A tenant's webhook receiver on 127.0.0.1: it verifies every request's signature with the independent
 * `standardwebhooks` package, answers per the behaviour, and records everything, including how many TCP
 * connections it accepted and the most requests it held at once per path.
 */
export const webhookReceiver = Effect.acquireRelease(
  Effect.async<{ readonly server: http.Server; readonly receiver: Receiver }>((resume) => {
    const secrets = new Map<string, string>()
    const requests: Array<ReceivedRequest> = []
    const open = new Map<string, number>()
    const peak = new Map<string, number>()
    let behaviour: Behaviour = () => 200
    let connections = 0
    const server = http.createServer((req, res) => {
      const path = (req.url ?? "").split("?")[0]!
      // In flight until the exchange ends either way (answered, or the client gave up and hung up).
      open.set(path, (open.get(path) ?? 0) + 1)
      peak.set(path, Math.max(peak.get(path) ?? 0, open.get(path)!))
      res.once("close", () => open.set(path, open.get(path)! - 1))
      let body = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (body += chunk))
      req.on("end", () => {
        const webhookId = String(req.headers["webhook-id"] ?? "")
        const secret = secrets.get(path)
        let verified = false
        try {
          if (secret !== undefined) {
            new Webhook(secret).verify(body, req.headers as Record<string, string>)
            verified = true
          }
        } catch {
          verified = false
        }
        void Promise.resolve(behaviour({ path, webhookId })).then((status) => {
          if (res.destroyed) return
          requests.push({ path, webhookId, headers: req.headers, body, status, verified })
          res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "nope")
        })
      })
    })
    server.on("connection", () => (connections += 1))
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      const receiver: Receiver = {
        port,
        url: (path) => `http://127.0.0.1:${port}${path}`,
        register: (path, secret) => void secrets.set(path, secret),
        answer: (b) => void (behaviour = b),
        requests,
        connections: () => connections,
        peakInFlight: (path) => peak.get(path) ?? 0,
        successes: (path, webhookId) => requests.filter((r) => r.path === path && r.webhookId === webhookId && r.status < 300).length
      }
      resume(Effect.succeed({ server, receiver }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ receiver }) => receiver))

export interface Receiver {
  readonly port: number
  readonly url: (path: string) => string
  /** The signing secret the endpoint on this path was given; requests are verified with it. */
  readonly register: (path: string, secret: string) => void
  readonly answer: (behaviour: Behaviour) => void
  readonly requests: ReadonlyArray<ReceivedRequest>
  readonly connections: () => number
  readonly peakInFlight: (path: string) => number
  /** How many 2xx answers this receiver gave for the webhook id on the path. */
  readonly successes: (path: string, webhookId: string) => number
}
