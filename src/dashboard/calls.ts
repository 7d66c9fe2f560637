import type { Effect } from "effect"
import { type CollectionsClient, withAccept } from "../client/index.js"
import { call, Failure } from "./Client.js"
import { token } from "./Session.js"

/** A call with the current mode's dashboard token. */
export const dash = <A, E>(f: (c: CollectionsClient) => Effect.Effect<A, E>) => call(f, { token: token() })

/**
 * A call asking for CSV (`Accept: text/csv`) with the current mode's dashboard token, for an operation that answers
 * JSON or CSV (the statement): the typed client sends the header (`withAccept`) and answers the operation's text
 * success, a string. The one place the dashboard asks for something other than JSON.
 */
export const dashCsv = async <A, E>(f: (c: CollectionsClient) => Effect.Effect<A | string, E>): Promise<string> => {
  const answer = await call((c) => withAccept("text/csv")(f(c)), { token: token() })
  if (typeof answer !== "string") throw new Failure("The service answered JSON where CSV was asked for.")
  return answer
}

export const enc = encodeURIComponent
