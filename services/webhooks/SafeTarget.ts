import { Duration, Effect, Option } from "effect"
import { promises as dns } from "node:dns"
import { parseTargetUrl, pickCheckedAddress } from "./AddressPolicy.js"
import { type DeliveryRequest, type DeliveryResult, deliver } from "./Deliver.js"
import { type DeliveryFailed, errorCode } from "./DeliveryFailed.js"
import { TargetRejected } from "./TargetRejected.js"

/**
 * IO half of the webhook SSRF defence: resolve an endpoint, vet every
 * address with AddressPolicy, and POST (Deliver.ts) to exactly the address that was
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

const RESOLVE_TIMEOUT = Duration.seconds(3)

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
