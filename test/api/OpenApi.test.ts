import { HttpServer } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"

type Method = "get" | "post" | "put" | "patch" | "delete"

/**
 * Every operation of spec/interface.md's endpoint tables (plus "Other operations"), then the dashboard
 * plane's own paths fixed in DESIGN.md. OpenAPI writes path parameters as {name}; the names are the
 * interface's. The receiver's last segment is the provider name (`<provider_name>` in the interface).
 */
const INTERFACE: ReadonlyArray<readonly [Method, string]> = [
  // Authentication
  ["post", "/api/v1/auth/token"],
  // Virtual accounts
  ["get", "/api/v1/virtual-accounts"],
  ["post", "/api/v1/virtual-accounts"],
  ["get", "/api/v1/virtual-accounts/{accountRef}"],
  ["patch", "/api/v1/virtual-accounts/{accountRef}"],
  ["delete", "/api/v1/virtual-accounts/{accountRef}"],
  ["get", "/api/v1/virtual-accounts/{accountRef}/statement"],
  // Reading the ledger (DESIGN.md "Reading the ledger, events and statements")
  ["get", "/api/v1/ledger/entries"],
  // Transactions
  ["get", "/api/v1/transactions"],
  ["get", "/api/v1/transactions/summary"],
  ["get", "/api/v1/transactions/{reference}"],
  ["post", "/api/v1/transactions/{reference}/refund"],
  // Transfers
  ["get", "/api/v1/transfers"],
  ["get", "/api/v1/transfers/banks"],
  ["post", "/api/v1/transfers/bank/lookup"],
  ["post", "/api/v1/transfers/bank"],
  ["get", "/api/v1/transfers/{merchantTxRef}"],
  // Money rules
  ["get", "/api/v1/rules"],
  ["post", "/api/v1/rules"],
  ["delete", "/api/v1/rules/{id}"],
  // Payment flows
  ["get", "/api/v1/flows"],
  ["post", "/api/v1/flows"],
  ["get", "/api/v1/flows/runs"],
  ["get", "/api/v1/flows/{id}"],
  ["put", "/api/v1/flows/{id}"],
  ["delete", "/api/v1/flows/{id}"],
  ["post", "/api/v1/flows/{id}/enabled"],
  // Sub-merchants
  ["get", "/api/v1/sub-merchants"],
  ["post", "/api/v1/sub-merchants"],
  ["put", "/api/v1/sub-merchants/{id}/payout"],
  ["get", "/api/v1/sub-merchants/{id}/balance"],
  // Live checkout
  ["post", "/api/v1/checkout/sessions"],
  ["get", "/api/v1/checkout/{token}"],
  ["get", "/checkout/{token}"],
  ["get", "/api/v1/checkout/{token}/stream"],
  // Insights
  ["get", "/api/v1/insights"],
  ["get", "/api/v1/insights/aging"],
  ["get", "/api/v1/insights/forecast"],
  ["get", "/api/v1/insights/customers"],
  // Recurring billing
  ["get", "/api/v1/billing/schedules"],
  ["post", "/api/v1/billing/schedules"],
  ["get", "/api/v1/billing/schedules/{id}"],
  ["put", "/api/v1/billing/schedules/{id}/next-amount"],
  ["post", "/api/v1/billing/schedules/{id}/pause"],
  ["post", "/api/v1/billing/schedules/{id}/resume"],
  ["post", "/api/v1/billing/schedules/{id}/cancel"],
  ["get", "/api/v1/billing/schedules/{id}/periods"],
  // Settlement settings
  ["get", "/api/v1/settings/settlement"],
  ["put", "/api/v1/settings/settlement"],
  ["get", "/api/v1/settings/splits"],
  ["put", "/api/v1/settings/splits"],
  // Sandbox simulator
  ["post", "/api/v1/sandbox/simulate/deposit"],
  ["get", "/api/v1/sandbox/clock"],
  ["post", "/api/v1/sandbox/clock/advance"],
  // Outbound webhook endpoints
  ["get", "/api/v1/webhook-endpoints"],
  ["post", "/api/v1/webhook-endpoints"],
  ["delete", "/api/v1/webhook-endpoints/{id}"],
  ["get", "/api/v1/webhook-endpoints/deliveries"],
  ["post", "/api/v1/webhook-endpoints/deliveries/{id}/replay"],
  // Other operations
  ["post", "/api/v1/settlements/{ref}/hold"],
  ["post", "/api/v1/settlements/{ref}/release"],
  ["get", "/api/v1/settlements"],
  ["post", "/api/v1/settlements/run"],
  ["post", "/api/v1/copilot/ask"]
]

/** The inbound provider receiver: `/webhooks/<provider_name>` and `/api/v1/webhooks/<provider_name>`. */
const RECEIVERS: ReadonlyArray<RegExp> = [/^\/webhooks\/\{[A-Za-z_]+\}$/, /^\/api\/v1\/webhooks\/\{[A-Za-z_]+\}$/]

const DASHBOARD: ReadonlyArray<readonly [Method, string]> = [
  ["post", "/api/v1/dashboard/signup"],
  ["post", "/api/v1/dashboard/login"],
  ["get", "/api/v1/dashboard/me"],
  ["post", "/api/v1/dashboard/onboarding"],
  ["get", "/api/v1/dashboard/api-keys"],
  ["post", "/api/v1/dashboard/api-keys"],
  ["delete", "/api/v1/dashboard/api-keys/{id}"],
  ["get", "/api/v1/dashboard/provider"],
  ["get", "/api/v1/dashboard/users"],
  ["post", "/api/v1/dashboard/users"]
]

/** Operations that need no bearer token. */
const PUBLIC: ReadonlyArray<readonly [Method, string]> = [
  ["post", "/api/v1/auth/token"],
  ["post", "/api/v1/dashboard/signup"],
  ["post", "/api/v1/dashboard/login"],
  ["get", "/api/v1/checkout/{token}"],
  ["get", "/checkout/{token}"],
  ["get", "/api/v1/checkout/{token}/stream"]
]

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("the machine-readable contract", (it) => {
  const spec = Effect.cached(
    Effect.gen(function* () {
      const r = yield* call("GET", "/swagger/v1/swagger.json")
      expectStatus(r, 200)
      expect(r.contentType).toMatch(/^application\/json/)
      return r.body as { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } }
    })
  ).pipe(Effect.runSync)

  it.effect("GET /swagger/v1/swagger.json is an OpenAPI 3 document", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      expect(doc.openapi).toMatch(/^3\./)
      expect(doc.components.schemas).toHaveProperty("ProblemDetails")
    }))

  it.effect("it lists every operation of the interface", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const missing = INTERFACE.filter(([method, path]) => !doc.paths[path]?.[method]).map(([m, p]) => `${m.toUpperCase()} ${p}`)
      expect(missing).toEqual([])
      for (const receiver of RECEIVERS) {
        const paths = Object.keys(doc.paths).filter((p) => receiver.test(p))
        expect(paths, String(receiver)).toHaveLength(1)
        expect(doc.paths[paths[0]!]!.post, paths[0]).toBeDefined()
      }
    }))

  it.effect("it lists every dashboard-plane operation of DESIGN.md", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const missing = DASHBOARD.filter(([method, path]) => !doc.paths[path]?.[method]).map(([m, p]) => `${m.toUpperCase()} ${p}`)
      expect(missing).toEqual([])
    }))

  it.effect("public operations need no bearer; every other interface operation declares bearer security", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const isPublic = (m: Method, p: string) => PUBLIC.some(([pm, pp]) => pm === m && pp === p)
      for (const [method, path] of [...INTERFACE, ...DASHBOARD]) {
        const security = doc.paths[path]![method].security ?? []
        if (isPublic(method, path)) expect(security, `${method} ${path}`).toEqual([])
        else expect(security, `${method} ${path}`).toContainEqual({ bearer: [] })
      }
      for (const receiver of RECEIVERS) {
        const path = Object.keys(doc.paths).find((p) => receiver.test(p))!
        expect(doc.paths[path]!.post.security ?? []).toEqual([])
      }
    }))

  it.effect("errors are documented as application/problem+json", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const create = doc.paths["/api/v1/virtual-accounts"]!.post
      for (const status of ["400", "401", "403", "404", "409", "502"]) {
        expect(create.responses[status]?.content, status).toHaveProperty(["application/problem+json"])
      }
      expect(create.responses["201"].content).toHaveProperty(["application/json"])
    }))

  const operations = (doc: { paths: Record<string, Record<string, any>> }) =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method, path, op, id: `${method.toUpperCase()} ${path}` })))

  it.effect("every operation has a summary and a description saying who may call it", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      for (const { op, id } of operations(doc)) {
        expect(op.summary, id).toEqual(expect.any(String))
        expect(op.summary.length, id).toBeGreaterThan(5)
        expect(op.description, id).toMatch(/Access: /)
        if ((op.security ?? []).length > 0) {
          expect(op.description, id).toMatch(/API key|dashboard/)
          // Every bearer operation a dashboard token may call says which mode that token acts in.
          if (!/API plane only/.test(op.description)) expect(op.description, id).toContain("live mode unless it was minted with `mode: test`")
        }
        // An operation still answering 501 says so where a reader looks first.
        expect(op.summary.startsWith("Not built yet (501)"), id).toBe(op.responses["501"] !== undefined)
      }
      expect(doc.paths["/api/v1/transactions/{reference}/review"]!.post.description).toMatch(/Owner or Admin/)
      expect(doc.paths["/api/v1/sandbox/simulate/deposit"]!.post.description).toMatch(/test-mode API key/)
      expect(doc.paths["/api/v1/copilot/ask"]!.post.summary).not.toMatch(/501/)
      expect(doc.paths["/api/v1/insights"]!.get.summary).not.toMatch(/501/)
      expect(doc.paths["/api/v1/sub-merchants"]!.get.summary).not.toMatch(/501/)
      expect(doc.paths["/api/v1/rules"]!.get.summary).not.toMatch(/501/)
    }))

  it.effect("no schema-library artefacts: no title such as `Struct (Encoded side)`, `filter`, `brand`, `maxLength(64)`", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const titles: Array<string> = []
      const walk = (node: unknown, inInfo = false): void => {
        if (Array.isArray(node)) return node.forEach((n) => walk(n))
        if (node === null || typeof node !== "object") return
        for (const [k, v] of Object.entries(node)) {
          if (k === "title" && typeof v === "string" && !inInfo) titles.push(v)
          walk(v, k === "info")
        }
      }
      walk(doc)
      expect(titles.filter((t) => /Encoded side|filter|brand|Struct|\(|^int$|unknown/i.test(t))).toEqual([])
      const text = JSON.stringify(doc)
      expect(text).not.toMatch(/Encoded side|HttpApiDecodeError|"a string that will be trimmed"/)
    }))

  it.effect("kobo is documented as an integer with its minimum (Kobo 0, PositiveKobo 1), in every request body", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const schemas = doc.components.schemas as Record<string, any>
      const resolve = (s: any): any => (s?.$ref ? resolve(schemas[s.$ref.split("/").pop()]) : s)
      expect(schemas.Kobo).toMatchObject({ type: "integer", minimum: 0 })
      expect(schemas.PositiveKobo).toMatchObject({ type: "integer", minimum: 1 })
      const koboFields: Array<[string, any]> = []
      const walk = (node: any, where: string): void => {
        node = resolve(node)
        if (node === null || typeof node !== "object") return
        for (const [name, prop] of Object.entries(node.properties ?? {})) {
          // A kobo field that may also be null (`anyOf` with null) is documented as an integer in its other branch.
          const p = resolve(prop)
          if (/Kobo$/.test(name)) koboFields.push([`${where}.${name}`, p?.anyOf ? resolve(p.anyOf.find((b: any) => b.type !== "null")) : p])
          walk(prop, `${where}.${name}`)
        }
        if (node.items) walk(node.items, `${where}[]`)
      }
      for (const { op, id } of operations(doc)) walk(op.requestBody?.content?.["application/json"]?.schema, id)
      expect(koboFields.length).toBeGreaterThan(5)
      for (const [where, s] of koboFields) {
        expect(s.type, where).toBe("integer")
        expect(s.minimum, where).toBeGreaterThanOrEqual(0)
      }
      expect(resolve(doc.paths["/api/v1/virtual-accounts"]!.post.requestBody.content["application/json"].schema).properties.expectedAmountKobo)
        .toEqual({ $ref: "#/components/schemas/PositiveKobo", description: expect.any(String) })
    }))

  it.effect("each operation documents only the errors it can answer", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const isPublic = (m: string, p: string) => PUBLIC.some(([pm, pp]) => pm === m && pp === p)
      // Operations without a bearer token that still check credentials (and so answer 401).
      const CREDENTIALS = ["POST /api/v1/auth/token", "POST /api/v1/dashboard/login", "POST /webhooks/{provider}", "POST /api/v1/webhooks/{provider}"]
      const sets = new Set<string>()
      for (const { method, path, op, id } of operations(doc)) {
        const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400)
        sets.add(errors.join(","))
        for (const status of errors) expect(op.responses[status].content, `${id} ${status}`).toHaveProperty(["application/problem+json"])
        const bearer = (op.security ?? []).length > 0
        expect(errors.includes("401"), id).toBe(bearer || CREDENTIALS.includes(id))
        // Public operations answer no 401/403, except that exchanging credentials can refuse them: a wrong secret
        // (401) and a live key of a tenant not yet approved (403, the token exchange only).
        if (!bearer && !CREDENTIALS.includes(id)) expect(errors, id).not.toContain("401")
        if (!bearer && id !== "POST /api/v1/auth/token") expect(errors, id).not.toContain("403")
        if (isPublic(method, path)) expect(bearer, id).toBe(false)
        // A body may come with any POST, PUT, PATCH or DELETE (one that reads none too): refused for its size, and
        // (outside the provider receiver, which reads its raw body) for its media type; a GET's body is never read.
        const bodyMethod = ["post", "put", "patch", "delete"].includes(method)
        expect(errors.includes("413"), id).toBe(bodyMethod)
        expect(errors.includes("415"), id).toBe(bodyMethod && !RECEIVERS.some((r) => r.test(path)))
        // 501 only on what is not built yet; 502 only where the bank provider is called.
        if (errors.includes("502")) {
          expect(["POST /api/v1/virtual-accounts", "POST /api/v1/transfers/bank", "POST /api/v1/transfers/bank/lookup", "POST /api/v1/transactions/{reference}/refund",
            "PUT /api/v1/sub-merchants/{id}/payout", "PUT /api/v1/settings/settlement", "PUT /api/v1/dashboard/provider"], id).toContain(id)
        }
      }
      // Not one API-wide list on every operation.
      expect(sets.size).toBeGreaterThan(8)
      const get = doc.paths["/api/v1/virtual-accounts/{accountRef}"]!.get
      expect(Object.keys(get.responses).sort()).toEqual(["200", "400", "401", "404", "503"])
      const signup = doc.paths["/api/v1/dashboard/signup"]!.post
      expect(Object.keys(signup.responses).sort()).toEqual(["201", "400", "409", "413", "415", "503"])
      // A bodyless POST says why it can answer 415 at all.
      const pause = doc.paths["/api/v1/billing/schedules/{id}/pause"]!.post
      expect(pause.requestBody).toBeUndefined()
      expect(Object.keys(pause.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "413", "415", "503"])
      expect(pause.responses["415"].description).toMatch(/takes no body/)
    }))

  /** One request straight over a socket: the status line's code. `body` is sent as it is; `declaredLength` only claimed. */
  const statusOf = (method: string, path: string, opts: { body?: string; contentType?: string; declaredLength?: number }) =>
    Effect.flatMap(HttpServer.HttpServer, (server) =>
      Effect.async<number>((resume) => {
        const port = (server.address as HttpServer.TcpAddress).port
        if (opts.declaredLength !== undefined) {
          // Claim a body over the limit and send none of it: an answer before the body is read is the middleware's.
          const socket = net.connect(port, "127.0.0.1", () =>
            socket.write(`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${opts.declaredLength}\r\n\r\n`))
          let head = ""
          socket.on("data", (chunk) => {
            head += chunk.toString("latin1")
            const m = /^HTTP\/1\.1 (\d{3})/.exec(head)
            if (m) {
              socket.destroy()
              resume(Effect.succeed(Number(m[1])))
            }
          })
          socket.on("error", (e) => resume(Effect.die(e)))
          return Effect.sync(() => socket.destroy())
        }
        const req = http.request({ host: "127.0.0.1", port, method, path, agent: false, headers: {
          "content-type": opts.contentType ?? "application/json",
          // Declared, so a GET or DELETE carries its body too (Node frames neither by default).
          ...(opts.body !== undefined ? { "content-length": String(Buffer.byteLength(opts.body)) } : {})
        } }, (res) => {
          res.resume()
          resume(Effect.succeed(res.statusCode!))
        })
        req.on("error", (e) => resume(Effect.die(e)))
        req.end(opts.body)
        return Effect.sync(() => req.destroy())
      })
    )

  it.effect("415 and 413 are documented on exactly the operations the middleware answers them on (a bodyless POST included)", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      const mismatches: Array<string> = []
      let bodyless415 = 0
      for (const { method, path, op, id } of operations(doc)) {
        const url = path.replace(/\{provider\}/, "sandbox").replace(/\{[^}]+\}/g, "x")
        // A non-JSON body, without credentials: the media-type check runs before routing and authentication.
        const media = yield* statusOf(method.toUpperCase(), url, { body: "x=1", contentType: "text/plain" })
        if ((media === 415) !== (op.responses["415"] !== undefined)) mismatches.push(`${id}: answered ${media} to a text/plain body; 415 ${op.responses["415"] ? "" : "not "}documented`)
        if (media === 415 && op.requestBody === undefined) bodyless415++
        const size = yield* statusOf(method.toUpperCase(), url, { declaredLength: 2 * 1024 * 1024 })
        if ((size === 413) !== (op.responses["413"] !== undefined)) mismatches.push(`${id}: answered ${size} to a 2 MiB body; 413 ${op.responses["413"] ? "" : "not "}documented`)
      }
      expect(mismatches).toEqual([])
      // The point of the check: bodyless POSTs and DELETEs do answer 415.
      expect(bodyless415).toBeGreaterThan(10)
    }))

  it.effect("the provider receiver documents its JSON body, the X-Sandbox-Signature header and the canonical string", () =>
    Effect.gen(function* () {
      const doc = yield* spec
      for (const path of ["/webhooks/{provider}", "/api/v1/webhooks/{provider}"]) {
        const op = doc.paths[path]!.post
        const body = (doc.components.schemas as any)[op.requestBody.content["application/json"].schema.$ref.split("/").pop()]
        expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(["event", "merchantId", "sessionId", "accountNumber", "amountKobo", "paidAt", "reversedSessionId"]))
        expect(op.parameters).toContainEqual(expect.objectContaining({ in: "header", name: expect.stringMatching(/^x-sandbox-signature$/i) }))
        expect(op.description).toContain("event|merchantId|sessionId|accountNumber|amountKobo|paidAt")
      }
    }))

  it.effect("GET /docs answers 200 HTML", () =>
    Effect.gen(function* () {
      const r = yield* call("GET", "/docs")
      expectStatus(r, 200)
      expect(r.contentType).toMatch(/^text\/html/)
      expect(String(r.body)).toMatch(/<html/i)
    }))
})
