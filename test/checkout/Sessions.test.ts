import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Deferred, Effect, TestClock, TestContext } from "effect"
import * as crypto from "node:crypto"
import { CheckoutClock } from "../../services/checkout/Checkout.js"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { DIRECTORY, waitForTransfer } from "../transfers/support.js"
import { openSse } from "./SseClient.js"

// Checkout sessions, the snapshot and the hosted page over real HTTP (DESIGN.md "Live checkout"): the session's
// answer and TTL bounds, who may make one, 404s that say nothing, expiry on the checkout clock, the token stored
// hashed, and no personal data in any answer.

const TOKEN = /^chk_[A-Za-z0-9_-]{43}$/

const create = (token: string | undefined, json: unknown) =>
  call("POST", "/api/v1/checkout/sessions", { ...(token === undefined ? {} : { token }), json })

const baseUrl = HttpServer.addressFormattedWith((a) => Effect.succeed(a))

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("checkout sessions", (it) => {
  it.effect("201: a token, expiresAt = now + ttl (default 3600; 60 and 86400 accepted), relative URLs", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "ses-1", "Amaka Eze", 30_000)
      for (const ttl of [undefined, 60, 86_400]) {
        const before = Date.now()
        const r = yield* create(t.token, ttl === undefined ? { accountRef: "ses-1" } : { accountRef: "ses-1", ttlSeconds: ttl })
        const after = Date.now()
        expectStatus(r, 201)
        expect(r.contentType).toMatch(/^application\/json/)
        expect(Object.keys(r.body).sort()).toEqual(["expiresAt", "hostedUrl", "snapshotUrl", "streamUrl", "token"])
        expect(r.body.token).toMatch(TOKEN)
        const expires = Date.parse(r.body.expiresAt)
        expect(new Date(expires).toISOString()).toBe(r.body.expiresAt)
        const seconds = ttl ?? 3_600
        // Whole milliseconds of the server's now, which lies between before and after.
        expect(expires).toBeGreaterThanOrEqual(before + seconds * 1000)
        expect(expires).toBeLessThanOrEqual(after + seconds * 1000)
        expect(r.body).toMatchObject({
          snapshotUrl: `/api/v1/checkout/${r.body.token}`,
          streamUrl: `/api/v1/checkout/${r.body.token}/stream`,
          hostedUrl: `/checkout/${r.body.token}`
        })
        expectStatus(yield* call("GET", r.body.snapshotUrl), 200)
      }
      // Each session its own token.
      const a = yield* create(t.token, { accountRef: "ses-1" })
      const b = yield* create(t.token, { accountRef: "ses-1" })
      expect(a.body.token).not.toBe(b.body.token)
    }))

  it.effect("400 for a TTL out of bounds or not an integer; 404 for an unknown account or another tenant's; 401 without a token", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "ses-2", "Amaka Eze", 30_000)
      for (const ttlSeconds of [59, 86_401, 600.5, "600", 0, -60, null]) {
        const r = yield* create(t.token, { accountRef: "ses-2", ttlSeconds })
        expectProblem(r, 400, r.body.code)
        expect(["validation_failed", "invalid_request"], JSON.stringify(r.body)).toContain(r.body.code)
      }
      expectProblem(yield* create(t.token, { accountRef: "ses-2", ttlSeconds: 60, extra: 1 }), 400, "unknown_field")
      expectProblem(yield* create(t.token, { accountRef: "nope" }), 404, "virtual_account_not_found")
      const other = yield* testTenant
      yield* createAccount(other.token, "theirs", "Bola Ade", 10_000)
      expectProblem(yield* create(t.token, { accountRef: "theirs" }), 404, "virtual_account_not_found")
      for (const token of [undefined, "garbage"]) {
        const r = yield* create(token, { accountRef: "ses-2" })
        expectProblem(r, 401, r.body.code)
      }
      const sql = yield* SqlClient.SqlClient
      const [n] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM checkout_sessions WHERE tenant_id = ${t.tenantId}`
      expect(n!.n).toBe(0)
    }))

  it.effect("a dashboard token of any role makes a session (Owner, Admin, Member)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "ses-3", "Amaka Eze", 30_000)
      const admin = yield* dashboardUser(t, "Admin")
      const member = yield* dashboardUser(t, "Member")
      for (const token of [t.testOwnerToken, admin.token, member.token]) {
        const r = yield* create(token, { accountRef: "ses-3" })
        expectStatus(r, 201)
        expect(r.body.token).toMatch(TOKEN)
      }
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ createdBy: string }>`SELECT created_by FROM checkout_sessions WHERE tenant_id = ${t.tenantId} ORDER BY created_at`
      expect(rows).toHaveLength(3)
      // The live-mode Member token sees live mode, where the test account does not exist.
      expectProblem(yield* create(member.liveToken, { accountRef: "ses-3" }), 404, "virtual_account_not_found")
    }))

  it.effect("the snapshot (JSON at both paths, the hosted page for text/html with a CSP) follows the payment state", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "ses-4", "Amaka Eze", 30_000)
      const s = (yield* create(t.token, { accountRef: "ses-4" })).body
      const json = yield* call("GET", s.snapshotUrl)
      expectStatus(json, 200)
      expect(json.contentType).toMatch(/^application\/json/)
      expect(json.headers["cache-control"]).toBe("no-store")
      expect(Object.keys(json.body).sort()).toEqual(["amountDueKobo", "amountPaidKobo", "bankName", "expiresAt", "nuban", "remainingKobo", "status", "updatedAt"])
      expect(json.body).toMatchObject({ status: "awaiting_payment", amountDueKobo: 30_000, amountPaidKobo: 0, remainingKobo: 30_000, nuban: acc.nuban, expiresAt: s.expiresAt })
      // /checkout/{token}: JSON by default and for application/json, the same answer.
      expect((yield* call("GET", s.hostedUrl)).body).toEqual(json.body)
      expect((yield* call("GET", s.hostedUrl, { headers: { accept: "application/json" } })).body).toEqual(json.body)
      const page = yield* call("GET", s.hostedUrl, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } })
      expectStatus(page, 200)
      expect(page.contentType).toMatch(/^text\/html/)
      const csp = page.headers["content-security-policy"]!
      expect(csp).toMatch(/default-src 'none'|default-src 'self'/)
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1]
      expect(nonce).toBeDefined()
      expect(page.body).toContain(`nonce="${nonce}"`)
      expect(page.body).toContain(acc.nuban)
      expect(page.body).not.toMatch(/<script[^>]+src=["']?https?:/i)
      expect(page.body).not.toMatch(/<link[^>]+href=["']?https?:/i)
      // Another request, another nonce.
      const again = yield* call("GET", s.hostedUrl, { headers: { accept: "text/html" } })
      expect(again.headers["content-security-policy"]).not.toBe(csp)

      yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 10_000, senderName: "AMAKA EZE" })
      yield* waitForTransactions(t.tenantId, 1)
      expect((yield* call("GET", s.snapshotUrl)).body).toMatchObject({ status: "partially_paid", amountPaidKobo: 10_000, remainingKobo: 20_000 })
      expect((yield* call("GET", s.hostedUrl)).body).toMatchObject({ status: "partially_paid" })
      yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 20_000, senderName: "AMAKA EZE" })
      yield* waitForTransactions(t.tenantId, 2)
      expect((yield* call("GET", s.snapshotUrl)).body).toMatchObject({ status: "paid", amountPaidKobo: 30_000, remainingKobo: 0 })

      // An open account (no expected amount): no amount due, paid once anything arrived.
      const open = yield* createAccount(t.token, "ses-5", "Amaka Eze")
      const o = (yield* create(t.token, { accountRef: "ses-5" })).body
      expect((yield* call("GET", o.snapshotUrl)).body).toMatchObject({ status: "awaiting_payment", amountDueKobo: null, amountPaidKobo: 0 })
      yield* sendSigned(t, { accountNumber: open.nuban, amountKobo: 7_000, senderName: "AMAKA EZE" })
      yield* waitForTransactions(t.tenantId, 3)
      expect((yield* call("GET", o.snapshotUrl)).body).toMatchObject({ status: "paid", amountDueKobo: null, amountPaidKobo: 7_000 })
    }))

  it.effect("an unknown or malformed token is 404 checkout_session_not_found at every endpoint, never a 500", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const unknown = `chk_${crypto.randomBytes(32).toString("base64url")}`
      const tokens = [
        unknown, "chk_", "chk_short", "abc", `${unknown}x`, unknown.slice(0, -1), unknown.toUpperCase().replace("CHK_", "chk_"), "x".repeat(2_000),
        `chk_${"+".repeat(43)}`, "%E2%82%AC", "chk_%2e", "%F0%9F%92%A9"
      ]
      for (const token of tokens) {
        const paths = [`/api/v1/checkout/${token}`, `/checkout/${token}`]
        for (const path of paths) {
          const r = yield* call("GET", path)
          expect(r.status, `${path}: ${r.status} ${JSON.stringify(r.body)}`).toBe(404)
          if (r.body?.code !== undefined && path.includes("chk_")) expect(r.body.code, path).toBe("checkout_session_not_found")
          const html = yield* call("GET", path, { headers: { accept: "text/html" } })
          expect(html.status, path).toBe(404)
        }
        const stream = yield* Effect.promise(() => openSse(`${base}/api/v1/checkout/${token}/stream`))
        expect(stream.status, token).toBe(404)
      }
      // A NUL in the path is refused as every endpoint refuses one (400 invalid_text), still not a 500.
      for (const path of ["/api/v1/checkout/%00", "/checkout/%00", "/api/v1/checkout/chk_%00/stream", "/api/v1/checkout/%ZZ", "/checkout/chk_%C3"]) {
        expectProblem(yield* call("GET", path), 400, "invalid_text")
      }
      for (const path of [`/api/v1/checkout/${unknown}`, `/checkout/${unknown}`, "/api/v1/checkout/abc", "/checkout/chk_short"]) {
        expectProblem(yield* call("GET", path), 404, "checkout_session_not_found")
      }
      const stream = yield* Effect.promise(() => openSse(`${base}/api/v1/checkout/${unknown}/stream`))
      expect(stream.body).toMatchObject({ status: 404, code: "checkout_session_not_found" })
    }))

  it.scoped("expiry on the checkout clock (TestClock): 200 just before expiresAt, 404 from it on", () =>
    Effect.gen(function* () {
      const made = yield* Deferred.make<TestClock.TestClock>()
      yield* Effect.forkScoped(
        Effect.provide(Effect.flatMap(TestClock.testClock(), (c) => Deferred.succeed(made, c)).pipe(Effect.zipRight(Effect.never)), TestContext.TestContext)
      )
      const clock = yield* Deferred.await(made)
      const start = Date.parse("2031-05-01T09:00:00.000Z")
      yield* clock.setTime(start)
      const checkoutClock = yield* CheckoutClock
      yield* Effect.acquireRelease(checkoutClock.use(clock), () => checkoutClock.use(Clock.make()))

      const t = yield* testTenant
      yield* createAccount(t.token, "ses-6", "Amaka Eze", 30_000)
      const s = (yield* create(t.token, { accountRef: "ses-6", ttlSeconds: 600 })).body
      // The session lives by the checkout clock: expiresAt is its now + ttl.
      expect(s.expiresAt).toBe("2031-05-01T09:10:00.000Z")
      const long = (yield* create(t.token, { accountRef: "ses-6" })).body
      expect(long.expiresAt).toBe("2031-05-01T10:00:00.000Z")

      yield* clock.adjust(599_999)
      expectStatus(yield* call("GET", s.snapshotUrl), 200)
      expectStatus(yield* call("GET", s.hostedUrl), 200)
      expectStatus(yield* call("GET", s.hostedUrl, { headers: { accept: "text/html" } }), 200)
      yield* clock.adjust(1)
      expectProblem(yield* call("GET", s.snapshotUrl), 404, "checkout_session_not_found")
      expectProblem(yield* call("GET", s.hostedUrl), 404, "checkout_session_not_found")
      expect((yield* call("GET", s.hostedUrl, { headers: { accept: "text/html" } })).status).toBe(404)
      const base = yield* baseUrl
      const stream = yield* Effect.promise(() => openSse(`${base}${s.streamUrl}`))
      expect(stream.body).toMatchObject({ status: 404, code: "checkout_session_not_found" })
      // The other session of the same account lives on.
      expectStatus(yield* call("GET", long.snapshotUrl), 200)
      yield* clock.adjust(3_000_000)
      expectProblem(yield* call("GET", long.snapshotUrl), 404, "checkout_session_not_found")
    }))

  it.effect("the token is stored hashed: only its SHA-256 is in the table, nowhere the token itself", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "ses-7", "Amaka Eze", 30_000)
      const s = (yield* create(t.token, { accountRef: "ses-7" })).body
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<Record<string, unknown>>`SELECT * FROM checkout_sessions WHERE tenant_id = ${t.tenantId}`
      expect(rows).toHaveLength(1)
      expect(rows[0]!.tokenHash).toBe(crypto.createHash("sha256").update(s.token).digest("hex"))
      const everything = JSON.stringify(rows)
      expect(everything).not.toContain(s.token)
      expect(everything).not.toContain(s.token.slice(4))
      expect(everything).not.toContain("chk_")
      // Nor anywhere else in the database's text (audit entries, events).
      const dump = yield* sql<{ found: number }>`
        SELECT (SELECT count(*) FROM audit_log WHERE details::text LIKE ${"%" + s.token.slice(4) + "%"})::int
             + (SELECT count(*) FROM outbox WHERE payload::text LIKE ${"%" + s.token.slice(4) + "%"})::int AS found`.pipe(
        Effect.catchAll(() => Effect.succeed([{ found: 0 }]))
      )
      expect(dump[0]!.found).toBe(0)
    }))

  it.scoped("no personal data: no checkout answer (session, snapshot, page, every stream event) names the customer", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const customer = { name: "Zebedee Quarshie-Okonkwo", email: "zebedee.quarshie@example.ng", phone: "+2348031234567", accountRef: "zq-ref-7731" }
      const made = yield* call("POST", "/api/v1/virtual-accounts", {
        token: t.token, json: { accountRef: customer.accountRef, name: customer.name, email: customer.email, phone: customer.phone, expectedAmountKobo: 30_000 }
      })
      expectStatus(made, 201)
      const nuban = made.body.nuban as string
      // The one exception: the hosted page shows the NUBAN's account name (the provider's, which holds the customer's
      // name), as the payer's bank app shows it to anyone who types the NUBAN, so the payer can check it before paying.
      const accountName = made.body.accountName as string
      expect(accountName.toLowerCase()).toContain(customer.name.toLowerCase())
      const answers: Array<[string, string]> = []
      const s = yield* create(t.token, { accountRef: customer.accountRef })
      expectStatus(s, 201)
      answers.push(["session", JSON.stringify(s.body)])
      const session = s.body as { token: string; snapshotUrl: string; streamUrl: string; hostedUrl: string }
      const base = yield* baseUrl
      const stream = yield* Effect.acquireRelease(Effect.promise(() => openSse(`${base}${session.streamUrl}`)), (x) => Effect.sync(() => x.close()))
      yield* Effect.promise(() => stream.eventCount(1))
      const look = Effect.gen(function* () {
        const snap = yield* call("GET", session.snapshotUrl)
        expectStatus(snap, 200)
        answers.push(["snapshot", JSON.stringify(snap.body)])
        answers.push(["short", JSON.stringify((yield* call("GET", session.hostedUrl)).body)])
        const page = yield* call("GET", session.hostedUrl, { headers: { accept: "text/html" } })
        expect(page.contentType).toMatch(/^text\/html/)
        expect(String(page.body)).toContain(`<span id="account-name">${accountName}</span>`)
        answers.push(["page", String(page.body).split(accountName).join("")])
        answers.push(["page headers", JSON.stringify(page.headers)])
      })
      yield* look
      /** The stream's update to `kobo` paid (each change awaited, so no two coalesce into one update). */
      const updated = (kobo: number) =>
        Effect.promise(() => stream.until(`the update to ${kobo}`, (x) => x.events().some((e) => e.event === "update" && e.data!.includes(`"amountPaidKobo":${kobo},`))))
      let n = 0
      // Deposits paid in the customer's own name (the payer's name is the customer's: it must not come back either).
      const first = yield* sendSigned(t, { accountNumber: nuban, amountKobo: 10_000, senderName: customer.name.toUpperCase() })
      yield* waitForTransactions(t.tenantId, ++n)
      yield* updated(10_000)
      yield* look
      const over = yield* sendSigned(t, { accountNumber: nuban, amountKobo: 25_000, senderName: "ADAEZE OKAFOR", senderAccountNumber: DIRECTORY.adaeze.accountNumber })
      yield* waitForTransactions(t.tenantId, ++n)
      yield* updated(35_000)
      yield* look
      // A refund of the overpayment.
      expectStatus(yield* call("POST", `/api/v1/transactions/${over.sessionId}/refund`, { token: t.testOwnerToken }), 200)
      yield* waitForTransfer(t.token, `rfd_${over.sessionId}`)
      yield* updated(30_000)
      yield* look
      // A reversal.
      yield* sendSigned(t, { event: "transfer.reversal", accountNumber: nuban, amountKobo: 10_000, reversedSessionId: first.sessionId })
      yield* waitForTransactions(t.tenantId, ++n)
      yield* updated(20_000)
      yield* look
      for (const [amountKobo, paid] of [[2_000, 22_000], [1_000, 23_000]] as const) {
        yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName: customer.name })
        yield* waitForTransactions(t.tenantId, ++n)
        yield* updated(paid)
      }
      // One under review (a business payer, the fourth live inflow in ten minutes).
      const risky = yield* sendSigned(t, { accountNumber: nuban, amountKobo: 2_000, senderName: "CASAFINA CREDIT-EASY LOAN" })
      yield* waitForTransactions(t.tenantId, ++n)
      expect((yield* call("GET", `/api/v1/transactions/${risky.sessionId}`, { token: t.token })).body.status).toBe("PendingReview")
      yield* look
      expectStatus(yield* call("POST", `/api/v1/transactions/${risky.sessionId}/review`, { token: t.testOwnerToken, json: { decision: "approve" } }), 200)
      yield* updated(25_000)
      yield* look
      const events = stream.events()
      expect(events.map((e) => `${e.event} ${e.id}`)).toEqual([
        "snapshot 0.30000.awaiting_payment", "update 10000.30000.partially_paid", "update 35000.30000.overpaid", "update 30000.30000.paid",
        "update 20000.30000.partially_paid", "update 22000.30000.partially_paid", "update 23000.30000.partially_paid", "update 25000.30000.partially_paid"
      ])
      for (const e of events) answers.push([`stream ${e.event} ${e.id}`, `${e.event} ${e.id} ${e.data}`])
      answers.push(["stream (raw)", stream.raw()])

      const needles = [
        customer.name, ...customer.name.split(/[\s-]+/), customer.name.toUpperCase(), customer.email, customer.email.split("@")[0]!,
        customer.phone, customer.phone.slice(1), "08031234567", customer.accountRef
      ]
      for (const [what, text] of answers) {
        for (const needle of needles) {
          expect(text.toLowerCase().includes(needle.toLowerCase()), `${what} contains ${needle}: ${text.slice(0, 500)}`).toBe(false)
        }
      }
      // The search found what is there: the NUBAN is in every snapshot, page and event.
      for (const [what, text] of answers.filter(([w]) => w !== "session" && w !== "page headers")) expect(text, what).toContain(nuban)
    }))
})
