import { Cause } from "effect"

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

