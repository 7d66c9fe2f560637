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
