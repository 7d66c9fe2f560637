import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, LogLevel } from "effect"
import * as crypto from "node:crypto"
import { expectStatus } from "../support/ApiHelpers.js"
import { testTenant } from "../support/Pipeline.js"
import { type Answer, call } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import type { PaystackFake } from "../fakes/PaystackFake.js"

/** Every answer a test saw, and every log line the app wrote: the "no secret anywhere" test searches them. */
export const seen: Array<string> = []
const render = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x)))

/** A logger that keeps every line (message, annotations, cause: all rendered) in `seen`, in place of the console. */
export const capturedLogs = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, cause, logLevel, message }) => {
    const parts = [logLevel.label, ...(Array.isArray(message) ? message : [message]).map(render)]
    for (const [k, v] of annotations) parts.push(`${k}=${render(v)}`)
    if (!Cause.isEmpty(cause)) parts.push(Cause.pretty(cause, { renderErrorCause: true }))
    seen.push(parts.join(" "))
  })),
  Logger.minimumLogLevel(LogLevel.All)
)

/** `call`, remembering the answer for the secret search. */
export const api = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, opts: Parameters<typeof call>[2] = {}) =>
  Effect.tap(call(method, url, opts), (r: Answer) => Effect.sync(() => seen.push(`${r.status} ${render(r.body)} ${render(r.headers)}`)))

/** The app's own address, for the fake's webhook URL. */
export const appBaseUrl = Effect.map(HttpServer.HttpServer, (s) => {
  const a = s.address as { readonly hostname: string; readonly port: number }
  return `http://127.0.0.1:${a.port}`
})

export const newSecretKey = (mode: "test" | "live") => `sk_${mode}_${crypto.randomBytes(20).toString("hex")}`

/** A signed-up tenant whose test mode is connected to the fake Paystack (a fresh integration there). */
export const paystackTenant = (fake: PaystackFake, opts: { readonly balanceKobo?: number; readonly transferOtp?: boolean } = {}) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const secretKey = newSecretKey("test")
    fake.addIntegration({ secretKey, webhookUrl: `${yield* appBaseUrl}/webhooks/paystack`, balanceKobo: opts.balanceKobo ?? 100_000_000_00, ...(opts.transferOtp ? { transferOtp: true } : {}) })
    const connected = yield* api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json: { provider: "paystack", secretKey } })
    expectStatus(connected, 200)
    return { ...t, secretKey }
  })

/** Opens a virtual account through the API; answers its body. */
export const openAccount = (token: string, accountRef: string, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const r = yield* api("POST", "/api/v1/virtual-accounts", { token, json: { accountRef, name: "Adaeze Okafor", ...extra } })
    expectStatus(r, 201)
    return r.body as { accountRef: string; nuban: string; bankCode: string; bankName: string; accountName: string }
  })

/** The tenant's transactions with that reference (0 or 1). */
export const transactionsWith = (tenantId: string, reference: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${tenantId} AND reference = ${reference}`).pipe(
    Effect.map((r) => r[0]!.n),
    Effect.orDie
  )

export const inboxWith = (tenantId: string | null, reference: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM inbound_events WHERE provider_reference = ${reference}
      ${tenantId === null ? sql`` : sql`AND tenant_id = ${tenantId}`}`).pipe(Effect.map((r) => r[0]!.n), Effect.orDie)

/** Waits for the transaction (reconciled), bounded at 20 s. */
export const waitForTransaction = (token: string, reference: string) =>
  waitFor(`transaction ${reference}`, api("GET", `/api/v1/transactions/${reference}`, { token }), { until: (r) => r.status === 200, timeoutMs: 20_000 }).pipe(
    Effect.map((r) => r.body)
  )

/** A receiver answer's `result`. */
export const resultOf = (text: string) => {
  try {
    return (JSON.parse(text) as { result?: string; code?: string }).result ?? (JSON.parse(text) as { code?: string }).code
  } catch {
    return text
  }
}

export const expectOneOf = <A>(value: A, allowed: ReadonlyArray<A>, why: string) => expect(allowed, why).toContain(value)
