import { HttpApiBuilder, HttpApiSwagger, OpenApi, HttpApp, HttpMiddleware, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Exit, Layer, Option } from "effect"
import { AppConfigTag } from "../Config.js"
import * as crypto from "node:crypto"
import { Api } from "./Api.js"
import { AuthHandlers, DashboardHandlers, DashboardPublicHandlers } from "./handlers/AccessHandlers.js"
import { VirtualAccountHandlers } from "./handlers/AccountsHandlers.js"
import { FlowsHandlers, RulesHandlers } from "./handlers/AutomationHandlers.js"
import { BillingHandlers } from "./handlers/BillingHandlers.js"
import { CheckoutHandlers, CheckoutPublicHandlers } from "./handlers/CheckoutHandlers.js"
import { CopilotHandlers } from "./handlers/CopilotHandlers.js"
import { ReceiverHandlers, TransactionsHandlers } from "./handlers/DepositsHandlers.js"
import { EventsHandlers } from "./handlers/EventsHandlers.js"
import { HealthHandlers } from "./handlers/HealthHandlers.js"
import { InsightsHandlers } from "./handlers/InsightsHandlers.js"
import { LedgerHandlers } from "./handlers/LedgerHandlers.js"
import { SandboxHandlers } from "./handlers/ProvidersHandlers.js"
import { SettingsHandlers, SettlementsHandlers, SubMerchantsHandlers } from "./handlers/SettlementHandlers.js"
import { TransfersHandlers } from "./handlers/TransfersHandlers.js"
import { WebhookEndpointsHandlers } from "./handlers/WebhooksHandlers.js"
import { DashboardRoutes } from "./DashboardPage.js"
import { databaseUnavailable } from "./DatabaseUnavailable.js"
import { patchProblemJson, problemCodeOf, problemDetailsWith, problemResponse } from "./Problem.js"
import { allowedMethods, routeFor, routeTable, type RouteTable, unknownParameters } from "./Routes.js"
import { AuthenticationLive } from "./AuthenticationLive.js"
import { documentOperations } from "./OpenApiDoc.js"
import { Metrics } from "../Metrics.js"
import { MetricsRoute } from "./MetricsRoute.js"

/** A caller's own `x-request-id` is kept when it is a plain token; anything else gets a fresh id. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** Path segments that are secrets (the opaque checkout token) are logged as their parameter name. */
const loggablePath = (url: string) => url.split("?")[0]!.replace(/\/checkout\/(?!sessions(?:\/|$))[^/]+/, "/checkout/{token}")

/** A problem code as the access log writes it: a stable snake_case word, nothing a caller could smuggle in. */
const LOGGABLE_CODE = /^[a-z0-9_]{1,64}$/

/**
 * One access log line per request at info (method, path without its query, status, duration, request id, and on a 4xx
 * or 5xx the problem `code` the answer carries; never a header, token or query string), the request id echoed as
 * `x-request-id`, and every 5xx logged with its cause (501 is expected until its issue lands). The receiver's fast
 * path answers before this app and is not logged: it is the hot path, and a log line per deposit webhook costs
 * throughput.
 */
export const accessLog = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const req = yield* HttpServerRequest.HttpServerRequest
    const given = req.headers["x-request-id"]
    const requestId = given !== undefined && REQUEST_ID.test(given) ? given : crypto.randomUUID()
    const path = loggablePath(req.url)
    // With LOG_FORMAT=json the line's parts are also fields (the text logger would print each on a line of its own).
    const json = Option.exists(yield* Effect.serviceOption(AppConfigTag), (c) => c.logFormat === "json")
    const started = yield* Clock.currentTimeMillis
    const metrics = yield* Metrics
    yield* HttpApp.appendPreResponseHandler((_, res) => Effect.succeed(HttpServerResponse.setHeader(res, "x-request-id", requestId)))
    const report = (status: number, res?: HttpServerResponse.HttpServerResponse, cause?: Cause.Cause<unknown>) =>
      Effect.gen(function* () {
        const durationMs = (yield* Clock.currentTimeMillis) - started
        const labels = { method: req.method, route: routeLabel(req.method, req.url, status), status: String(status) }
        metrics.httpRequests.inc(labels)
        metrics.httpDuration.observe(labels, durationMs / 1000)
        const code = res === undefined ? undefined : problemCodeOf(req, res)
        // One line: the pretty logger would print each annotation on a line of its own.
        const line = `${req.method} ${path} ${status} ${durationMs}ms request=${requestId}${code !== undefined && LOGGABLE_CODE.test(code) ? ` code=${code}` : ""}`
        // 503 is an outage the service reports and rides out (Postgres or NATS away, a stop): a warning, not an error,
        // or a readiness probe polling through an outage floods the log.
        const log = status === 503
          ? Effect.logWarning(line)
          : status >= 500 && status !== 501
            ? (cause ? Effect.logError(line, cause) : Effect.logError(line))
            : Effect.logInfo(line)
        yield* json
          ? Effect.annotateLogs(log, {
            requestId, method: req.method, path, status, durationMs,
            ...(code !== undefined && LOGGABLE_CODE.test(code) ? { code } : {})
          })
          : log
      })
    return yield* app.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? report(exit.value.status, exit.value)
          : Cause.isInterruptedOnly(exit.cause)
            ? report(499)
            : Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([res, cause]) => report(res.status, res, cause))
      )
    )
  })
)

/**
 * A convention the router cannot give (DESIGN.md, "API conventions, second round"), from the API's route table: a
 * query parameter the endpoint does not take is a 400 `unknown_parameter` (Routes.ts). (The 405 with `Allow` is made
 * where the router's 404 is seen: problemDetailsWith.)
 */
export const routeConventions = (table: RouteTable) =>
  HttpMiddleware.make((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
      const unknown = unknownParameters(table, req.method, req.url)
      return unknown ? Effect.succeed(problemResponse(req, 400, unknown)) : app
    })
  )

const API_ROUTES = routeTable(Api)

/** The routes outside the HttpApi, as the metrics label them. */
const OTHER_ROUTES = new Set(["/", "/metrics", "/dashboard", "/docs", "/swagger/v1/swagger.json"])

/**
 * The route a request is counted under: the endpoint's template (`/api/v1/virtual-accounts/:accountRef`), never the
 * raw path with its ids, so the series stay few; a path no route serves is `unmatched`.
 */
const routeLabel = (method: string, url: string, status: number) => {
  const api = routeFor(API_ROUTES, method, url)
  if (api !== undefined) return api.path
  const path = url.split("?")[0]!
  if (status !== 404 && OTHER_ROUTES.has(path)) return path
  if (status !== 404 && path.startsWith("/dashboard/assets/")) return "/dashboard/assets/*"
  if (status !== 404 && path.startsWith("/docs")) return "/docs"
  return "unmatched"
}

/** `GET /` points to the API reference and the dashboard. */
const RootRedirect = HttpApiBuilder.Router.use((router) =>
  router.get(
    "/",
    Effect.succeed(
      HttpServerResponse.unsafeJson(
        {
          message: "The API reference is at /docs (OpenAPI document at /swagger/v1/swagger.json); the dashboard is at /dashboard.",
          docs: "/docs",
          openapi: "/swagger/v1/swagger.json",
          dashboard: "/dashboard"
        },
        { status: 302, headers: { location: "/docs", link: '</docs>; rel="help", </dashboard>; rel="alternate"' } }
      )
    )
  )
)

const HandlersLive = Layer.mergeAll(
  AuthHandlers, DashboardPublicHandlers, DashboardHandlers, VirtualAccountHandlers, TransactionsHandlers, SandboxHandlers,
  ReceiverHandlers, WebhookEndpointsHandlers, TransfersHandlers, RulesHandlers, FlowsHandlers, SubMerchantsHandlers,
  CheckoutHandlers, CheckoutPublicHandlers, InsightsHandlers, BillingHandlers, SettingsHandlers, SettlementsHandlers, CopilotHandlers,
  EventsHandlers, HealthHandlers, LedgerHandlers
)

/** The served API: the definition with its OpenAPI document rewritten for readers (OpenApiDoc.ts, Problem.ts). */
const DocumentedApi = Api.annotate(OpenApi.Transform, (spec) => documentOperations(patchProblemJson(spec)))

export const ApiLive = HttpApiBuilder.api(DocumentedApi).pipe(Layer.provide(HandlersLive), Layer.provide(AuthenticationLive))

/** The HTTP app: the API, its OpenAPI document and a reference UI. Needs an HttpServer and the services. */
export const HttpLive = HttpApiBuilder.serve((app) =>
  accessLog(problemDetailsWith({
    bodyFields: (method, url) => routeFor(API_ROUTES, method, url)?.bodyFields ?? [],
    allowedMethods: (url) => allowedMethods(API_ROUTES, url)
  })(routeConventions(API_ROUTES)(app)))
).pipe(
  Layer.provide(HttpApiBuilder.middleware(databaseUnavailable)),
  Layer.provide(RootRedirect),
  Layer.provide(MetricsRoute),
  Layer.provide(DashboardRoutes),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/swagger/v1/swagger.json" })),
  Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
  Layer.provide(ApiLive)
)
