import { Data } from "effect"

/**
 * Coarse, stable classification of why a POST never produced an HTTP status.
 * Deliberately a small closed set: these end up in delivery logs and in the
 * tenant-facing attempt history, so they must never carry request headers
 * (signatures, tokens) or the payload.
 */
export type DeliveryFailureReason =
  | "timeout"
  | "connection refused"
  | "connection reset"
  | "unreachable"
  | "tls"
  | "invalid request"
  | "network error"

export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  readonly reason: DeliveryFailureReason
  /**
   * The Node/OpenSSL error code (e.g. "ECONNREFUSED",
   * "ERR_TLS_CERT_ALTNAME_INVALID") when there is one. Only the code is kept,
   * never the error message, because messages can quote header names,
   * hostnames or certificate contents.
   */
  readonly code?: string
}> {
  override get message(): string {
    return this.code === undefined ? this.reason : `${this.reason} (${this.code})`
  }
}

/** A Node error's code, when it is a well-formed identifier. */
export const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined
  const code = error.code
  // Only well-formed identifiers: anything else could be arbitrary text.
  return typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined
}

const TLS_CODES: ReadonlySet<string> = new Set([
  "EPROTO",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "HOSTNAME_MISMATCH"
])

const reasonFor = (code: string | undefined): DeliveryFailureReason => {
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ECONNRESET":
    case "ECONNABORTED":
    case "EPIPE":
      return "connection reset"
    case "ETIMEDOUT":
      return "timeout"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "EHOSTDOWN":
    case "ENETDOWN":
    case "EADDRNOTAVAIL":
      return "unreachable"
    case "ERR_INVALID_CHAR":
    case "ERR_INVALID_HTTP_TOKEN":
    case "ERR_HTTP_INVALID_HEADER_VALUE":
    case "ERR_INVALID_ARG_TYPE":
    case "ERR_INVALID_ARG_VALUE":
      return "invalid request"
  }
  if (code !== undefined && (code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || TLS_CODES.has(code))) {
    return "tls"
  }
  return "network error"
}

/** Keep only the error code: Node's messages can quote header names or cert details. */
export const deliveryFailure = (error: unknown): DeliveryFailed => {
  const code = errorCode(error)
  return code === undefined ? new DeliveryFailed({ reason: reasonFor(code) }) : new DeliveryFailed({ reason: reasonFor(code), code })
}
