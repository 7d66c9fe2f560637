import { Duration, Effect, Option } from "effect"
import { promises as dns } from "node:dns"
import http from "node:http"
import https from "node:https"
import net from "node:net"
import { parseTargetUrl, pickCheckedAddress } from "./AddressPolicy.js"
import { DeliveryFailed, type DeliveryFailureReason } from "./DeliveryFailed.js"
import { TargetRejected } from "./TargetRejected.js"

/**
 * IO half of the webhook SSRF defence: resolve an endpoint, vet every
 * address with AddressPolicy, and POST to exactly the address that was
 * vetted. Call checkTarget again for every delivery (or use
 * checkAndDeliver): a CheckedTarget from registration time is stale as soon
 * as the tenant's DNS changes (DNS rebinding).
 */

/** Host name -> IP literals. Failures are already phrased for the tenant. */
export type Resolver = (host: string) => Effect.Effect<ReadonlyArray<string>, TargetRejected>

export interface CheckOptions {
  readonly allowInsecure: boolean
  readonly resolve: Resolver
}

export interface CheckedTarget {
  readonly url: URL
  /** Original host name (or IP literal): used for SNI, certificate checks and the Host header. */
  readonly host: string
  readonly port: number
  readonly isIpLiteral: boolean
  /** The first resolved address; every resolved address was checked. The socket connects here and nowhere else. */
  readonly address: string
  readonly family: 4 | 6
}

export interface DeliveryRequest {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Hard limit for connect + TLS + request + response + body drain. Defaults to 10 s. */
  readonly timeoutMs?: number
}

export interface DeliveryResult {
  readonly status: number
}

const RESOLVE_TIMEOUT = Duration.seconds(3)
const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000
// We only care about the status; a receiver streaming a huge or endless body
// must not tie up the worker or its memory.
const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * The OS resolver (getaddrinfo, so /etc/hosts and search domains apply, as
 * they would for any other client on this host). `verbatim` keeps the OS
 * order instead of Node reordering IPv4 first, so "first address" means what
 * the system would have used. getaddrinfo cannot be cancelled; the timeout
 * only stops us waiting for it.
 */
export const systemResolver: Resolver = (host) =>
  Effect.tryPromise({
    try: () => dns.lookup(host, { all: true, verbatim: true }),
    catch: (error) => {
      const code = errorCode(error)
      return new TargetRejected({
        reason:
          code === "ENOTFOUND" || code === "ENODATA"
            ? `host ${host} does not resolve`
            : `could not resolve host ${host}${code === undefined ? "" : ` (${code})`}`
      })
    }
  }).pipe(
    Effect.map((records) => records.map((record) => record.address)),
    Effect.timeoutFail({
      duration: RESOLVE_TIMEOUT,
      onTimeout: () => new TargetRejected({ reason: `resolving host ${host} timed out` })
    })
  )

/**
 * Parse, resolve (IP literals are not resolved) and vet an endpoint URL.
 * With allowInsecure=false every resolved address must be public; one bad
 * record refuses the whole target.
 */
export const checkTarget = (raw: string, opts: CheckOptions): Effect.Effect<CheckedTarget, TargetRejected> =>
  Effect.gen(function*() {
    const policy = { allowInsecure: opts.allowInsecure }
    const parsed = yield* parseTargetUrl(raw, policy)
    const addresses = parsed.isIpLiteral ? [parsed.host] : yield* opts.resolve(parsed.host)
    const picked = yield* pickCheckedAddress(parsed.host, addresses, policy)
    return { ...parsed, ...picked }
  })

/**
 * The check at registration: as checkTarget, except that a host name that does not resolve (yet) is accepted: a
 * tenant may register before its DNS is live, and every delivery checks the resolved addresses again. Resolved
 * addresses are vetted now as at delivery.
 */
export const checkRegistration = (raw: string, opts: CheckOptions): Effect.Effect<URL, TargetRejected> =>
  Effect.gen(function*() {
    const policy = { allowInsecure: opts.allowInsecure }
    const parsed = yield* parseTargetUrl(raw, policy)
    const resolved = parsed.isIpLiteral ? Option.some([parsed.host]) : yield* Effect.option(opts.resolve(parsed.host))
    if (Option.isSome(resolved)) yield* pickCheckedAddress(parsed.host, resolved.value, policy)
    return parsed.url
  })

/** Check the URL afresh and deliver to the address just checked. */
export const checkAndDeliver = (
  raw: string,
  opts: CheckOptions,
  req: DeliveryRequest
): Effect.Effect<DeliveryResult, TargetRejected | DeliveryFailed> =>
  Effect.flatMap(checkTarget(raw, opts), (target) => deliver(target, req))

/**
 * POST `body` to a checked target. The socket goes to `target.address`
 * (an IP literal, so Node performs no DNS lookup of its own), while TLS SNI,
 * certificate verification and the Host header use the original host name.
 * Redirects are never followed: a 3xx is just the status we return, because
 * following one would bypass the check. Fails only when no HTTP status was
 * obtained.
 */
export const deliver = (target: CheckedTarget, req: DeliveryRequest): Effect.Effect<DeliveryResult, DeliveryFailed> =>
  Effect.async<DeliveryResult, DeliveryFailed>((resume) => {
    let settled = false
    let status: number | undefined
    let request: http.ClientRequest | undefined
    let timer: NodeJS.Timeout | undefined
    const settle = (outcome: Effect.Effect<DeliveryResult, DeliveryFailed>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request?.destroy()
      resume(outcome)
    }

    // A hand-built CheckedTarget with a host name here would make Node
    // resolve it again, reopening the rebinding hole.
    if (net.isIP(target.address) === 0) {
      settle(Effect.fail(new DeliveryFailed({ reason: "invalid request" })))
      return
    }

    // One timer for the whole exchange (connect, TLS, response, body
    // drain) rather than Node's per-socket idle timeout, which a receiver
    // trickling bytes could extend forever. Once the status line has arrived
    // the receiver has answered: report that status instead of a timeout, so
    // a slow body does not cause a duplicate delivery on retry.
    timer = setTimeout(() => {
      settle(status === undefined ? Effect.fail(new DeliveryFailed({ reason: "timeout" })) : Effect.succeed({ status }))
    }, deliveryTimeout(req))

    try {
      const client = target.url.protocol === "https:" ? https : http
      request = client.request(requestOptions(target, req))
    } catch (error) {
      // Invalid header names/values throw synchronously.
      settle(Effect.fail(failure(error)))
      return
    }

    request.on("response", (response) => {
      const answered = response.statusCode ?? 0
      status = answered
      let seen = 0
      const finish = () => {
        response.destroy()
        settle(Effect.succeed({ status: answered }))
      }
      response.on("data", (chunk: Buffer) => {
        seen += chunk.length
        if (seen >= MAX_RESPONSE_BYTES) finish()
      })
      response.on("end", finish)
      // The receiver has answered; a broken body does not undo the status.
      response.on("error", finish)
      response.on("close", finish)
    })
    request.on("error", (error) => settle(Effect.fail(failure(error))))
    request.end(req.body)

    // Runs if the fiber is interrupted: tear the socket down at once.
    return Effect.sync(() => {
      clearTimeout(timer)
      request?.destroy()
    })
  })

// setTimeout treats anything above 2^31-1 ms as 1 ms; clamp rather than fire at once.
const MAX_TIMER_MS = 2_147_483_647

const deliveryTimeout = (req: DeliveryRequest): number =>
  req.timeoutMs !== undefined && Number.isFinite(req.timeoutMs) && req.timeoutMs > 0
    ? Math.min(req.timeoutMs, MAX_TIMER_MS)
    : DEFAULT_DELIVERY_TIMEOUT_MS

const requestOptions = (target: CheckedTarget, req: DeliveryRequest): https.RequestOptions => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    // We own framing and routing headers: a caller-supplied Host could
    // point a shared-IP virtual host somewhere else.
    const lower = name.toLowerCase()
    if (lower === "host" || lower === "content-length" || lower === "transfer-encoding" || lower === "connection") {
      continue
    }
    headers[name] = value
  }
  headers["host"] = hostHeader(target)
  headers["content-length"] = String(Buffer.byteLength(req.body))

  const options: https.RequestOptions = {
    method: "POST",
    host: target.address,
    family: target.family,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    headers,
    // One socket per delivery: no pooled connection can be reused for a
    // different tenant or after the address was re-checked.
    agent: false,
    // Belt and braces: should anything make Node look a name up anyway, it
    // still gets only the checked address.
    lookup: pinnedLookup(target.address, target.family)
  }
  if (target.url.protocol === "https:") {
    // SNI must be a name (RFC 6066); for IP literals "" disables it and the
    // certificate is then verified against the IP itself.
    options.servername = target.isIpLiteral ? "" : target.host
    // Explicit so NODE_TLS_REJECT_UNAUTHORIZED=0 in some environment cannot
    // silently turn verification off.
    options.rejectUnauthorized = true
  }
  return options
}

const hostHeader = (target: CheckedTarget): string => {
  // Bracket by the literal's own form: an IPv4-mapped literal is dialled
  // over IPv4 but its Host header is still the IPv6 spelling.
  const name = target.host.includes(":") ? `[${target.host}]` : target.host
  const defaultPort = target.url.protocol === "https:" ? 443 : 80
  return target.port === defaultPort ? name : `${name}:${target.port}`
}

const pinnedLookup = (address: string, family: 4 | 6): net.LookupFunction =>
  ((_hostname: string, options: { readonly all?: boolean }, callback: (...args: Array<unknown>) => void) => {
    if (options.all === true) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as net.LookupFunction

const errorCode = (error: unknown): string | undefined => {
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
const failure = (error: unknown): DeliveryFailed => {
  const code = errorCode(error)
  return code === undefined ? new DeliveryFailed({ reason: reasonFor(code) }) : new DeliveryFailed({ reason: reasonFor(code), code })
}
