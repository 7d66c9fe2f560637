/**
 * What the OpenAPI document shows as examples for one operation (keyed by operationId, `group.endpoint`, like the
 * operation docs): the request body it takes and a response per documented status. A capability lists its own in
 * `services/<name>/<Name>Examples.ts` (its manifest's `examples`); src/http/OpenApiDoc.ts puts them in the document and
 * test/api/OpenApiExamples.test.ts decodes each one with the endpoint's own Schema.
 *
 * Success bodies are written whole, in their wire form (kobo as integers, dates as ISO-8601 strings). A problem status
 * needs only its `code` and `message` (`problem(...)`); the rest of the problem document is filled in. 400, 401, 403,
 * 413, 415, 429, 501 and 503 have defaults (src/http/ProblemExamples.ts), so a table names those only where the
 * operation answers something more telling; 404, 409, 422 and 502 have no default: say what this operation answers.
 */
import type { ProblemCode } from "./Problems.js"

export interface ProblemExample {
  readonly code: ProblemCode
  readonly message: string
  readonly errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  readonly remainingKobo?: number
  readonly payerName?: string
  readonly accountName?: string
}

export interface OperationExample {
  /** The request body, when the operation takes one. */
  readonly request?: unknown
  /** A body per status: the success's as sent, a problem's as `problem(code, message)`. */
  readonly responses?: Readonly<Record<number, unknown>>
}

const PROBLEM = Symbol.for("collections/ProblemExample")
export const problem = (code: ProblemCode, message: string, details: Omit<ProblemExample, "code" | "message"> = {}): ProblemExample =>
  ({ [PROBLEM]: true, code, message, ...details }) as ProblemExample
export const isProblemExample = (u: unknown): u is ProblemExample => typeof u === "object" && u !== null && PROBLEM in u

/** A list page's example: the items given, and no further page. */
export const page = <A>(...data: ReadonlyArray<A>) => ({ data, hasMore: false })

export type OperationExamples = Readonly<Record<string, OperationExample>>
