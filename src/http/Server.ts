import { HttpApiBuilder, HttpApiSwagger, HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Exit, Layer } from "effect"
import { Api } from "./Api.js"
import { AuthHandlers, DashboardHandlers, DashboardPublicHandlers } from "./handlers/AuthHandlers.js"
import {
  BillingHandlers, CheckoutHandlers, CheckoutPublicHandlers, CopilotHandlers, FlowsHandlers, InsightsHandlers, RulesHandlers,
  SettingsHandlers, SettlementsHandlers, SubMerchantsHandlers, TransfersHandlers
} from "./handlers/LaterHandlers.js"
import { ReceiverHandlers, SandboxHandlers, TransactionsHandlers } from "./handlers/DepositHandlers.js"
import { HealthHandlers } from "./handlers/HealthHandlers.js"
import { WebhookEndpointsHandlers } from "./handlers/WebhookEndpointHandlers.js"
import { VirtualAccountHandlers } from "./handlers/VirtualAccountHandlers.js"
import { databaseUnavailable } from "./DatabaseUnavailable.js"
import { problemDetails } from "./Problem.js"
import { AuthenticationLive } from "./Security.js"

/** Logs what an operator needs: every 5xx with its cause (501 is expected until its issue lands); client errors at debug. */
const logOutcomes = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const req = yield* HttpServerRequest.HttpServerRequest
    const route = `${req.method} ${req.url.split("?")[0]}`
    const report = (status: number, cause?: Cause.Cause<unknown>) =>
      status >= 500 && status !== 501
        ? cause ? Effect.logError(`request answered ${status}: ${route}`, cause) : Effect.logError(`request answered ${status}: ${route}`)
        : status >= 400 ? Effect.logDebug(`request answered ${status}: ${route}`) : Effect.void
    return yield* app.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? report(exit.value.status)
          : Cause.isInterruptedOnly(exit.cause)
            ? Effect.void
            : Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([res, cause]) => report(res.status, cause))
      )
    )
  })
)

const HandlersLive = Layer.mergeAll(
  AuthHandlers, DashboardPublicHandlers, DashboardHandlers, VirtualAccountHandlers, TransactionsHandlers, SandboxHandlers,
  ReceiverHandlers, WebhookEndpointsHandlers, TransfersHandlers, RulesHandlers, FlowsHandlers, SubMerchantsHandlers,
  CheckoutHandlers, CheckoutPublicHandlers, InsightsHandlers, BillingHandlers, SettingsHandlers, SettlementsHandlers, CopilotHandlers,
  HealthHandlers
)

export const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive), Layer.provide(AuthenticationLive))

/** The HTTP app: the API, its OpenAPI document and a reference UI. Needs an HttpServer and the services. */
export const HttpLive = HttpApiBuilder.serve((app) => logOutcomes(problemDetails(app))).pipe(
  Layer.provide(HttpApiBuilder.middleware(databaseUnavailable)),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/swagger/v1/swagger.json" })),
  Layer.provide(HttpApiSwagger.layer({ path: "/docs" })),
  Layer.provide(ApiLive)
)
