import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/**
 * Every problem code the service can answer, with its one HTTP status. A code is a key of this record, so it can never
 * map to two statuses; each problem class below accepts only the codes of its own status (checked by the compiler and
 * again when the error is built), and the middleware's own answers (validation, routing, 500) use codes from here too.
 * Add a code here before using it.
 */
export const PROBLEM_CODES = {
  // 400
  malformed_request: 400,
  validation_failed: 400,
  unknown_field: 400,
  invalid_text: 400,
  invalid_webhook_url: 400,
  account_ref_required: 400,
  account_ref_not_applicable: 400,
  unknown_starting_after: 400,
  invalid_bank_account: 400,
  reserved_reference: 400,
  no_refundable_surplus: 400,
  nothing_available: 400,
  destination_missing: 400,
  refund_destination_unverified: 400,
  hold_exceeds_available: 400,
  gate_required: 400,
  gate_not_applicable: 400,
  payout_account_unverified: 400,
  unknown_sub_merchant: 400,
  sub_merchant_unverified: 400,
  invalid_split_plan: 400,
  invalid_date_range: 400,
  settlement_account_missing: 400,
  empty_prompt: 400,
  provider_credentials_invalid: 400,
  provider_mode_mismatch: 400,
  // 401
  unauthorized: 401,
  missing_token: 401,
  invalid_token: 401,
  token_expired: 401,
  token_revoked: 401,
  user_not_found: 401,
  invalid_client: 401,
  invalid_credentials: 401,
  invalid_signature: 401,
  sandbox_not_live: 401,
  // 403
  forbidden: 403,
  wrong_plane: 403,
  insufficient_role: 403,
  live_key_not_allowed: 403,
  onboarding_not_approved: 403,
  // 404
  route_not_found: 404,
  unknown_provider: 404,
  tenant_not_found: 404,
  api_key_not_found: 404,
  virtual_account_not_found: 404,
  transaction_not_found: 404,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  transfer_not_found: 404,
  hold_not_found: 404,
  bank_account_not_found: 404,
  rule_not_found: 404,
  flow_not_found: 404,
  sub_merchant_not_found: 404,
  checkout_session_not_found: 404,
  schedule_not_found: 404,
  // 405
  method_not_allowed: 405,
  // 409
  reference_reused: 409,
  request_in_progress: 409,
  account_has_activity: 409,
  email_taken: 409,
  not_pending_review: 409,
  webhook_delivery_succeeded: 409,
  refund_in_progress: 409,
  hold_not_active: 409,
  limit_reached: 409,
  flag_not_rejectable: 409,
  duplicate_reference: 409,
  settlement_in_progress: 409,
  schedule_exists: 409,
  schedule_cancelled: 409,
  account_not_billable: 409,
  provider_in_use: 409,
  provider_not_connected: 409,
  // 413
  payload_too_large: 413,
  // 415
  unsupported_media_type: 415,
  // 429
  too_many_streams: 429,
  // 422
  unprocessable: 422,
  account_name_mismatch: 422,
  insufficient_balance: 422,
  daily_payout_cap_exceeded: 422,
  recipient_not_found: 422,
  // 500
  internal_error: 500,
  // 501
  not_implemented: 501,
  // 502
  provider_unavailable: 502,
  // 503
  shutting_down: 503,
  database_unavailable: 503,
  bus_unavailable: 503
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
