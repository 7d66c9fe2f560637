import { Cause, Effect, Exit, Option, ParseResult } from "effect"
import { type CollectionsClient, isProblem, makeClient, type Problem, withToken } from "../client/index.js"

/**
 * The dashboard's calls, through the typed client (`collections-service/client`, src/client): each call names an
 * operation of the API definition (`c.virtualAccounts.list({ urlParams })`), so paths, bodies and answers are the
 * contract's types. A failure is thrown as the operation's problem class (`NotFound`, `BadRequest`, ...: `code`,
 * `message`, `errors`); what is not a problem of the operation (no network, a 500, an answer that did not decode)
 * becomes a `Failure` with words for a person. Same origin only, bearer token only (no cookies).
 */

const client: CollectionsClient = Effect.runSync(makeClient())

/** Any other failure of a call, in words; `status` is 0 when the service was not reached. */
export class Failure extends Error {
  constructor(
    message: string,
    readonly status = 0,
    readonly errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
  ) {
    super(message)
  }
}

export { isProblem }

export type Shown = Problem | Failure

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
}

/** Called when a call answers 401: the session is over (expired or revoked). */
let onUnauthorized: (e: Problem) => void = () => {}
export const setUnauthorizedHandler = (f: (e: Problem) => void) => {
  onUnauthorized = f
}

const NETWORK = "The service could not be reached. Check your connection and try again."

/** A failure that is not one of the operation's problems, in words (the service's own message when it sent one). */
const toFailure = (e: unknown): Effect.Effect<Failure> => {
  const tag = (e as { _tag?: string } | null)?._tag
  if (tag === "RequestError") return Effect.succeed(new Failure(NETWORK))
  if (tag === "ResponseError") {
    const response = (e as { response: { status: number; json: Effect.Effect<unknown, unknown> } }).response
    return Effect.map(Effect.orElseSucceed(response.json, () => undefined), (body) => {
      const message = (body as { message?: unknown } | undefined)?.message
      return new Failure(typeof message === "string" ? message : `The service answered ${response.status}.`, response.status)
    })
  }
  if (ParseResult.isParseError(e)) {
    // The client checks a request against the operation's schema before sending it (and the answer after).
    const errors = ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({ path: i.path.join(".") || "body", message: i.message }))
    return Effect.succeed(new Failure(`Invalid request. ${errors.slice(0, 5).map((i) => `${i.path}: ${i.message}`).join("; ")}`, 0, errors))
  }
  return Effect.succeed(new Failure(`Something went wrong: ${e instanceof Error ? e.message : String(e)}`))
}

/**
 * A body a form builds field by field, given the operation's payload type: the client encodes it with the operation's
 * schema before sending, so a wrong field is refused (a `Failure` naming it) without a round trip.
 */
export const formBody = <T>(body: Record<string, unknown> | ReadonlyArray<Record<string, unknown>>): T => body as unknown as T

/** Query parameters from a form's filters: the empty ones left out (the client sends what is given). */
export const params = <T>(query: Record<string, unknown>): T =>
  Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== "")) as T

/** One call with `token` (none for the public operations); a 401 ends the session unless `quiet401`. */
export const call = async <A, E>(
  f: (c: CollectionsClient) => Effect.Effect<A, E>,
  options: { readonly token?: string | null; readonly quiet401?: boolean } = {}
): Promise<A> => {
  const effect = options.token ? withToken(options.token)(f(client)) : f(client)
  const exit = await Effect.runPromiseExit(
    Effect.catchAll(effect, (e): Effect.Effect<never, Shown> => (isProblem(e) ? Effect.fail(e) : Effect.flatMap(toFailure(e), Effect.fail)))
  )
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Failure(`The page failed: ${Cause.pretty(exit.cause)}`)
  if (isProblem(failure.value) && failure.value._tag === "Unauthorized" && !options.quiet401) onUnauthorized(failure.value)
  throw failure.value
}
