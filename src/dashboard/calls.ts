import type { Effect } from "effect"
import type { CollectionsClient } from "../client/index.js"
import { call } from "./Client.js"
import { token } from "./Session.js"

/** A call with the current mode's dashboard token. */
export const dash = <A, E>(f: (c: CollectionsClient) => Effect.Effect<A, E>) => call(f, { token: token() })

export const enc = encodeURIComponent
