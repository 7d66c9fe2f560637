import { Effect } from "effect"
import http from "node:http"
import https from "node:https"
import net from "node:net"
import { DeliveryFailed, deliveryFailure } from "./DeliveryFailed.js"
import type { CheckedTarget } from "./SafeTarget.js"

/** The POST half of the webhook SSRF defence (SafeTarget.ts checks): one request, to the vetted address only. */

export interface DeliveryRequest {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Hard limit for connect + TLS + request + response + body drain. Defaults to 10 s. */
  readonly timeoutMs?: number
}

export interface DeliveryResult {
  readonly status: number
}

const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000
// We only care about the status; a receiver streaming a huge or endless body
// must not tie up the worker or its memory.
const MAX_RESPONSE_BYTES = 64 * 1024

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
      settle(Effect.fail(deliveryFailure(error)))
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
    request.on("error", (error) => settle(Effect.fail(deliveryFailure(error))))
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
