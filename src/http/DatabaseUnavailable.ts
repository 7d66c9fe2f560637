import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { isDatabaseUnavailable } from "../db/Unreachable.js"
import type * as http from "node:http"
import { PROBLEM_JSON } from "../contract/Problems.js"
import { problemDocument } from "./Problem.js"

/** What a 503 for an unreachable database asks the caller to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

export const DATABASE_UNAVAILABLE = {
  code: "database_unavailable",
  message: "The database cannot be reached right now. Send the request again shortly (see Retry-After); retrying with the same reference is safe."
} as const

export { isDatabaseUnavailable } from "../db/Unreachable.js"

/**
 * HttpApi-level middleware (`HttpApiBuilder.middleware`: it must wrap the router, inside the server's own error
 * handling, which has already written a 500 by the time a server middleware sees the failure): a request that failed because the database is unreachable is answered 503 problem+json
 * (`database_unavailable`) with Retry-After, the answer a provider's or client's retry logic expects, instead of a
 * 500. Every other outcome passes through untouched.
 */
export const databaseUnavailable = HttpMiddleware.make((app) =>
  Effect.catchAllCause(app, (cause) =>
    isDatabaseUnavailable(cause)
      ? Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) =>
        Effect.succeed(
          HttpServerResponse.unsafeJson(problemDocument(503, DATABASE_UNAVAILABLE, req.url), {
            status: 503,
            contentType: PROBLEM_JSON,
            headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }
          })
        ))
      : Effect.failCause(cause)
  )
)

/** The same answer on a plain Node response (the receiver's fast path). */
export const writeDatabaseUnavailable = (res: http.ServerResponse, url: string) => {
  const text = JSON.stringify(problemDocument(503, DATABASE_UNAVAILABLE, url))
  res.writeHead(503, { "content-type": PROBLEM_JSON, "content-length": Buffer.byteLength(text), "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) })
  res.end(text)
}
