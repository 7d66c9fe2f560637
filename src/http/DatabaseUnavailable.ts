import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect } from "effect"
import type * as http from "node:http"
import { PROBLEM_JSON } from "../contract/Problems.js"
import { problemDocument } from "./Problem.js"

/** What a 503 for an unreachable database asks the caller to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

export const DATABASE_UNAVAILABLE = {
  code: "database_unavailable",
  message: "The database cannot be reached right now. Send the request again shortly (see Retry-After); retrying with the same reference is safe."
} as const

/**
 * Errors that say the database could not be reached or went away, not that a statement was wrong: refused or reset
 * connections, the pool's connect timeout, the server shutting down or starting up (57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now), class 08 connection exceptions and too many connections (53300).
 */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"])
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"])
const MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed|connect ECONNREFUSED/i

const isConnectionLevel = (e: unknown, depth = 0): boolean => {
  if (depth > 6 || e === null || typeof e !== "object") return false
  const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  if (typeof code === "string" && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || code.startsWith("08"))) return true
  // Only what came from the database driver: a SqlError's message is its own ("Failed to execute statement").
  if (depth > 0 && typeof message === "string" && MESSAGES.test(message)) return true
  if (Array.isArray(errors) && errors.some((x) => isConnectionLevel(x, depth + 1))) return true
  return isConnectionLevel(cause, depth + 1)
}

/** Whether a request failed because the database is unreachable (a failure or a defect holding such an error). */
export const isDatabaseUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some((e) => isConnectionLevel(e))

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
