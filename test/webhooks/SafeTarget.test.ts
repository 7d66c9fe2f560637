import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import http from "node:http"
import net from "node:net"
import { inspect } from "node:util"
import { isPublicAddress } from "../../services/webhooks/AddressPolicy.js"
import { DeliveryFailed } from "../../services/webhooks/DeliveryFailed.js"
import { deliver } from "../../services/webhooks/Deliver.js"
import {
  checkAndDeliver,
  checkTarget,
  type Resolver,
  systemResolver
} from "../../services/webhooks/SafeTarget.js"
import { TargetRejected } from "../../services/webhooks/TargetRejected.js"
import { clientHelloSni } from "./clientHelloSni.js"

// ---------------------------------------------------------------- resolvers

/** Resolves every name to a public address, so a refusal can only come from the URL policy itself. */
const publicEverywhere: Resolver = () => Effect.succeed(["93.184.216.34"])

const fakeResolver = (table: Readonly<Record<string, ReadonlyArray<string>>>): Resolver => (host) => {
  const answer = table[host]
  return answer === undefined
    ? Effect.fail(new TargetRejected({ reason: `host ${host} does not resolve` }))
    : Effect.succeed(answer)
}

const strict = (resolve: Resolver) => ({ allowInsecure: false, resolve })
const insecure = (resolve: Resolver) => ({ allowInsecure: true, resolve })

const rejection = (raw: string, opts: { allowInsecure: boolean; resolve: Resolver }) =>
  checkTarget(raw, opts).pipe(Effect.flip)

// ---------------------------------------------------------------- servers

interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

interface Canary {
  readonly port: number
  readonly connections: () => number
  readonly requests: ReadonlyArray<Received>
}

/** A loopback HTTP server that counts every TCP connection it accepts. */
const canary = (answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly canary: Canary }>((resume) => {
      let connections = 0
      const requests: Array<Received> = []
      const server = http.createServer((req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => (body += chunk))
        req.on("end", () => {
          requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body })
          answer(req, res)
        })
      })
      server.on("connection", () => (connections += 1))
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        resume(Effect.succeed({ server, canary: { port, connections: () => connections, requests } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ canary }) => canary))

/** A raw TCP server that records the SNI of each TLS ClientHello and then hangs up. */
const sniCatcher = Effect.acquireRelease(
  Effect.async<{ readonly server: net.Server; readonly port: number; readonly names: Array<string | undefined> }>(
    (resume) => {
      const names: Array<string | undefined> = []
      const server = net.createServer((socket) => {
        let buf = Buffer.alloc(0)
        socket.on("data", (chunk: Buffer) => {
          buf = Buffer.concat([buf, chunk])
          const sni = clientHelloSni(buf)
          if (sni === "incomplete") return
          names.push(sni)
          socket.destroy()
        })
        socket.on("error", () => {})
      })
      server.listen(0, "127.0.0.1", () => {
        resume(Effect.succeed({ server, port: (server.address() as net.AddressInfo).port, names }))
      })
    }
  ),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

/** A port on which nothing listens (bound, read, released). */
const closedPort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

const post = { headers: { "content-type": "application/json" }, body: "{\"type\":\"deposit.reconciled\"}", timeoutMs: 5_000 }

// ---------------------------------------------------------------- tests

describe("checkTarget refuses SSRF forms (allowInsecure=false)", () => {
  // Every name would resolve to a public address, so each refusal below is
  // the URL policy's own doing, not a DNS failure.
  const ssrfTable: ReadonlyArray<string> = [
    "http://example.com",
    "https://127.0.0.1",
    "https://127.1",
    "https://2130706433",
    "https://0x7f000001",
    "https://0177.0.0.1",
    "https://0x7f.0.0.1",
    "https://%31%32%37.0.0.1",
    "https://0",
    "https://localhost",
    "https://localhost.",
    "https://ＬＯＣＡＬＨＯＳＴ",
    "https://foo.localhost",
    "https://10.0.0.5",
    "https://172.16.3.4",
    "https://192.168.1.1",
    "https://100.64.0.1",
    "https://169.254.169.254/latest/meta-data",
    "https://169.254.170.2/v2/credentials",
    "https://100.100.100.200/latest/meta-data",
    "https://192.0.0.192/opc/v2/instance",
    "https://[fd00:ec2::254]",
    "https://metadata.google.internal",
    "https://metadata",
    "https://instance-data",
    "https://db.internal",
    "https://printer.local",
    "https://kubernetes.default.svc",
    "https://redis",
    "https://0.0.0.0",
    "https://[::]",
    "https://[::1]",
    "https://[::ffff:127.0.0.1]",
    "https://[::ffff:7f00:1]",
    "https://[::ffff:10.0.0.1]",
    "https://[::ffff:169.254.169.254]",
    "https://[::127.0.0.1]",
    "https://[64:ff9b::a00:1]",
    "https://[64:ff9b::7f00:1]",
    "https://[64:ff9b:1::808:808]",
    "https://[2002:7f00:1::]",
    "https://[2002:a9fe:a9fe::]",
    "https://[2001::1]",
    "https://[fe80::1]",
    "https://[fec0::1]",
    "https://[fc00::1]",
    "https://[fd12:3456::1]",
    "https://[ff02::1]",
    "https://[2001:db8::1]",
    "https://[3fff::1]",
    "https://224.0.0.1",
    "https://255.255.255.255",
    "https://240.0.0.1",
    "https://198.18.0.1",
    "https://192.0.2.1",
    "https://198.51.100.7",
    "https://203.0.113.9",
    "https://127.0.0.1:8443",
    "https://user:pw@example.com",
    "https://user@example.com",
    "https://example.com:0",
    "ftp://example.com",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "https://:443",
    "https://[fe80::1%25eth0]",
    "not a url",
    `https://example.com/${"a".repeat(3000)}`
  ]

  it("has at least 35 forms", () => {
    expect(ssrfTable.length).toBeGreaterThanOrEqual(35)
  })

  it.live.each(ssrfTable)("refuses %s", (raw) =>
    Effect.gen(function*() {
      const error = yield* rejection(raw, strict(publicEverywhere))
      expect(error).toBeInstanceOf(TargetRejected)
      expect(error.reason.length).toBeGreaterThan(0)
      // The tenant-facing reason never echoes URL credentials.
      expect(error.reason).not.toContain("pw")
    }))

  it.live("names the rule that failed", () =>
    Effect.gen(function*() {
      expect((yield* rejection("http://example.com", strict(publicEverywhere))).reason).toBe("URL must use https")
      expect((yield* rejection("https://2130706433", strict(publicEverywhere))).reason).toBe(
        "host 127.0.0.1 is a loopback address"
      )
      expect((yield* rejection("https://169.254.169.254/x", strict(publicEverywhere))).reason).toBe(
        "host 169.254.169.254 is a cloud metadata address"
      )
      expect((yield* rejection("https://u:secret@example.com", strict(publicEverywhere))).reason).toBe(
        "URL must not contain a user name or password"
      )
      expect((yield* rejection("https://example.com:0", strict(publicEverywhere))).reason).toBe(
        "port 0 is not allowed"
      )
    }))

  it.live.each([
    "https://user:pw@example.com",
    "https://example.com:0",
    "ftp://example.com",
    "file:///etc/passwd",
    "https://:443"
  ])("still refuses %s with allowInsecure=true", (raw) =>
    Effect.gen(function*() {
      expect(yield* rejection(raw, insecure(publicEverywhere))).toBeInstanceOf(TargetRejected)
    }))
})

describe("checkTarget refuses names that resolve to non-public addresses", () => {
  const dns = fakeResolver({
    "rebind.example.test": ["10.0.0.1"],
    "mixed.example.test": ["93.184.216.34", "127.0.0.1"],
    "mixed6.example.test": ["2606:4700::1111", "fd00::1"],
    "v6private.example.test": ["::1"],
    "metadata.example.test": ["169.254.169.254"],
    "mapped.example.test": ["::ffff:127.0.0.1"],
    "nat64.example.test": ["64:ff9b::a9fe:a9fe"],
    "cgnat.example.test": ["100.64.1.1"],
    "garbage.example.test": ["not-an-ip"],
    "odd-spelling.example.test": ["2130706433"],
    "empty.example.test": []
  })

  it.live.each([
    "https://rebind.example.test",
    "https://mixed.example.test",
    "https://mixed6.example.test",
    "https://v6private.example.test",
    "https://metadata.example.test",
    "https://mapped.example.test",
    "https://nat64.example.test",
    "https://cgnat.example.test",
    "https://garbage.example.test",
    "https://odd-spelling.example.test",
    "https://empty.example.test",
    "https://nxdomain.example.test"
  ])("refuses %s", (raw) =>
    Effect.gen(function*() {
      expect(yield* rejection(raw, strict(dns))).toBeInstanceOf(TargetRejected)
    }))

  it.live("refuses when ANY record is private, naming the bad one", () =>
    Effect.gen(function*() {
      const error = yield* rejection("https://mixed.example.test/hook", strict(dns))
      expect(error.reason).toBe("host mixed.example.test resolves to 127.0.0.1, a loopback address")
    }))

  it.live("system resolver: localhost resolves to loopback and is refused", () =>
    Effect.gen(function*() {
      const addresses = yield* systemResolver("localhost")
      expect(addresses.length).toBeGreaterThan(0)
      expect(addresses.every((a) => !isPublicAddress(a))).toBe(true)

      expect(yield* rejection("https://localhost", strict(systemResolver))).toBeInstanceOf(TargetRejected)

      // A public-looking name whose real DNS answer is loopback goes through
      // the address check (not the name blocklist) and is refused there.
      const alias: Resolver = (host) =>
        host === "loopback-alias.example.test" ? systemResolver("localhost") : Effect.succeed([])
      const error = yield* rejection("https://loopback-alias.example.test", strict(alias))
      expect(error.reason).toMatch(/^host loopback-alias\.example\.test resolves to .*, a loopback address$/)

      // allowInsecure really uses the system answer.
      const local = yield* checkTarget("http://localhost:8080", insecure(systemResolver))
      expect(isPublicAddress(local.address)).toBe(false)
    }))

  it.live("system resolver: unknown name is refused as not resolving", () =>
    Effect.gen(function*() {
      const error = yield* systemResolver("does-not-exist.invalid").pipe(Effect.flip)
      expect(error).toBeInstanceOf(TargetRejected)
    }))
})

describe("checkTarget accepts public targets", () => {
  const dns = fakeResolver({
    "example.com": ["93.184.216.34"],
    "dual.example.com": ["2606:4700::1111", "93.184.216.34"]
  })

  it.live("name resolving to a public address", () =>
    Effect.gen(function*() {
      const target = yield* checkTarget("https://example.com/hooks?x=1", strict(dns))
      expect(target.url.href).toBe("https://example.com/hooks?x=1")
      expect(target).toMatchObject({ host: "example.com", port: 443, isIpLiteral: false })
      expect(target.address).toBe("93.184.216.34")
      expect(target.family).toBe(4)
    }))

  it.live("first address of a dual-stack name, non-default port, trailing dot", () =>
    Effect.gen(function*() {
      const target = yield* checkTarget("https://dual.example.com.:8443/h", strict(dns))
      expect(target).toMatchObject({ host: "dual.example.com", port: 8443, address: "2606:4700::1111", family: 6 })
    }))

  it.live.each([
    { raw: "https://[2606:4700::1111]", address: "2606:4700::1111", family: 6 },
    { raw: "https://8.8.8.8", address: "8.8.8.8", family: 4 },
    // Mapped and NAT64 forms of a public IPv4 are judged by the IPv4 inside;
    // a mapped one is dialled as plain IPv4.
    { raw: "https://[::ffff:8.8.8.8]", address: "8.8.8.8", family: 4 },
    { raw: "https://[64:ff9b::808:808]", address: "64:ff9b::808:808", family: 6 }
  ])("IP literal $raw", ({ address, family, raw }) =>
    Effect.gen(function*() {
      const target = yield* checkTarget(raw, strict(fakeResolver({})))
      expect(target.isIpLiteral).toBe(true)
      expect(target.address).toBe(address)
      expect(target.family).toBe(family)
    }))
})

describe("loopback canary", () => {
  it.live("every SSRF form aimed at a local server is refused before any connection", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => res.writeHead(200).end("ok"))
        const p = server.port
        const dns = fakeResolver({ "canary.example.test": ["127.0.0.1"], "mixed.example.test": ["8.8.8.8", "127.0.0.1"] })
        const attempts: ReadonlyArray<readonly [string, Resolver]> = [
          [`http://127.0.0.1:${p}/hook`, dns],
          [`https://127.0.0.1:${p}/hook`, dns],
          [`http://localhost:${p}/hook`, systemResolver],
          [`https://localhost:${p}/hook`, systemResolver],
          [`https://localhost:${p}/hook`, publicEverywhere],
          [`https://127.1:${p}/hook`, dns],
          [`https://2130706433:${p}/hook`, dns],
          [`https://[::ffff:127.0.0.1]:${p}/hook`, dns],
          [`https://canary.example.test:${p}/hook`, dns],
          [`https://mixed.example.test:${p}/hook`, dns]
        ]
        for (const [raw, resolve] of attempts) {
          const result = yield* checkAndDeliver(raw, strict(resolve), post).pipe(Effect.either)
          expect(Either.isLeft(result) && result.left._tag, raw).toBe("TargetRejected")
        }
        expect(server.connections()).toBe(0)

        // Prove the canary would have noticed: the same server is reachable
        // once insecure targets are allowed.
        const ok = yield* checkAndDeliver(`http://127.0.0.1:${p}/hook`, insecure(dns), post)
        expect(ok.status).toBe(200)
        expect(server.connections()).toBe(1)
      })
    ))
})

describe("deliver (allowInsecure=true against local servers)", () => {
  it.live("POSTs the body and returns the status", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => res.writeHead(200).end("thanks"))
        const target = yield* checkTarget(`http://127.0.0.1:${server.port}/hook?t=1`, insecure(fakeResolver({})))
        const result = yield* deliver(target, {
          headers: { "content-type": "application/json", host: "evil.example", "content-length": "1" },
          body: "{\"hello\":\"world\"}",
          timeoutMs: 5_000
        })
        expect(result).toEqual({ status: 200 })
        expect(server.requests).toHaveLength(1)
        const received = server.requests[0]!
        expect(received.method).toBe("POST")
        expect(received.url).toBe("/hook?t=1")
        expect(received.body).toBe("{\"hello\":\"world\"}")
        // Caller cannot override routing/framing headers.
        expect(received.headers.host).toBe(`127.0.0.1:${server.port}`)
        expect(received.headers["content-length"]).toBe(String("{\"hello\":\"world\"}".length))
        expect(received.headers["content-type"]).toBe("application/json")
      })
    ))

  it.live("connects to the checked address, not a fresh lookup of the name", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => res.writeHead(204).end())
        // The system resolver cannot resolve this name; only the checked
        // address can have been dialled.
        const dns = fakeResolver({ "pinned.example.test": ["127.0.0.1"] })
        const result = yield* checkAndDeliver(`http://pinned.example.test:${server.port}/x`, insecure(dns), post)
        expect(result.status).toBe(204)
        expect(server.requests[0]!.headers.host).toBe(`pinned.example.test:${server.port}`)
      })
    ))

  it.live("an IPv4-mapped literal is dialled over IPv4 with a bracketed Host header", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => res.writeHead(200).end())
        const result = yield* checkAndDeliver(
          `http://[::ffff:127.0.0.1]:${server.port}/`,
          insecure(fakeResolver({})),
          post
        )
        expect(result.status).toBe(200)
        expect(server.requests[0]!.headers.host).toBe(`[::ffff:7f00:1]:${server.port}`)
      })
    ))

  it.live("returns a 3xx as-is and never follows the redirect", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((req, res) => {
          if (req.url === "/hook") res.writeHead(302, { location: "/elsewhere" }).end()
          else res.writeHead(200).end()
        })
        const result = yield* checkAndDeliver(
          `http://127.0.0.1:${server.port}/hook`,
          insecure(fakeResolver({})),
          post
        )
        expect(result.status).toBe(302)
        expect(server.requests.map((r) => r.url)).toEqual(["/hook"])
        expect(server.connections()).toBe(1)
      })
    ))

  it.live("times out against a server that never answers", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary(() => {})
        const target = yield* checkTarget(`http://127.0.0.1:${server.port}/hook`, insecure(fakeResolver({})))
        const started = Date.now()
        const error = yield* deliver(target, { ...post, timeoutMs: 300 }).pipe(Effect.flip)
        expect(error).toBeInstanceOf(DeliveryFailed)
        expect(error.reason).toBe("timeout")
        expect(Date.now() - started).toBeLessThan(2_000)
        expect(server.connections()).toBe(1)
      })
    ))

  it.live("stops reading an endless body after 64 KiB and still returns the status", () =>
    Effect.scoped(
      Effect.gen(function*() {
        let sent = 0
        let clientHungUp = false
        const server = yield* canary((_req, res) => {
          res.writeHead(200, { "content-type": "text/plain" })
          const chunk = Buffer.alloc(16 * 1024, 120)
          const pump = () => {
            // Cap at 64 MiB so a broken client cannot wedge the test.
            while (!clientHungUp && sent < 64 * 1024 * 1024) {
              sent += chunk.length
              if (!res.write(chunk)) return void res.once("drain", pump)
            }
          }
          res.on("close", () => (clientHungUp = true))
          pump()
        })
        const result = yield* checkAndDeliver(
          `http://127.0.0.1:${server.port}/hook`,
          insecure(fakeResolver({})),
          { ...post, timeoutMs: 5_000 }
        )
        expect(result.status).toBe(200)
        yield* Effect.sleep("100 millis")
        expect(clientHungUp).toBe(true)
        expect(sent).toBeLessThan(64 * 1024 * 1024)
      })
    ))

  it.live("a status followed by a body that never ends still counts as answered", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => {
          res.writeHead(202)
          res.write("partial")
        })
        const result = yield* checkAndDeliver(
          `http://127.0.0.1:${server.port}/hook`,
          insecure(fakeResolver({})),
          { ...post, timeoutMs: 300 }
        )
        expect(result.status).toBe(202)
      })
    ))

  it.live("connection refused", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* checkAndDeliver(`http://127.0.0.1:${port}/`, insecure(fakeResolver({})), post).pipe(
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "DeliveryFailed", reason: "connection refused", code: "ECONNREFUSED" })
    }))

  it.live("TLS uses the original host name for SNI while dialling the checked address", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const catcher = yield* sniCatcher
        const dns = fakeResolver({ "secure.example.test": ["127.0.0.1"] })
        const error = yield* checkAndDeliver(`https://secure.example.test:${catcher.port}/h`, insecure(dns), post).pipe(
          Effect.flip
        )
        expect(error._tag).toBe("DeliveryFailed")
        // For an IP literal no SNI is sent (RFC 6066 forbids IPs there).
        yield* checkAndDeliver(`https://127.0.0.1:${catcher.port}/h`, insecure(dns), post).pipe(Effect.flip)
        expect(catcher.names).toEqual(["secure.example.test", undefined])
      })
    ))

  it.live("TLS failure is reported as tls", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* canary((_req, res) => res.writeHead(200).end())
        const error = yield* checkAndDeliver(
          `https://127.0.0.1:${server.port}/`,
          insecure(fakeResolver({})),
          post
        ).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "DeliveryFailed", reason: "tls" })
      })
    ))
})

describe("DeliveryFailed never leaks headers or body", () => {
  const signature = "v1,c2lnbmF0dXJlLVNFQ1JFVC12YWx1ZQ=="
  const token = "Bearer sk_live_TOPSECRET_0123456789"
  const bodySecret = "BODY-SECRET-abcdef"
  const secretRequest = (timeoutMs: number) => ({
    headers: { "webhook-signature": signature, authorization: token, "content-type": "application/json" },
    body: JSON.stringify({ account: bodySecret }),
    timeoutMs
  })

  const assertNoLeak = (error: DeliveryFailed) => {
    const renderings = [error.message, error.reason, String(error), JSON.stringify(error), inspect(error), error.stack ?? ""]
    for (const text of renderings) {
      for (const secret of [signature, "c2lnbmF0dXJl", token, "TOPSECRET", bodySecret]) {
        expect(text).not.toContain(secret)
      }
    }
  }

  it.live("on connection refused, timeout, TLS failure and invalid header", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const none = insecure(fakeResolver({}))
        const port = yield* closedPort
        const refused = yield* checkAndDeliver(`http://127.0.0.1:${port}/`, none, secretRequest(5_000)).pipe(
          Effect.flip
        )
        expect(refused._tag).toBe("DeliveryFailed")
        assertNoLeak(refused as DeliveryFailed)

        const silent = yield* canary(() => {})
        const timedOut = yield* checkAndDeliver(`http://127.0.0.1:${silent.port}/`, none, secretRequest(200)).pipe(
          Effect.flip
        )
        expect(timedOut).toMatchObject({ _tag: "DeliveryFailed", reason: "timeout" })
        assertNoLeak(timedOut as DeliveryFailed)

        const plain = yield* canary((_req, res) => res.writeHead(200).end())
        const tls = yield* checkAndDeliver(`https://127.0.0.1:${plain.port}/`, none, secretRequest(5_000)).pipe(
          Effect.flip
        )
        expect(tls).toMatchObject({ _tag: "DeliveryFailed", reason: "tls" })
        assertNoLeak(tls as DeliveryFailed)

        const target = yield* checkTarget(`http://127.0.0.1:${plain.port}/`, none)
        const invalid = yield* deliver(target, {
          ...secretRequest(5_000),
          headers: { "x-secret": `${token}\r\nx-injected: 1` }
        }).pipe(Effect.flip)
        expect(invalid).toMatchObject({ _tag: "DeliveryFailed", reason: "invalid request" })
        assertNoLeak(invalid)
      })
    ))
})
