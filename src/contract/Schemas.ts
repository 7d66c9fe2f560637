import { ParseResult, Schema } from "effect"

/** `take`: default 50, at most 500 (larger values are clamped by the services). */
export const Take = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "take must be a positive integer" }),
  Schema.positive({ message: () => "take must be a positive integer" })
).annotations({
  jsonSchema: { type: "integer", minimum: 1, default: 50, description: "Page size: default 50, at most 500 (larger values are clamped)." }
})
export const DEFAULT_TAKE = 50
export const MAX_TAKE = 500
export const clampTake = (take: number | undefined) => Math.min(take ?? DEFAULT_TAKE, MAX_TAKE)

/** `startingAfter`: the list's own key (id or reference) of the last item of the previous page. */
export const StartingAfter = Schema.String.pipe(
  Schema.minLength(1, { message: () => "startingAfter must be the id or reference of the last item of the previous page" }),
  Schema.maxLength(200, { message: () => "startingAfter must be at most 200 characters" })
).annotations({ description: "The key (id or reference) of the last item of the previous page; the page starts after it." })

/** Paging query parameters of every list: `take` and `startingAfter`. */
export const PageParams = { take: Schema.optional(Take), startingAfter: Schema.optional(StartingAfter) }
export const TakeParams = Schema.Struct(PageParams)

/**
 * A request body: an object that refuses fields it does not know (400 `unknown_field`, so a misspelt
 * `expectedAmountKobo` never silently creates an open account). Every JSON payload is declared with it.
 */
export const Body = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

/**
 * One of fixed words, matched case-insensitively and trimmed (query and body alike); anything else is a 400 listing
 * every allowed value. Decodes to the canonical spelling.
 */
export const CaseInsensitiveLiteral = <const L extends readonly [string, ...Array<string>]>(name: string, values: L) => {
  const canonical = Schema.Literal(...values)
  const allowed = values.join(", ")
  const wire = Schema.String.annotations({
    // Messages follow the field's path in the 400 ("status: must be one of ..."), so they do not repeat the name.
    message: () => `must be one of ${allowed} (any case)`,
    jsonSchema: { type: "string", enum: values, description: `${name}: one of ${allowed} (matched in any case).` }
  })
  return Schema.transformOrFail(wire, canonical, {
    strict: true,
    decode: (raw, _, ast) => {
      const found = values.find((v) => v.toLowerCase() === raw.trim().toLowerCase())
      return found === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, raw, `must be one of ${allowed} (any case), not ${JSON.stringify(raw)}`))
        : ParseResult.succeed(found as L[number])
    },
    encode: ParseResult.succeed
  })
}

export const ModeSchema = Schema.Literal("test", "live")
export const ModeParam = CaseInsensitiveLiteral("mode", ["test", "live"])

export const Reference = (name: string, max = 100) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => `${name} is required` }),
    Schema.maxLength(max, { message: () => `${name} must be at most ${max} characters` }),
    Schema.pattern(/^[A-Za-z0-9._:\-]+$/, { message: () => `${name} may hold only letters, digits and . _ : -` })
  )

export const NonEmpty = (name: string, max = 200) =>
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => `${name} is required` }),
    Schema.maxLength(max, { message: () => `${name} must be at most ${max} characters` })
  )

/** ISO-8601 date-time string, kept as a string on the wire. */
export const DateTimeString = Schema.String.pipe(
  Schema.filter((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "must be an ISO-8601 date-time such as 2026-11-21T10:00:00Z"
  })
).annotations({ jsonSchema: { format: "date-time" } })

/** A moment on the wire: an ISO-8601 date-time string in UTC (`2026-11-21T10:00:00.000Z`), documented as `date-time`. */
export const Timestamp = Schema.String.annotations({ jsonSchema: { format: "date-time" } })
/** A calendar day on the wire (`2026-11-21`, a Lagos day unless the field says otherwise), documented as `date`. */
export const CalendarDate = Schema.String.annotations({ jsonSchema: { format: "date" } })

export const DateTimeParam = Schema.Date.annotations({
  message: () => "must be an ISO-8601 date-time",
  jsonSchema: { type: "string", format: "date-time", description: "An ISO-8601 date-time such as 2026-11-21T10:00:00Z." }
})

/** A page of a list: at most `take` items, and whether more follow. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
}
/** `rows` were read with `LIMIT take + 1`: the extra row only says that a next page exists. */
export const pageOf = <A>(rows: ReadonlyArray<A>, take: number): Page<A> => ({ data: rows.slice(0, take), hasMore: rows.length > take })

/** A page of a list, newest first: `hasMore` says whether a next page exists (ask with `startingAfter`). */
export const listOf = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({ data: Schema.Array(item), hasMore: Schema.Boolean })

/** Responses whose fields later issues will fix; kept open so the contract can grow without breaking. */
export const OpenObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export const OpenList = listOf(OpenObject)

export const AccountNumber = Schema.String.pipe(
  Schema.pattern(/^\d{10}$/, { message: () => "accountNumber must be 10 digits (a NUBAN)" })
)
export const BankCode = Schema.String.pipe(
  Schema.pattern(/^[0-9A-Z]{3,6}$/, { message: () => "bankCode must be a 3 to 6 character bank code such as 058" })
)

/**
 * A request body every field of which is optional, so the request may also come with no body at all (`curl -X POST`
 * with nothing): no body decodes as null. A body that is there is a `Body` (unknown fields refused).
 */
export const OptionalBody = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.NullOr(Body(fields))
