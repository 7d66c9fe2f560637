import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ACCESS_PROBLEMS } from "./Access.js"
import { ACCOUNTS_PROBLEMS } from "./Accounts.js"
import { DEPOSITS_PROBLEMS } from "./Deposits.js"
import { WEBHOOKS_PROBLEMS } from "./Webhooks.js"
import { TRANSFERS_PROBLEMS } from "./Transfers.js"
import { AUTOMATION_PROBLEMS } from "./Automation.js"
import { SETTLEMENT_PROBLEMS } from "./Settlement.js"
import { CHECKOUT_PROBLEMS } from "./Checkout.js"
import { BILLING_PROBLEMS } from "./Billing.js"
import { INSIGHTS_PROBLEMS } from "./Insights.js"
import { COPILOT_PROBLEMS } from "./Copilot.js"
import { PROVIDERS_PROBLEMS } from "./Providers.js"
import { LEDGER_PROBLEMS } from "./Ledger.js"
import { EVENTS_PROBLEMS } from "./Events.js"

/** The codes the HTTP edge itself answers (validation, routing, authentication in general, outages). */
export const EDGE_PROBLEMS = {
  malformed_request: 400,
  validation_failed: 400,
  unknown_field: 400,
  unknown_parameter: 400,
  invalid_text: 400,
  unknown_starting_after: 400,
  unauthorized: 401,
  forbidden: 403,
  route_not_found: 404,
  method_not_allowed: 405,
  reference_reused: 409,
  request_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  internal_error: 500,
  not_implemented: 501,
  shutting_down: 503,
  database_unavailable: 503,
  bus_unavailable: 503
} as const satisfies Record<string, number>

/**
 * Every problem code the service can answer, with its one HTTP status: the edge's own and each capability's (declared
 * as `<NAME>_PROBLEMS` in its contract module and listed by its manifest; test/Boundaries.test.ts holds the two equal).
 * A code is a key of this record, so it can never map to two statuses; each problem class below accepts only the codes
 * of its own status (checked by the compiler and again when the error is built), and the middleware's own answers
 * (validation, routing, 500) use codes from here too. Declare a code before using it.
 */
export const PROBLEM_CODES = {
  ...EDGE_PROBLEMS,
  ...ACCESS_PROBLEMS,
  ...ACCOUNTS_PROBLEMS,
  ...DEPOSITS_PROBLEMS,
  ...WEBHOOKS_PROBLEMS,
  ...TRANSFERS_PROBLEMS,
  ...AUTOMATION_PROBLEMS,
  ...SETTLEMENT_PROBLEMS,
  ...CHECKOUT_PROBLEMS,
  ...BILLING_PROBLEMS,
  ...INSIGHTS_PROBLEMS,
  ...COPILOT_PROBLEMS,
  ...PROVIDERS_PROBLEMS,
  ...LEDGER_PROBLEMS,
  ...EVENTS_PROBLEMS,
} as const satisfies Record<string, number>

export type ProblemCode = keyof typeof PROBLEM_CODES
/** The codes whose status is `S`. */
export type CodeOf<S extends number> = { [K in ProblemCode]: (typeof PROBLEM_CODES)[K] extends S ? K : never }[ProblemCode]

export const codesOf = <S extends number>(status: S): ReadonlyArray<CodeOf<S>> =>
  (Object.keys(PROBLEM_CODES) as Array<ProblemCode>).filter((c) => PROBLEM_CODES[c] === status) as Array<CodeOf<S>>

export const PROBLEM_JSON = "application/problem+json"

export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
  429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable"
}

/** The HTTP status of each problem class below, by its tag: the one place a class gets its status. */
export const PROBLEM_STATUS = {
  BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409, Unprocessable: 422, TooManyRequests: 429,
  NotImplemented: 501, BadGateway: 502, ServiceUnavailable: 503
} as const satisfies Record<string, number>

type Tag = keyof typeof PROBLEM_STATUS

const FieldError = Schema.Struct({ path: Schema.String, message: Schema.String })

const fieldsOf = <T extends Tag>(tag: T) => ({
  code: Schema.Literal(...(codesOf(PROBLEM_STATUS[tag]) as unknown as [CodeOf<(typeof PROBLEM_STATUS)[T]>])),
  message: Schema.String,
  errors: Schema.optional(Schema.Array(FieldError))
})

const annotations = <A>(tag: Tag): Schema.Annotations.Schema<A> => ({
  ...HttpApiSchema.annotations<A>({ status: PROBLEM_STATUS[tag], title: STATUS_TITLES[PROBLEM_STATUS[tag]] }),
  [HttpApiSchema.AnnotationEncoding]: { kind: "Json", contentType: PROBLEM_JSON } satisfies HttpApiSchema.Encoding
})

// One class per status; the `code` says which case it is.
/** A 400 may name the two names that did not match (`refund_destination_unverified`: the deposit's payer, the bank's account). */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  { ...fieldsOf("BadRequest"), payerName: Schema.optional(Schema.String), accountName: Schema.optional(Schema.String) },
  annotations("BadRequest")
) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fieldsOf("Unauthorized"), annotations("Unauthorized")) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fieldsOf("Forbidden"), annotations("Forbidden")) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fieldsOf("NotFound"), annotations("NotFound")) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fieldsOf("Conflict"), annotations("Conflict")) {}
/** A 422 may say how much is left (`remainingKobo`: of the daily payout cap, or of the available balance). */
export class Unprocessable extends Schema.TaggedError<Unprocessable>()(
  "Unprocessable",
  { ...fieldsOf("Unprocessable"), remainingKobo: Schema.optional(Schema.Int) },
  annotations("Unprocessable")
) {}
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", fieldsOf("TooManyRequests"), annotations("TooManyRequests")) {}
export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", fieldsOf("NotImplemented"), annotations("NotImplemented")) {}
export class BadGateway extends Schema.TaggedError<BadGateway>()("BadGateway", fieldsOf("BadGateway"), annotations("BadGateway")) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fieldsOf("ServiceUnavailable"), annotations("ServiceUnavailable")) {}

/** The things a 404 can name; each has its `<thing>_not_found` code above. */
export type Findable = "tenant" | "api key" | "virtual account" | "transaction" | "webhook endpoint" | "webhook delivery" | "transfer" | "hold" | "rule" | "flow"

/** `startingAfter` names no item of the list (in this tenant and mode). */
export const unknownStartingAfter = (key: string, value: string) =>
  new BadRequest({
    code: "unknown_starting_after",
    message: `startingAfter ${JSON.stringify(value)} is not the ${key} of any item of this list (in this tenant and mode); pass the ${key} of the last item of the previous page.`
  })

export const notFound = (what: Findable, id: string) =>
  new NotFound({
    code: `${what.replace(/ /g, "_")}_not_found` as CodeOf<404>,
    message: `No ${what} ${JSON.stringify(id)} in this tenant and mode.`
  })
