import { HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { NotImplemented } from "../../contract/Problems.js"

/** A JSON response with an explicit status, for endpoints whose status depends on the outcome (201 vs 200). */
export const jsonWithStatus = <A, I>(schema: Schema.Schema<A, I>, value: A, status: number) =>
  Effect.flatMap(Schema.encode(schema)(value), (body) => HttpServerResponse.json(body, { status })).pipe(Effect.orDie)

/** Until its issue lands, an endpoint answers 501; nothing else may. */
export const notYet = (what: string) => () =>
  Effect.fail(new NotImplemented({ code: "not_implemented", message: `${what} is part of the interface but not built yet.` }))

export const iso = (d: Date | null) => (d === null ? null : d.toISOString())
