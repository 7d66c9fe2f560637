import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { formatWat } from "../../src/domain/Wat.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { apiToken, call, makeTestApp } from "../support/TestApp.js"

/**
 * The hosted page's HTML as served (the browser test drives it in chromium): the business name, the account name the
 * payer's bank app shows, the expiry in Lagos time; and for an unknown or expired link, a 404 HTML page for a browser
 * and the 404 problem+json for everyone else.
 */

const HTML = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" }

/** A tenant whose business name needs escaping, an account and a checkout session on it. */
const setUp = Effect.gen(function* () {
  const suffix = crypto.randomBytes(4).toString("hex")
  const businessName = `Ada & Sons <Lagos> "${suffix}"`
  const s = yield* call("POST", "/api/v1/dashboard/signup", { json: { businessName, email: `hp-${suffix}@example.ng`, password: "correct horse battery staple" } })
  expectStatus(s, 201)
  const { token } = yield* apiToken(s.body.accessToken, "test")
  const acc = yield* call("POST", "/api/v1/virtual-accounts", { token, json: { accountRef: `hp-${suffix}`, name: "Chidinma Okafor", expectedAmountKobo: 250_000 } })
  expectStatus(acc, 201)
  const session = yield* call("POST", "/api/v1/checkout/sessions", { token, json: { accountRef: `hp-${suffix}` } })
  expectStatus(session, 201)
  return { businessName, account: acc.body as { accountName: string; nuban: string }, session: session.body as { token: string; hostedUrl: string; snapshotUrl: string; expiresAt: string } }
})

const escaped = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The 404 page a browser gets: HTML, private, self-contained, saying the link is gone. */
const expectGonePage = (r: { status: number; contentType: string; headers: Readonly<Record<string, string>>; body: unknown }) => {
  expect(r.status).toBe(404)
  expect(r.contentType).toMatch(/^text\/html/)
  expect(r.headers["cache-control"]).toBe("no-store")
  expect(r.headers["x-problem-code"]).toBe("checkout_session_not_found")
  expect(r.headers["content-security-policy"]).toContain("default-src 'none'")
  expect(String(r.body)).toContain("This payment link has expired or does not exist")
  expect(String(r.body)).toMatch(/<html lang="en">/)
}

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("the hosted checkout page's HTML", (it) => {
  it.effect("shows the business name, the NUBAN's account name and the expiry in Lagos time, escaped", () =>
    Effect.gen(function* () {
      const { businessName, account, session } = yield* setUp
      // The sandbox provider names the NUBAN as its name enquiry will answer it (services/providers/SandboxProvider.ts).
      expect(account.accountName).toBe("COLLECTIONS/CHIDINMA OKAFOR")
      const r = yield* call("GET", session.hostedUrl, { headers: HTML })
      expectStatus(r, 200)
      expect(r.contentType).toMatch(/^text\/html/)
      const html = String(r.body)
      expect(html).toContain(`<strong id="business">${escaped(businessName)}</strong>`)
      expect(html).not.toContain("<Lagos>")
      expect(html).toContain(`<span id="account-name">${account.accountName}</span>`)
      const wat = formatWat(Date.parse(session.expiresAt))
      expect(wat).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} WAT$/)
      expect(html).toContain(`<time id="expires" datetime="${session.expiresAt}">${wat}</time>`)
      // The JSON snapshot still carries payment state only.
      const json = yield* call("GET", session.hostedUrl)
      expectStatus(json, 200)
      expect(Object.keys(json.body).sort()).toEqual(["amountDueKobo", "amountPaidKobo", "bankName", "expiresAt", "nuban", "remainingKobo", "status", "updatedAt"])
    }))

  it.effect("an unknown link: an HTML 404 page for a browser, problem+json for API clients", () =>
    Effect.gen(function* () {
      for (const token of [`chk_${"A".repeat(43)}`, "not-a-token"]) {
        expectGonePage(yield* call("GET", `/checkout/${token}`, { headers: HTML }))
        expectProblem(yield* call("GET", `/checkout/${token}`), 404, "checkout_session_not_found")
        expectProblem(yield* call("GET", `/checkout/${token}`, { headers: { accept: "application/json" } }), 404, "checkout_session_not_found")
        expectProblem(yield* call("GET", `/checkout/${token}`, { headers: { accept: "application/json, text/html" } }), 404, "checkout_session_not_found")
        // The API path is for API clients: problem+json whatever the Accept.
        expectProblem(yield* call("GET", `/api/v1/checkout/${token}`, { headers: HTML }), 404, "checkout_session_not_found")
      }
    }))

  it.effect("an expired link: the same HTML 404 page for a browser, problem+json for API clients", () =>
    Effect.gen(function* () {
      const { businessName, session } = yield* setUp
      expectStatus(yield* call("GET", session.hostedUrl, { headers: HTML }), 200)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE checkout_sessions SET expires_at = now() - interval '1 second', created_at = now() - interval '1 hour'
        WHERE token_hash = ${crypto.createHash("sha256").update(session.token).digest("hex")}`
      const page = yield* call("GET", session.hostedUrl, { headers: HTML })
      expectGonePage(page)
      // Nothing of the business or the account on the page of a dead link.
      expect(String(page.body)).not.toContain(escaped(businessName))
      expect(String(page.body)).not.toContain("COLLECTIONS/")
      expectProblem(yield* call("GET", session.hostedUrl), 404, "checkout_session_not_found")
      expectProblem(yield* call("GET", session.snapshotUrl, { headers: HTML }), 404, "checkout_session_not_found")
    }))
})
