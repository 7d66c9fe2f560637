import { type Access } from "../contract/OperationDoc.js"
import { isProblemExample, type ProblemExample } from "../contract/OperationExample.js"
import { STATUS_TITLES } from "../contract/Problems.js"
import { problemDocument, TOO_LARGE } from "./Problem.js"
import { UNSUPPORTED_MEDIA_TYPE } from "./InputGuard.js"

type Spec = Record<string, any>

/** What an operation is, for picking the example of a status it does not name itself. */
export interface ExampleContext {
  readonly path: string
  readonly access: Access | undefined
  /** The JSON schema of its request body (resolved), when it takes one. */
  readonly body: Spec | undefined
  /** Its query parameters' names. */
  readonly query: ReadonlyArray<string>
}

const field400 = (c: ExampleContext): ProblemExample => {
  const fields = Object.keys(c.body?.properties ?? {})
  if (fields.length > 0) {
    const required: Array<string> = c.body?.required ?? []
    const f = required[0] ?? fields[0]!
    const message = required.includes(f) ? "is missing" : "is not valid (\"\" was given)"
    return { code: "validation_failed", message: `Invalid request. ${f}: ${message}`, errors: [{ path: f, message }] }
  }
  if (c.query.length > 0) {
    return {
      code: "unknown_parameter",
      message: `Unknown query parameter "limit": it takes ${c.query.map((q) => JSON.stringify(q)).join(", ")}.`,
      errors: [{ path: "limit", message: "is not a query parameter of this endpoint" }]
    }
  }
  return { code: "invalid_text", message: "The path holds a NUL character; text must be valid Unicode without NUL characters." }
}

const FORBIDDEN: Partial<Record<Access, ProblemExample>> = {
  apiTest: { code: "live_key_not_allowed", message: "The sandbox simulator takes a test-mode API key token." },
  apiOrOwnerAdmin: { code: "insufficient_role", message: "This operation needs a dashboard Owner or Admin; you are Member." },
  ownerAdmin: { code: "insufficient_role", message: "This operation needs a dashboard Owner or Admin; you are Member." },
  dashboard: { code: "wrong_plane", message: "This operation is only available from the dashboard plane." }
}

/** The example of a problem status the operation's table leaves out; undefined where there is no sensible default. */
const defaultProblem = (status: number, c: ExampleContext): ProblemExample | undefined => {
  switch (status) {
    case 400: return field400(c)
    case 401: return { code: "missing_token", message: "Send Authorization: Bearer <accessToken>." }
    case 403: return c.access ? FORBIDDEN[c.access] : undefined
    case 413: return TOO_LARGE
    case 415: return UNSUPPORTED_MEDIA_TYPE("text/plain")
    case 429: return { code: "too_many_streams", message: "Too many open streams for this checkout session; close one and retry." }
    case 501: return { code: "not_implemented", message: "This operation is not built yet." }
    case 503: return { code: "database_unavailable", message: "The database is unavailable; retry shortly." }
    default: return undefined
  }
}

/** The path an example request is made to: each `{param}` filled with a plausible value. */
const samplePath = (path: string) => path.replace(/\{provider\}/g, "sandbox").replace(/\{([^}]+)\}/g, (_, name: string) =>
  name === "accountRef" ? "cust-0042" : name === "reference" ? "PSK-20261121-7F3A9C" : name === "merchantTxRef" ? "payout-2026-11-0007"
    : name === "token" ? "chk_9f2c4e7a1b" : name === "ref" ? "PSK-20261121-7F3A9C" : "3f0c2a9e-5b7d-4c1e-9a8f-2d6b1e4c7a90")

/**
 * The problem document an example shows for `status`: the table's `problem(code, message)` or the default, filled in
 * as the service writes it (type, title, status, instance). Undefined when neither says anything.
 */
export const problemExample = (status: number, given: unknown, c: ExampleContext): Spec | undefined => {
  const p = isProblemExample(given) ? given : defaultProblem(status, c)
  if (p === undefined) return undefined
  const doc = problemDocument(status, p, samplePath(c.path))
  return STATUS_TITLES[status] ? doc : { ...doc, title: "Error" }
}
