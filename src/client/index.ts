import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { PROBLEM_STATUS } from "../contract/Problems.js"
import { Kobo, PositiveKobo } from "../domain/Money.js"
import { Api } from "../http/Api.js"

/**
 * The typed client, `collections-service/client`: `HttpApiClient` derived from the API definition (src/http/Api.ts),
 * so every operation is a method (`client.virtualAccounts.create({ payload })`) whose payload, path and query are
 * checked by the compiler and encoded by the same schemas the service decodes with, whose answer is decoded, and whose
 * errors are the contract's problem classes (`NotFound`, `BadRequest`, ...: `code`, `message`, `errors`). It imports no
 * server code and runs in a browser (the dashboard uses it) as well as on Node 20.
 *
 *   const client = await Effect.runPromise(makeClient({ baseUrl: "http://localhost:3000", token }))
 *   const va = await Effect.runPromise(client.virtualAccounts.get({ path: { accountRef: "order-1" } }))
 */

export { Api }
import {
  BadGateway, BadRequest, Conflict, Forbidden, NotFound, NotImplemented, ServiceUnavailable, TooManyRequests, Unauthorized,
  Unprocessable
} from "../contract/Problems.js"
export {
  BadGateway, BadRequest, Conflict, Forbidden, NotFound, NotImplemented, ServiceUnavailable, TooManyRequests, Unauthorized,
  Unprocessable
}

/** A bearer token for one call, over the client's own (`withToken`). */
export class Bearer extends Context.Tag("collections-service/client/Bearer")<Bearer, string>() {}

/** Runs `effect` (client calls) with `token` as the bearer, whatever token the client was made with. */
export const withToken = (token: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Bearer, token)

/** The media type asked for (`Accept`) for one call, when an operation answers more than JSON (`withAccept`). */
export class AcceptMediaType extends Context.Tag("collections-service/client/Accept")<AcceptMediaType, string>() {}

/**
 * Runs `effect` (client calls) asking for `mediaType`: `ledger.statement(...).pipe(withAccept("text/csv"))` answers
 * the statement's CSV as a string (the operation's text success) instead of the JSON statement.
 */
export const withAccept = (mediaType: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, AcceptMediaType, mediaType)

export interface ClientOptions {
  /** The service's origin, e.g. `http://localhost:3000`; omitted, paths are relative (same origin, in a browser). */
  readonly baseUrl?: string | URL
  /**
   * The bearer token: an API token (`client.auth.token`) or a dashboard token (`client.dashboardPublic.login`), or a
   * function read before every request. `withToken` overrides it for one call.
   */
  readonly token?: string | (() => string | null | undefined)
}

const TAG_OF_STATUS: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(PROBLEM_STATUS).map(([tag, status]) => [status, tag])
)

/**
 * The service's problem documents (RFC 9457 plus `code` and `message`) carry no `_tag`, and the problem classes decode
 * by it: an error answer gets the tag of its status's class before the client decodes it.
 */
const tagProblem = (res: HttpClientResponse.HttpClientResponse) => {
  const tag = TAG_OF_STATUS[res.status]
  if (res.status < 400 || tag === undefined || !/json/.test(res.headers["content-type"] ?? "")) return Effect.succeed(res)
  return Effect.map(Effect.orElseSucceed(res.json, () => undefined), (body) => {
    const tagged = body !== null && typeof body === "object" && !Array.isArray(body) ? { ...body, _tag: tag } : body
    return HttpClientResponse.fromWeb(
      res.request,
      new Response(JSON.stringify(tagged), { status: res.status, headers: res.headers as Record<string, string> })
    )
  })
}

const bearer = (options: ClientOptions) => (req: HttpClientRequest.HttpClientRequest) =>
  Effect.map(Effect.all([Effect.serviceOption(Bearer), Effect.serviceOption(AcceptMediaType)]), ([given, accept]) => {
    const token = Option.getOrElse(given, () => (typeof options.token === "function" ? options.token() : options.token))
    const asked = Option.isSome(accept) ? HttpClientRequest.setHeader(req, "accept", accept.value) : req
    return token ? HttpClientRequest.bearerToken(asked, token) : asked
  })

/** Requests go out with `fetch`, without cookies (the service authenticates by bearer only). */
const FetchLive = Layer.merge(FetchHttpClient.layer, Layer.succeed(FetchHttpClient.RequestInit, { credentials: "omit" }))

type Method = (request?: { readonly path?: Record<string, unknown> }) => unknown

/** Path parameters are sent percent-encoded (HttpApiClient puts them into the URL as they are). */
const encodingPaths = <C>(client: C): C => {
  const wrap = (method: Method): Method => (request) =>
    method(request?.path === undefined ? request : {
      ...request,
      path: Object.fromEntries(Object.entries(request.path).map(([k, v]) => [k, encodeURIComponent(String(v))]))
    })
  return Object.fromEntries(Object.entries(client as Record<string, unknown>).map(([name, group]) => [
    name,
    typeof group === "function"
      ? wrap(group as Method)
      : Object.fromEntries(Object.entries(group as Record<string, Method>).map(([e, m]) => [e, wrap(m)]))
  ])) as C
}

/** The client over `fetch`. */
export const makeClient = (options: ClientOptions = {}) =>
  HttpApiClient.make(Api, {
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequestEffect(bearer(options)),
        HttpClient.transformResponse(Effect.flatMap(tagProblem))
      )
  }).pipe(Effect.map(encodingPaths), Effect.provide(FetchLive))

export type CollectionsClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** Any of the problem classes (an error answer of the service, decoded). */
export type Problem = BadRequest | Unauthorized | Forbidden | NotFound | Conflict | Unprocessable | TooManyRequests | NotImplemented | BadGateway | ServiceUnavailable

/** Whether `e` is one of the problem classes; its HTTP status is `PROBLEM_STATUS[e._tag]`. */
export const isProblem = (e: unknown): e is Problem => {
  const tag = e instanceof Error ? (e as { _tag?: unknown })._tag : undefined
  return typeof tag === "string" && tag in PROBLEM_STATUS && typeof (e as { code?: unknown }).code === "string"
}

export { PROBLEM_STATUS, STATUS_TITLES } from "../contract/Problems.js"
export { Kobo, PositiveKobo }

/** Money on the wire is integer kobo, branded: `kobo(150_000)` is ₦1,500.00 (throws on a fraction or a negative). */
export const kobo = (amount: number): Kobo => Schema.decodeUnknownSync(Kobo)(amount)

/** What an operation answers: `Answer<CollectionsClient["virtualAccounts"]["get"]>` is a virtual account. */
export type Answer<F> = F extends (...args: ReadonlyArray<never>) => Effect.Effect<infer A, infer _E, infer _R>
  ? Exclude<A, readonly [unknown, HttpClientResponse.HttpClientResponse]>
  : never
