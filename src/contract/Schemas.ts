import { Schema } from "effect"

/** `take`: default 50, at most 500 (larger values are clamped by the services). */
export const Take = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "take must be a positive integer" }),
  Schema.positive({ message: () => "take must be a positive integer" })
)
export const DEFAULT_TAKE = 50
export const MAX_TAKE = 500
export const clampTake = (take: number | undefined) => Math.min(take ?? DEFAULT_TAKE, MAX_TAKE)

export const TakeParams = Schema.Struct({ take: Schema.optional(Take) })

export const ModeSchema = Schema.Literal("test", "live")

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
)

export const DateTimeParam = Schema.Date.annotations({ message: () => "must be an ISO-8601 date-time" })

export const listOf = <A, I, R>(item: Schema.Schema<A, I, R>) => Schema.Struct({ data: Schema.Array(item) })

/** Responses whose fields later issues will fix; kept open so the contract can grow without breaking. */
export const OpenObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export const OpenList = listOf(OpenObject)

export const AccountNumber = Schema.String.pipe(
  Schema.pattern(/^\d{10}$/, { message: () => "accountNumber must be 10 digits (a NUBAN)" })
)
export const BankCode = Schema.String.pipe(
  Schema.pattern(/^[0-9A-Z]{3,6}$/, { message: () => "bankCode must be a 3 to 6 character bank code such as 058" })
)
