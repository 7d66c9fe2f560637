import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"

type Method = "get" | "post" | "put" | "delete"

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
  ["delete", "/api/v1/virtual-accounts/{accountRef}"],
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
  // Outbound webhook endpoints
  ["get", "/api/v1/webhook-endpoints"],
  ["post", "/api/v1/webhook-endpoints"],
  ["delete", "/api/v1/webhook-endpoints/{id}"],
  ["get", "/api/v1/webhook-endpoints/deliveries"],
  ["post", "/api/v1/webhook-endpoints/deliveries/{id}/replay"],
  // Other operations
  ["post", "/api/v1/settlements/{ref}/hold"],
  ["post", "/api/v1/settlements/{ref}/release"],
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

  it.effect("GET /docs answers 200 HTML", () =>
    Effect.gen(function* () {
      const r = yield* call("GET", "/docs")
      expectStatus(r, 200)
      expect(r.contentType).toMatch(/^text\/html/)
      expect(String(r.body)).toMatch(/<html/i)
    }))
})
