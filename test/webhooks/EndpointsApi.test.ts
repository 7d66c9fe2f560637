import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import http from "node:http"
import type net from "node:net"
import { expectProblem, expectStatus, inviteAndLogin } from "../support/ApiHelpers.js"
import { apiToken, call, signup } from "../support/TestApp.js"
import { deliveryRows, makeWebhooksTestApp, mutableDns, stageEvents, startDispatcher } from "../support/Webhooks.js"
import { waitFor } from "../support/Wait.js"

const PUBLIC_IP = "93.184.216.34"

// Names an attacker controls, resolving to places a webhook must never reach.
const dns = mutableDns({
  "hooks.tenant.example": [PUBLIC_IP],
  "rebind-later.tenant.example": [PUBLIC_IP],
  "private.attacker.example": ["10.0.0.1"],
  "loopback.attacker.example": ["127.0.0.1"],
  "mixed.attacker.example": [PUBLIC_IP, "192.168.1.10"],
  "metadata.attacker.example": ["169.254.169.254"],
  "v6loopback.attacker.example": ["::1"],
  "mapped.attacker.example": ["::ffff:10.0.0.1"],
  "cgnat.attacker.example": ["100.64.0.7"],
  "ula.attacker.example": ["fd00::5"],
  "linklocal6.attacker.example": ["fe80::1"]
})

/** A loopback HTTP server that counts every TCP connection it accepts. */
const canary = Effect.acquireRelease(
  Effect.async<{ server: http.Server; port: number; connections: () => number }>((resume) => {
    let connections = 0
    const server = http.createServer((_req, res) => res.writeHead(200).end("ok"))
    server.on("connection", () => (connections += 1))
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, port: (server.address() as net.AddressInfo).port, connections: () => connections })))
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const SSRF_TABLE: ReadonlyArray<string> = [
  "http://hooks.tenant.example/webhook",
  "https://127.0.0.1/hook",
  "https://127.1/hook",
  "https://2130706433/hook",
  "https://0x7f000001/hook",
  "https://0177.0.0.1/hook",
  "https://0/hook",
  "https://localhost/hook",
  "https://LOCALHOST./hook",
  "https://ｌｏｃａｌｈｏｓｔ/hook",
  "https://api.localhost/hook",
  "https://10.1.2.3/hook",
  "https://172.16.0.1/hook",
  "https://192.168.0.10/hook",
  "https://100.64.0.1/hook",
  "https://169.254.169.254/latest/meta-data/",
  "https://100.100.100.200/latest/meta-data",
  "https://metadata.google.internal/computeMetadata/v1/",
  "https://[::1]/hook",
  "https://[::]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[::ffff:169.254.169.254]/hook",
  "https://[fe80::1]/hook",
  "https://[fd00:ec2::254]/hook",
  "https://[fc00::1]/hook",
  "https://[64:ff9b::7f00:1]/hook",
  "https://db.internal/hook",
  "https://printer.local/hook",
  "https://redis/hook",
  "https://user:pass@hooks.tenant.example/hook",
  "ftp://hooks.tenant.example/hook",
  "file:///etc/passwd",
  "not a url",
  // DNS names whose answers are private: refused on what they resolve to.
  "https://private.attacker.example/hook",
  "https://loopback.attacker.example/hook",
  "https://mixed.attacker.example/hook",
  "https://metadata.attacker.example/hook",
  "https://v6loopback.attacker.example/hook",
  "https://mapped.attacker.example/hook",
  "https://cgnat.attacker.example/hook",
  "https://ula.attacker.example/hook",
  "https://linklocal6.attacker.example/hook"
]

layer(makeWebhooksTestApp({ config: { webhookAllowInsecureTargets: false }, resolver: dns.resolve }), { timeout: 120_000, excludeTestServices: true })(
  "webhook endpoints: public https only",
  (it) => {
    it.effect(`refuses ${SSRF_TABLE.length} SSRF forms with 400 invalid_webhook_url`, () =>
      Effect.gen(function* () {
        expect(SSRF_TABLE.length).toBeGreaterThanOrEqual(30)
        const { ownerToken } = yield* signup()
        const { token } = yield* apiToken(ownerToken, "test")
        for (const url of SSRF_TABLE) {
          const r = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url } })
          expectProblem(r, 400, "invalid_webhook_url")
          expect(r.body.message, url).toMatch(/^The webhook URL is not allowed: .+\.$/)
          expect(r.body.message).not.toContain("pass@")
        }
        const named = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "https://mixed.attacker.example/hook" } })
        expect(named.body.message).toBe(
          "The webhook URL is not allowed: host mixed.attacker.example resolves to 192.168.1.10, a private-network address. " +
            "Only public https URLs are accepted; for local development the service can be started with " +
            "WEBHOOK_ALLOW_INSECURE_TARGETS=1, which also allows http and private or loopback hosts."
        )
        // Refusals the switch would not lift do not mention it.
        const ftp = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "ftp://hooks.tenant.example/hook" } })
        expect(ftp.body.message).not.toContain("WEBHOOK_ALLOW_INSECURE_TARGETS")
        const local = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "http://localhost:3000/hook" } })
        expect(local.body.message).toContain("WEBHOOK_ALLOW_INSECURE_TARGETS")
        expect((yield* call("GET", "/api/v1/webhook-endpoints", { token })).body.data).toEqual([])

        const ok = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "https://hooks.tenant.example/webhook?src=collections" } })
        expectStatus(ok, 201)
        expect(ok.body.url).toBe("https://hooks.tenant.example/webhook?src=collections")
        // A public host whose DNS is not live yet can be registered; each delivery checks its addresses again.
        expectStatus(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "https://nxdomain.attacker.example/hook" } }), 201)
      }))

    it.scoped("a loopback canary receives zero connections, at registration and at delivery (DNS rebinding)", () =>
      Effect.gen(function* () {
        const server = yield* canary
        const { ownerToken, tenantId } = yield* signup()
        const { token } = yield* apiToken(ownerToken, "test")
        const p = server.port
        dns.set("canary.attacker.example", ["127.0.0.1"])
        for (const url of [
          `http://127.0.0.1:${p}/hook`, `https://127.0.0.1:${p}/hook`, `https://localhost:${p}/hook`, `https://127.1:${p}/hook`,
          `https://2130706433:${p}/hook`, `https://[::ffff:127.0.0.1]:${p}/hook`, `https://canary.attacker.example:${p}/hook`,
          `http://canary.attacker.example:${p}/hook`, `https://[::1]:${p}/hook`, `https://0.0.0.0:${p}/hook`
        ]) {
          expectProblem(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url } }), 400, "invalid_webhook_url")
        }
        expect(server.connections()).toBe(0)

        // Public at registration, loopback by delivery time: the dispatcher checks again and refuses.
        const created = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: `https://rebind-later.tenant.example:${p}/hook` } })
        expectStatus(created, 201)
        dns.set("rebind-later.tenant.example", ["127.0.0.1"])
        yield* stageEvents(tenantId, "test", 2)
        const dispatcher = yield* startDispatcher()
        yield* waitFor("both attempts", deliveryRows(tenantId), { until: (rows) => rows.length === 2 && rows.every((r) => r.attempts >= 1), timeoutMs: 30_000 })
        yield* dispatcher.stop
        for (const r of yield* deliveryRows(tenantId)) {
          expect(r.status).toBe("Failed")
          expect(r.lastStatusCode).toBeNull()
          expect(r.lastError).toBe(`target refused: host rebind-later.tenant.example resolves to 127.0.0.1, a loopback address`)
        }
        expect(server.connections()).toBe(0)
      }))
  }
)

layer(makeWebhooksTestApp(), { timeout: 120_000, excludeTestServices: true })("webhook endpoints: management", (it) => {
  it.effect("create returns the secret once; list omits it; delete deactivates; scoped to tenant and mode", () =>
    Effect.gen(function* () {
      const a = yield* signup()
      const aTest = yield* apiToken(a.ownerToken, "test")
      const created = yield* call("POST", "/api/v1/webhook-endpoints", { token: aTest.token, json: { url: "http://127.0.0.1:9/a" } })
      expectStatus(created, 201)
      expect(created.body).toMatchObject({ url: "http://127.0.0.1:9/a", active: true })
      expect(created.body.id).toMatch(/^whe_/)
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      expect(Buffer.from(created.body.secret.slice("whsec_".length), "base64").length).toBeGreaterThanOrEqual(24)

      // Stored sealed, never in plain text.
      const sql = yield* SqlClient.SqlClient
      const stored = yield* sql<{ secretSealed: string }>`SELECT secret_sealed FROM webhook_endpoints WHERE id = ${created.body.id}`
      expect(stored[0]!.secretSealed).not.toContain(created.body.secret.slice("whsec_".length))

      const second = yield* call("POST", "/api/v1/webhook-endpoints", { token: aTest.token, json: { url: "http://127.0.0.1:9/b" } })
      expect(second.body.secret).not.toBe(created.body.secret)
      const list = yield* call("GET", "/api/v1/webhook-endpoints", { token: aTest.token })
      expectStatus(list, 200)
      expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([second.body.id, created.body.id])
      for (const e of list.body.data) expect(Object.keys(e).sort()).toEqual(["active", "createdAt", "id", "url"])
      expect(JSON.stringify(list.body)).not.toContain("whsec_")

      // The dashboard (live mode) and another tenant see none of these, and cannot delete them.
      expect((yield* call("GET", "/api/v1/webhook-endpoints", { token: a.ownerToken })).body.data).toEqual([])
      expectProblem(yield* call("DELETE", `/api/v1/webhook-endpoints/${created.body.id}`, { token: a.ownerToken }), 404, "webhook_endpoint_not_found")
      const b = yield* signup()
      const bTest = yield* apiToken(b.ownerToken, "test")
      expect((yield* call("GET", "/api/v1/webhook-endpoints", { token: bTest.token })).body.data).toEqual([])
      expectProblem(yield* call("DELETE", `/api/v1/webhook-endpoints/${created.body.id}`, { token: bTest.token }), 404, "webhook_endpoint_not_found")

      const deleted = yield* call("DELETE", `/api/v1/webhook-endpoints/${created.body.id}`, { token: aTest.token })
      expect(deleted.status).toBe(204)
      expect(deleted.body).toBeNull()
      expectProblem(yield* call("DELETE", `/api/v1/webhook-endpoints/${created.body.id}`, { token: aTest.token }), 404, "webhook_endpoint_not_found")
      expectProblem(yield* call("DELETE", "/api/v1/webhook-endpoints/whe_unknown", { token: aTest.token }), 404, "webhook_endpoint_not_found")
      expect((yield* call("GET", "/api/v1/webhook-endpoints", { token: aTest.token })).body.data.map((e: { id: string }) => e.id)).toEqual([second.body.id])
    }))

  it.effect("planes and roles: API key or dashboard Owner/Admin; a Member gets 403; no token 401", () =>
    Effect.gen(function* () {
      const owner = yield* signup()
      const created = yield* call("POST", "/api/v1/webhook-endpoints", { token: owner.ownerToken, json: { url: "http://127.0.0.1:9/live" } })
      expectStatus(created, 201)
      const admin = yield* inviteAndLogin(owner.ownerToken, "Admin", owner.tenantId.slice(-6))
      expect((yield* call("GET", "/api/v1/webhook-endpoints", { token: admin.token })).body.data).toHaveLength(1)
      const member = yield* inviteAndLogin(owner.ownerToken, "Member", owner.tenantId.slice(-6))
      expectProblem(yield* call("GET", "/api/v1/webhook-endpoints", { token: member.token }), 403, "insufficient_role")
      expectProblem(yield* call("POST", "/api/v1/webhook-endpoints", { token: member.token, json: { url: "http://127.0.0.1:9/m" } }), 403, "insufficient_role")
      expectProblem(yield* call("GET", "/api/v1/webhook-endpoints/deliveries", { token: member.token }), 403, "insufficient_role")
      expectProblem(yield* call("GET", "/api/v1/webhook-endpoints"), 401, "missing_token")
    }))

  it.effect("deliveries: status filter (any case), take default and clamp, validation", () =>
    Effect.gen(function* () {
      const t = yield* signup()
      const { token } = yield* apiToken(t.ownerToken, "test")
      expectStatus(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "http://127.0.0.1:9/x" } }), 201)
      yield* stageEvents(t.tenantId, "test", 3)
      const dispatcher = yield* startDispatcher()
      yield* waitFor("3 failed attempts", deliveryRows(t.tenantId), { until: (rows) => rows.length === 3 && rows.every((r) => r.attempts >= 1), timeoutMs: 30_000 })
      yield* dispatcher.stop

      const all = yield* call("GET", "/api/v1/webhook-endpoints/deliveries", { token })
      expectStatus(all, 200)
      expect(all.body.data).toHaveLength(3)
      const first = all.body.data[0]
      expect(Object.keys(first).sort()).toEqual([
        "attempts", "createdAt", "deliveredAt", "endpointId", "endpointUrl", "eventId", "eventType", "id", "lastError", "lastStatusCode", "nextAttemptAt", "status", "updatedAt"
      ])
      expect(first.endpointUrl).toBe("http://127.0.0.1:9/x")
      expect(first.lastError).toBe("connection refused (ECONNREFUSED)")
      expect(first.lastStatusCode).toBeNull()
      expect(typeof first.nextAttemptAt === "string" || first.status === "DeadLettered").toBe(true)

      expect((yield* call("GET", "/api/v1/webhook-endpoints/deliveries?take=2", { token })).body.data).toHaveLength(2)
      expect((yield* call("GET", "/api/v1/webhook-endpoints/deliveries?take=100000", { token })).body.data).toHaveLength(3)
      expect((yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=succeeded", { token })).body.data).toEqual([])
      const pendingOrFailed = (yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=FAILED", { token })).body.data.length +
        (yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=deadlettered", { token })).body.data.length +
        (yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=Pending", { token })).body.data.length
      expect(pendingOrFailed).toBe(3)
      const bad = yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=Delivered", { token })
      expectProblem(bad, 400, "validation_failed")
      expect(bad.body.message).toContain("Pending, Succeeded, Failed, DeadLettered")
      expectProblem(yield* call("GET", "/api/v1/webhook-endpoints/deliveries?take=0", { token }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/webhook-endpoints", { token, json: {} }), 400, "validation_failed")
    }))
})
