import { Either } from "effect"
import ipaddr from "ipaddr.js"
import { TargetRejected } from "./TargetRejected.js"

/**
 * Pure SSRF policy for outbound webhook endpoints: which URLs a tenant may
 * register and which IP addresses we may connect to. No IO here; resolving
 * names lives in SafeTarget.ts (connecting in Deliver.ts), which runs these
 * same rules at registration time and again at every delivery.
 */

export interface ParsedTarget {
  readonly url: URL
  /** Host name or IP literal: lower-cased, IPv6 without brackets, no trailing dot. */
  readonly host: string
  readonly port: number
  readonly isIpLiteral: boolean
}

export interface TargetPolicyOptions {
  /**
   * Local development and tests only: permits plain http and non-public
   * hosts/addresses. Structural checks (scheme is http(s), no userinfo,
   * port not 0, valid host) still apply.
   */
  readonly allowInsecure: boolean
}

/** A resolved address that passed the policy and is the one to connect to. */
export interface PickedAddress {
  readonly address: string
  readonly family: 4 | 6
}

// Long enough for any sane endpoint; stops tenants storing megabyte "URLs".
const MAX_URL_LENGTH = 2048

// Named for the reader; all of these are also refused by address, this only
// gives the tenant a clearer reason.
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean...
  "169.254.170.2", // AWS ECS task metadata
  "100.100.100.200", // Alibaba Cloud
  "192.0.0.192", // Oracle Cloud
  "fd00:ec2::254" // AWS IMDS over IPv6
])

// Exact host names that reach instance metadata or the local machine. Most
// are single-label and refused anyway; listed so the reason is explicit.
const BLOCKED_HOSTS: ReadonlySet<string> = new Set([
  "localhost",
  "metadata",
  "metadata.google.internal",
  "instance-data",
  "kubernetes.default",
  "kubernetes.default.svc"
])

// Special-use / private-use suffixes (RFC 6761, 6762, 8375; ICANN's 2024
// ".internal" reservation) plus the infrastructure .arpa tree. Such names
// only mean something inside some private network, never on the internet.
const BLOCKED_SUFFIXES: ReadonlyArray<string> = [
  ".localhost",
  ".local",
  ".internal",
  ".localdomain",
  ".home.arpa",
  ".arpa",
  ".invalid",
  ".onion",
  ".svc"
]

const IPV4_RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: "an unspecified (0.0.0.0/8) address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT (100.64.0.0/10) address",
  private: "a private-network address",
  reserved: "a reserved, benchmarking or documentation address",
  as112: "an AS112 address",
  amt: "an AMT relay anycast address"
}

const IPV6_RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: "the unspecified address (::)",
  linkLocal: "a link-local address",
  multicast: "a multicast address",
  loopback: "a loopback address",
  uniqueLocal: "a unique-local (fc00::/7) address",
  ipv4Mapped: "an IPv4-mapped address",
  discard: "a discard-only address",
  rfc6145: "an IPv4-translated address",
  rfc6052: "a NAT64 address",
  "6to4": "a 6to4 (2002::/16) tunnel address",
  teredo: "a Teredo (2001::/32) tunnel address",
  benchmarking: "a benchmarking address",
  amt: "an AMT address",
  as112v6: "an AS112 address",
  deprecated: "a deprecated ORCHID address",
  orchid2: "an ORCHIDv2 address",
  droneRemoteIdProtocolEntityTags: "a drone remote ID address",
  reserved: "a reserved or documentation address"
}

// ipaddr.js 2.2.0 calls these "unicast", but they must not be reachable:
// site-local (deprecated, still routed internally by some networks), the
// IPv4-compatible ::/96 form (embeds an IPv4 address, e.g. ::7f00:1), and
// newer special-purpose blocks ipaddr.js does not know about yet.
const IPV6_EXTRA_REFUSED: ReadonlyArray<readonly [ipaddr.IPv6, number, string]> = [
  [ipaddr.IPv6.parse("fec0::"), 10, "a site-local (fec0::/10) address"],
  [ipaddr.IPv6.parse("::"), 96, "an IPv4-compatible (::/96) address"],
  [ipaddr.IPv6.parse("64:ff9b:1::"), 48, "a local-use NAT64 (64:ff9b:1::/48) address"],
  [ipaddr.IPv6.parse("3fff::"), 20, "a documentation (3fff::/20) address"],
  [ipaddr.IPv6.parse("5f00::"), 16, "an SRv6 SID (5f00::/16) address"]
]

const GLOBAL_UNICAST_V6: readonly [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("2000::"), 3]
const NAT64_WELL_KNOWN: readonly [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("64:ff9b::"), 96]

const ipv4Refusal = (v4: ipaddr.IPv4): string | undefined => {
  if (METADATA_ADDRESSES.has(v4.toString())) return "a cloud metadata address"
  const range = v4.range()
  if (range === "unicast") return undefined
  return IPV4_RANGE_LABELS[range] ?? `a special-purpose (${range}) address`
}

const ipv6Refusal = (v6: ipaddr.IPv6): string | undefined => {
  if (METADATA_ADDRESSES.has(v6.toString())) return "a cloud metadata address"
  // IPv4-mapped (::ffff:a.b.c.d): the socket really talks to the IPv4
  // address, so judge that (ipaddr.process does the same unwrapping).
  if (v6.isIPv4MappedAddress()) {
    const inner = ipv4Refusal(v6.toIPv4Address())
    return inner === undefined ? undefined : `an IPv4-mapped form of ${inner}`
  }
  // NAT64 (RFC 6052 well-known prefix): a DNS64 resolver legitimately hands
  // these out for public IPv4-only hosts, so judge the embedded IPv4 rather
  // than refusing IPv6-only deployments outright.
  if (v6.match(NAT64_WELL_KNOWN[0], NAT64_WELL_KNOWN[1])) {
    const p = v6.parts
    const embedded = new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff])
    const inner = ipv4Refusal(embedded)
    return inner === undefined ? undefined : `a NAT64 form of ${inner}`
  }
  const range = v6.range()
  if (range !== "unicast") return IPV6_RANGE_LABELS[range] ?? `a special-purpose (${range}) address`
  for (const [net, bits, label] of IPV6_EXTRA_REFUSED) {
    if (v6.match(net, bits)) return label
  }
  // Only 2000::/3 is allocated as global unicast; anything else ipaddr.js
  // still calls "unicast" is unassigned or special and is refused.
  if (!v6.match(GLOBAL_UNICAST_V6[0], GLOBAL_UNICAST_V6[1])) return "outside the global unicast range (2000::/3)"
  return undefined
}

/**
 * Parse an IP literal the way the socket layer will read it, or undefined.
 * IPv4 must be canonical dotted-quad, so odd spellings (2130706433,
 * 0177.0.0.1, 127.1) can never be judged one way here and dialled another
 * way by the OS. IPv6 text goes through the WHATWG (standard) IPv6 parser
 * first because ipaddr.js reads "::a.b.c.d" as IPv4-mapped ::ffff:a.b.c.d,
 * whereas inet_pton and every socket read it as IPv4-compatible ::a.b.c.d.
 * Zone identifiers ("fe80::1%eth0") are not accepted at all.
 */
const parseCanonicalIp = (ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  if (ipaddr.IPv4.isValidFourPartDecimal(ip)) return ipaddr.IPv4.parse(ip)
  // The character check keeps the URL template below from being steered
  // into parsing anything but a bracketed IPv6 literal.
  if (!/^[0-9a-f:.]+$/i.test(ip) || !ip.includes(":")) return undefined
  try {
    const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1)
    return ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : undefined
  } catch {
    return undefined
  }
}

/**
 * Why `ip` is not an acceptable connect target, as a phrase ("a loopback
 * address"), or undefined when it is a public unicast address. Anything that
 * is not a plain canonical IP literal counts as refused (fail closed).
 */
export const addressRefusal = (ip: string): string | undefined => {
  const parsed = parseCanonicalIp(ip)
  if (parsed === undefined) return "not a canonical IP address"
  return parsed.kind() === "ipv4" ? ipv4Refusal(parsed as ipaddr.IPv4) : ipv6Refusal(parsed as ipaddr.IPv6)
}

/** True only for addresses on the public internet (see addressRefusal). */
export const isPublicAddress = (ip: string): boolean => addressRefusal(ip) === undefined

const reject = (reason: string): Either.Either<never, TargetRejected> => Either.left(new TargetRejected({ reason }))

const hostNameRefusal = (host: string): string | undefined => {
  if (BLOCKED_HOSTS.has(host)) return `host ${host} is a local or cloud metadata name`
  for (const suffix of BLOCKED_SUFFIXES) {
    if (host.endsWith(suffix)) return `host ${host} is under the private-use domain ${suffix.slice(1)}`
  }
  // Single-label names are completed with resolver search domains (think
  // Kubernetes "redis" -> redis.ns.svc.cluster.local): never public.
  if (!host.includes(".")) return `host ${host} is not a fully-qualified public domain name`
  return undefined
}

/**
 * Parse and vet a tenant-supplied endpoint URL without any IO. Relies on the
 * WHATWG URL parser (Node's `new URL`) to normalise host spellings first: it
 * turns 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 into 127.0.0.1, lower-
 * cases and IDNA-maps names (so full-width "ｌｏｃａｌｈｏｓｔ" becomes
 * "localhost"), and compresses IPv6. A name that passes here can still resolve
 * to a private address; SafeTarget.checkTarget covers that.
 */
export const parseTargetUrl = (
  raw: string,
  opts: TargetPolicyOptions
): Either.Either<ParsedTarget, TargetRejected> => {
  if (raw.length > MAX_URL_LENGTH) return reject(`URL is longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return reject("not a valid absolute URL")
  }

  if (url.protocol === "http:") {
    if (!opts.allowInsecure) return reject("URL must use https")
  } else if (url.protocol !== "https:") {
    return reject(`scheme ${url.protocol} is not allowed; use https`)
  }

  // Credentials in the URL would be sent as Basic auth and leak into logs;
  // the reason deliberately does not repeat them.
  if (url.username !== "" || url.password !== "") return reject("URL must not contain a user name or password")

  const bracketed = url.hostname.startsWith("[")
  let host = bracketed ? url.hostname.slice(1, -1) : url.hostname
  if (!bracketed && host.endsWith(".")) host = host.slice(0, -1)
  if (host === "" || (!bracketed && host.split(".").some((label) => label === ""))) {
    return reject("URL has an empty or malformed host")
  }

  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
  if (port === 0) return reject("port 0 is not allowed")

  const isIpLiteral = bracketed || ipaddr.IPv4.isValidFourPartDecimal(host)
  // WHATWG already rewrote every IPv4 spelling to dotted-quad; if something
  // still parses as a non-canonical IPv4 the parsers disagree, so refuse.
  if (!isIpLiteral && ipaddr.IPv4.isValid(host)) return reject(`host ${host} is an ambiguous IPv4 spelling`)

  if (!opts.allowInsecure) {
    if (isIpLiteral) {
      const refusal = addressRefusal(host)
      if (refusal !== undefined) return reject(`host ${host} is ${refusal}`)
    } else {
      const refusal = hostNameRefusal(host)
      if (refusal !== undefined) return reject(refusal)
    }
  }

  return Either.right({ url, host, port, isIpLiteral })
}

/**
 * Decide which of a host's resolved addresses to connect to. Refuses when
 * ANY address is non-public, not just the first: an attacker controlling DNS
 * can order records freely, and Happy Eyeballs or a retry could pick another
 * one. The winner is returned canonicalised (IPv4-mapped unwrapped) so the
 * socket goes to exactly the address that was judged.
 */
export const pickCheckedAddress = (
  host: string,
  addresses: ReadonlyArray<string>,
  opts: TargetPolicyOptions
): Either.Either<PickedAddress, TargetRejected> => {
  if (addresses.length === 0) return reject(`host ${host} did not resolve to any address`)
  const picked: Array<PickedAddress> = []
  for (const address of addresses) {
    // Even when insecure targets are allowed the value must be a real IP
    // literal, otherwise the socket layer would resolve it again.
    const parsed = parseCanonicalIp(address)
    if (parsed === undefined) return reject(`host ${host} resolved to something that is not an IP address`)
    if (!opts.allowInsecure) {
      const refusal = addressRefusal(address)
      if (refusal !== undefined) {
        return reject(
          address === host ? `host ${host} is ${refusal}` : `host ${host} resolves to ${address}, ${refusal}`
        )
      }
    }
    // Dial the form that was judged: IPv4-mapped becomes plain IPv4.
    const dialled = parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? (parsed as ipaddr.IPv6).toIPv4Address()
      : parsed
    picked.push({ address: dialled.toString(), family: dialled.kind() === "ipv4" ? 4 : 6 })
  }
  return Either.right(picked[0]!)
}
