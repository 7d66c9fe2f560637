import { HttpApp, HttpIncomingMessage, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import * as FileSystem from "@effect/platform/FileSystem"
import { PROBLEM_JSON, STATUS_TITLES as TITLES } from "../contract/Problems.js"
import { nearest } from "../domain/Nearest.js"
import { decimalKoboInJson, invalidTextInJson, invalidTextInUrl, isJsonMediaType, UNSUPPORTED_MEDIA_TYPE } from "./InputGuard.js"

export { PROBLEM_JSON }
export const MAX_BODY_BYTES = 1024 * 1024

const FieldError = Schema.Struct({ path: Schema.String, message: Schema.String })

/** The wire body of every error: RFC 9457 plus a stable snake_case `code` and a `message`. */
export const ProblemDetails = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  code: Schema.String,
  message: Schema.String,
  instance: Schema.optional(Schema.String),
  errors: Schema.optional(Schema.Array(FieldError)),
  remainingKobo: Schema.optional(Schema.Int),
  payerName: Schema.optional(Schema.String),
  accountName: Schema.optional(Schema.String)
}).annotations({ identifier: "ProblemDetails" })

const DEFAULT_CODES: Record<number, [string, string]> = {
  400: ["malformed_request", "The request body could not be read: send valid JSON (at most 1 MiB) with content-type application/json."],
  401: ["unauthorized", "A valid bearer token is required."],
  403: ["forbidden", "This caller may not do this."],
  404: ["route_not_found", "No such route."],
  405: ["method_not_allowed", "This method is not allowed on this route."],
  500: ["internal_error", "Something went wrong on our side; it has been logged. Retrying with the same reference is safe."]
}

interface Issue { readonly _tag?: string; readonly path?: ReadonlyArray<unknown>; readonly message?: string }
const issuePath = (i: Issue) => (i.path ?? []).map(String).join(".") || "body"

/**
 * What the route table tells the problem rewrite (src/http/Routes.ts; Server.ts passes it in, as this module may not
 * import the API): each endpoint's body fields, for "did you mean"; the methods a path answers, to turn the router's
 * 404 for a known path into a 405 with `Allow`.
 */
export interface RouteHints {
  readonly bodyFields: (method: string, url: string) => ReadonlyArray<string>
  readonly allowedMethods: (url: string) => ReadonlyArray<string>
}
const NO_HINTS: RouteHints = { bodyFields: () => [], allowedMethods: () => [] }

/**
 * Payload schemas refuse excess properties (see `Body` in src/contract/Schemas.ts); those issues become one 400 naming
 * them, with the nearest field the endpoint takes when one is near ("did you mean").
 */
const unknownFields = (issues: ReadonlyArray<Issue>, known: ReadonlyArray<string>) => {
  const names = issues.filter((i) => i._tag === "Unexpected").map(issuePath)
  if (names.length === 0) return undefined
  const list = names.map((n) => JSON.stringify(n)).join(", ")
  // A top-level name is compared with the body's fields; a nested one is named as it is.
  const near = (path: string) => (path.includes(".") ? undefined : nearest(path, known))
  const hints = names.flatMap((n) => {
    const k = near(n)
    return k === undefined ? [] : [` Did you mean ${JSON.stringify(k)} for ${JSON.stringify(n)}?`]
  })
  return {
    code: "unknown_field",
    message: `Unknown field${names.length > 1 ? "s" : ""} ${list}: this endpoint does not take ${names.length > 1 ? "them" : "it"}; check the spelling against the API reference at /docs.${hints.join("")}`,
    errors: names.map((path) => {
      const k = near(path)
      return { path, message: `is not a field of this request${k ? `; did you mean ${JSON.stringify(k)}?` : ""}` }
    })
  }
}

/** Words for the schema names a generated message can carry. */
const NAMED: Readonly<Record<string, string>> = {
  Int: "an integer", Number: "a number", NumberFromString: "a number", String: "a string", Boolean: "true or false",
  Date: "an ISO-8601 date-time", DateFromString: "an ISO-8601 date-time", DateFromSelf: "an ISO-8601 date-time"
}

/**
 * Schema messages name the schema when nothing better was said (`Expected CreateVirtualAccount, actual 5`); a client
 * cannot act on an internal name, so such messages say what was expected in words.
 */
const plainMessage = (i: Issue) => {
  const message = i.message ?? "is invalid"
  const expected = /^Expected (.+?), actual (.*)$/s.exec(message)
  if (!expected) return message
  const what = expected[1]!
  const actual = expected[2]!.length > 80 ? `${expected[2]!.slice(0, 77)}...` : expected[2]!
  if (/^"[^"]*"( \| "[^"]*")*$/.test(what)) return `must be one of ${what.replace(/ \| /g, ", ")}, not ${actual}`
  if (/^(string|number|boolean)$/.test(what)) return `must be a ${what}, not ${actual}`
  if (/^an? [a-z]/.test(what)) return `must be ${what}, not ${actual}`
  if (NAMED[what]) return `must be ${NAMED[what]}, not ${actual}`
  // What is left is a named object schema (the request body's or a nested object's) or a type literal.
  if (/^\{|^[A-Z][A-Za-z]*$/.test(what) && !actual.startsWith("{")) return `must be a JSON object, not ${actual}`
  return `is not valid (${actual} was given)`
}

const fromBody = (status: number, body: Record<string, unknown> | undefined, req: HttpServerRequest.HttpServerRequest, hints: RouteHints) => {
  const fallback = DEFAULT_CODES[status] ?? [`http_${status}`, TITLES[status] ?? "Error"]
  if (body?._tag === "HttpApiDecodeError" && Array.isArray(body.issues)) {
    // An optional field's union reports "Expected undefined" beside the real complaint; keep the first issue per path.
    const unknown = unknownFields(body.issues as Array<Issue>, hints.bodyFields(req.method, req.url))
    if (unknown) return unknown
    const seen = new Set<string>()
    const errors = (body.issues as Array<Issue>)
      .map((i) => ({ path: issuePath(i), message: plainMessage(i) }))
      .filter((e) => !seen.has(e.path) && seen.add(e.path) !== undefined)
    const message = errors.slice(0, 5).map((e) => `${e.path}: ${e.message}`).join("; ")
    return { code: "validation_failed", message: `Invalid request. ${message}`, errors }
  }
  if (typeof body?.code === "string" && typeof body?.message === "string") {
    return {
      code: body.code, message: body.message, ...(Array.isArray(body.errors) ? { errors: body.errors } : {}),
      ...(typeof body.remainingKobo === "number" ? { remainingKobo: body.remainingKobo } : {}),
      ...(typeof body.payerName === "string" ? { payerName: body.payerName } : {}),
      ...(typeof body.accountName === "string" ? { accountName: body.accountName } : {})
    }
  }
  if (status === 404) return { code: fallback[0], message: `No route for ${req.method} ${req.url.split("?")[0]}.` }
  return { code: fallback[0], message: fallback[1] }
}

/** The code, message and details the problem document of an error response (4xx, 5xx) carries. */
const problemOf = (req: HttpServerRequest.HttpServerRequest, res: HttpServerResponse.HttpServerResponse, hints: RouteHints = NO_HINTS) => {
  let body: Record<string, unknown> | undefined
  if (res.body._tag === "Uint8Array") {
    try {
      body = JSON.parse(new TextDecoder().decode(res.body.body))
    } catch {
      body = undefined
    }
  }
  return fromBody(res.status, body, req, hints)
}

/**
 * An error page a handler wrote on purpose for a browser (an HTML body: the hosted checkout's page for an unknown or
 * expired link) goes out as it is, never rewritten to a problem document; its problem code rides in this header, for the
 * access log and for anyone curious.
 */
export const PAGE_PROBLEM_HEADER = "x-problem-code"
const isHtmlPage = (res: HttpServerResponse.HttpServerResponse) =>
  res.body._tag === "Uint8Array" && res.body.contentType.startsWith("text/html")

/**
 * The problem code an error response goes out with (what `rewriteToProblem` will write), for the access log; undefined
 * below 400.
 */
export const problemCodeOf = (req: HttpServerRequest.HttpServerRequest, res: HttpServerResponse.HttpServerResponse): string | undefined =>
  res.status < 400 ? undefined : isHtmlPage(res) ? (res.headers[PAGE_PROBLEM_HEADER] ?? `http_${res.status}`) : problemOf(req, res).code

/** Runs just before every response is written, so built-in 400/404/500s come out as problem documents too. */
const rewriteToProblemWith = (hints: RouteHints): HttpApp.PreResponseHandler => (req, res) => {
  if (res.status < 400 || isHtmlPage(res)) return Effect.succeed(res)
  // The router's own 404 (no route for this method; no body) on a path another method serves: 405 with Allow.
  if (res.status === 404 && res.body._tag === "Empty") {
    const allow = hints.allowedMethods(req.url)
    if (allow.length > 0 && !allow.includes(req.method)) {
      const message = `${req.method} is not allowed on ${req.url.split("?")[0]}; it answers ${allow.join(", ")}.`
      return Effect.succeed(problemResponse(req, 405, { code: "method_not_allowed", message }, { ...res.headers, allow: allow.join(", ") }))
    }
  }
  return Effect.succeed(problemResponse(req, res.status, problemOf(req, res, hints), res.headers))
}
const rewriteToProblem = rewriteToProblemWith(NO_HINTS)

/** The problem document for a status and its code and message; `url` gives the `instance` (query left out). */
export const problemDocument = (
  status: number,
  detail: {
    readonly code: string
    readonly message: string
    readonly errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
    /** A 422 of money out: how much is left (of the daily payout cap). */
    readonly remainingKobo?: number
    /** A refund refused for its destination: the deposit's payer name and the bank's name of the account. */
    readonly payerName?: string
    readonly accountName?: string
  },
  url: string
) => ({
  type: `urn:collections:problem:${detail.code}`,
  title: TITLES[status] ?? "Error",
  status,
  code: detail.code,
  message: detail.message,
  ...(detail.errors ? { errors: detail.errors } : {}),
  ...(detail.remainingKobo !== undefined ? { remainingKobo: detail.remainingKobo } : {}),
  ...(detail.payerName !== undefined ? { payerName: detail.payerName } : {}),
  ...(detail.accountName !== undefined ? { accountName: detail.accountName } : {}),
  instance: url.split("?")[0]
})

/** A problem+json answer: the rewrite's, and a middleware's own refusal (made outside the app, where the rewrite does not run). */
export const problemResponse = (
  req: HttpServerRequest.HttpServerRequest,
  status: number,
  detail: Parameters<typeof problemDocument>[1],
  headers: Record<string, string> = {}
) => HttpServerResponse.unsafeJson(problemDocument(status, detail, req.url), { status, contentType: PROBLEM_JSON, headers })

/** The message of a 413, here and in the receiver's own path. */
export const TOO_LARGE = { code: "payload_too_large", message: `The request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB).` } as const

/** The message of a 500: the cause is logged, never sent. */
export const INTERNAL_ERROR = { code: "internal_error", message: DEFAULT_CODES[500]![1] } as const

/**
 * A body over the limit that declares its length is refused with 413 before it is read (on the methods that carry a
 * body; a GET's is never read). (Reading past the limit makes the Node adapter destroy the request stream, which
 * resets the connection with no answer at all.)
 */
const tooLarge = HttpServerResponse.unsafeJson(TOO_LARGE, { status: 413 })

/** The provider receiver reads its raw body whatever its content type, exactly as its fast path does. */
export const RECEIVER_ROUTE = /^\/(?:api\/v1\/)?webhooks\/[^/?#]+(?:\?.*)?$/
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * The refusals every route shares, before routing and authentication: invalid text in the URL or a JSON body (400
 * invalid_text), a body that is not JSON (415), and a kobo field written with a decimal point (400
 * validation_failed; not on the provider receiver, whose senders write their own formats). Undefined when the request
 * may go on.
 */
const guard = (req: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const inUrl = invalidTextInUrl(req.url)
    if (inUrl) return HttpServerResponse.unsafeJson(inUrl, { status: 400 })
    const hasBody = BODY_METHODS.has(req.method) &&
      (Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined)
    if (!hasBody) return undefined
    const contentType = req.headers["content-type"]
    if (!isJsonMediaType(contentType) && !RECEIVER_ROUTE.test(req.url)) {
      return HttpServerResponse.unsafeJson(UNSUPPORTED_MEDIA_TYPE(contentType!), { status: 415 })
    }
    // The body is read once and cached by the request, so the endpoint's own decoding reads the same text.
    const text = yield* Effect.orElseSucceed(req.text, () => "")
    const inBody = invalidTextInJson(text) ?? (RECEIVER_ROUTE.test(req.url) ? undefined : decimalKoboInJson(text))
    return inBody ? HttpServerResponse.unsafeJson(inBody, { status: 400 }) : undefined
  })

/**
 * Global middleware: problem documents for every error, a bounded request body, and the shared input refusals;
 * `hints` come from the route table (RouteHints).
 */
export const problemDetailsWith = (hints: RouteHints) => HttpMiddleware.make((app) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler(rewriteToProblemWith(hints)),
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) =>
      BODY_METHODS.has(req.method) && Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES
        ? Effect.orDie(rewriteToProblem(req, tooLarge)) // answered here, outside the app, so the pre-response handler would not see it
        : HttpIncomingMessage.withMaxBodySize(
          Effect.flatMap(guard(req), (refused) => refused ? Effect.orDie(rewriteToProblem(req, refused)) : app),
          Option.some(FileSystem.Size(MAX_BODY_BYTES))
        )
    )
  )
)

/** problemDetailsWith, without the route table's hints. */
export const problemDetails = problemDetailsWith(NO_HINTS)

type Spec = Record<string, any>
/** The OpenAPI generator documents built-in errors as application/json; document them as problem+json. */
export const patchProblemJson = (spec: Spec): Spec => {
  for (const path of Object.values(spec.paths ?? {}) as Array<Spec>) {
    for (const op of Object.values(path) as Array<Spec>) {
      for (const [status, response] of Object.entries(op?.responses ?? {}) as Array<[string, Spec]>) {
        if (Number(status) < 400 || !response.content) continue
        response.content = { [PROBLEM_JSON]: { schema: { $ref: "#/components/schemas/ProblemDetails" } } }
      }
    }
  }
  spec.components = spec.components ?? {}
  spec.components.schemas = { ...spec.components.schemas, ProblemDetails: problemDetailsJsonSchema }
  return spec
}

const problemDetailsJsonSchema = {
  type: "object",
  required: ["type", "title", "status", "code", "message"],
  properties: {
    type: { type: "string" }, title: { type: "string" }, status: { type: "integer" },
    code: { type: "string", description: "Stable snake_case error code." },
    message: { type: "string" }, instance: { type: "string" },
    errors: { type: "array", items: { type: "object", required: ["path", "message"], properties: { path: { type: "string" }, message: { type: "string" } } } },
    remainingKobo: { type: "integer", description: "On a 422 of money out: the kobo still allowed (of the daily payout cap or the available balance)." },
    payerName: { type: "string", description: "On `refund_destination_unverified`: the deposit payer's name." },
    accountName: { type: "string", description: "On `refund_destination_unverified`: the name the bank holds for the destination account." }
  }
}
