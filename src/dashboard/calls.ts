import { type Query, request } from "./Api.js"
import { token } from "./Session.js"

/** A call with the current mode's dashboard token. */
export const dash = <A>(method: "GET" | "POST" | "PUT" | "DELETE", path: string, options: { body?: unknown; query?: Query } = {}) =>
  request<A>(method, path, { ...options, token: token() })

export const enc = encodeURIComponent
