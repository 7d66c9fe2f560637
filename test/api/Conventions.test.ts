import { HttpClient, HttpClientRequest, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, LogLevel } from "effect"
import { SignJWT } from "jose"
import { Api } from "../../src/http/Api.js"
import { problemDetails } from "../../src/http/Problem.js"
import { accessLog } from "../../src/http/Server.js"
import { Keys } from "../../services/access/Keys.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { eventBody, testTenant } from "../support/Pipeline.js"
import { captureLogs, makeWebhooksTestApp } from "../support/Webhooks.js"
import { apiToken, call, makeTestApp, signup, sharedTenant } from "../support/TestApp.js"

const VA = "/api/v1/virtual-accounts"

/** A raw request with any content type and headers, answered as status, content type, headers and parsed body. */
const raw = (method: "GET" | "POST", url: string, opts: { body?: string; contentType?: string; headers?: Record<string, string>; token?: string } = {}) =>
  call(method, url, {
    ...(opts.body !== undefined ? { rawBody: opts.body } : {}),
    ...(opts.contentType !== undefined ? { contentType: opts.contentType } : {}),
    ...(opts.headers !== undefined ? { headers: opts.headers } : {}),
    ...(opts.token !== undefined ? { token: opts.token } : {})
  })

/** Internal schema names and schema-library words a client must never read in a message. */
const INTERNAL = /CreateVirtualAccount|PositiveKobo|\bKobo\b|Brand|brand|Struct|Refinement|Transformation|filter|<suspended>|readonly|\{ /

const expectPlain = (r: { body: any }) => {
  const text = JSON.stringify([r.body.message, r.body.errors ?? []])
  if (process.env.SHOW_MESSAGES) console.log(r.body.message)
  expect(text, text).not.toMatch(INTERNAL)
}

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("API conventions", (it) => {
  const tenant = sharedTenant()

  it.effect("an unknown body field is 400 unknown_field naming it, and nothing is created", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("POST", VA, { token, json: { accountRef: "typo-1", name: "Kemi Ade", expectedAmountKbo: 150000 } })
      expectProblem(r, 400, "unknown_field")
      expect(r.body.message).toContain('"expectedAmountKbo"')
      expect(r.body.errors).toEqual([{ path: "expectedAmountKbo", message: expect.any(String) }])
      expectProblem(yield* call("GET", `${VA}/typo-1`, { token }), 404, "virtual_account_not_found")
      // Nested and on other endpoints alike: the same mechanism.
      const login = yield* call("POST", "/api/v1/dashboard/login", { json: { email: "a@b.ng", password: "x", remember: true } })
      expectProblem(login, 400, "unknown_field")
      const hook = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: "https://example.com/h", secret: "mine" } })
      expectProblem(hook, 400, "unknown_field")
    }))

  it("every JSON payload of the API refuses unknown fields (one mechanism, checked over the whole contract)", () => {
    const loose: Array<string> = []
    for (const group of Object.values(Api.groups) as Array<any>) {
      // The provider's webhook is read raw (its payload schema documents it, nothing decodes it): a provider may add fields.
      if (group.identifier === "receiver") continue
      for (const endpoint of Object.values(group.endpoints) as Array<any>) {
        if (endpoint.payloadSchema._tag !== "Some") continue
        // An optional body (OptionalBody: a Body or no body at all, null) is checked on its Body.
        const ast = endpoint.payloadSchema.value.ast
        const bodies = ast._tag === "Union" ? ast.types.filter((t: any) => !(t._tag === "Literal" && t.literal === null)) : [ast]
        for (const body of bodies) {
          const options = body.annotations[Symbol.for("effect/annotation/ParseOptions")]
          if (options?.onExcessProperty !== "error") loose.push(`${group.identifier}.${endpoint.name}`)
        }
      }
    }
    expect(loose).toEqual([])
  })

  it.effect("enums match in any case (query and body); an unknown value lists every allowed value", () =>
    Effect.gen(function* () {
      const { token, ownerToken } = yield* tenant
      expectStatus(yield* call("GET", "/api/v1/transactions?status=completed&reconciliation=EXACT", { token }), 200)
      expectStatus(yield* call("GET", "/api/v1/webhook-endpoints/deliveries?status=deadlettered", { token }), 200)
      const bad = yield* call("GET", "/api/v1/transactions?status=done", { token })
      expectProblem(bad, 400, "validation_failed")
      for (const v of ["Completed", "PendingReview", "Rejected", "Reversed"]) expect(bad.body.message).toContain(v)
      expectPlain(bad)

      const key = yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: "TEST" } })
      expectStatus(key, 201)
      expect(key.body.mode).toBe("test")
      const badMode = yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: "sandbox" } })
      expectProblem(badMode, 400, "validation_failed")
      expect(badMode.body.message).toMatch(/test, live/)
      const numberMode = yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: 1 } })
      expectProblem(numberMode, 400, "validation_failed")
      expect(numberMode.body.message).toMatch(/test, live/)

      const member = yield* call("POST", "/api/v1/dashboard/users", { token: ownerToken, json: { email: `m-${Date.now()}@example.ng`, password: "member password 1", role: "member" } })
      expectStatus(member, 201)
      expect(member.body.role).toBe("Member")
      const badRole = yield* call("POST", "/api/v1/dashboard/users", { token: ownerToken, json: { email: "x@example.ng", password: "member password 1", role: "Boss" } })
      expectProblem(badRole, 400, "validation_failed")
      expect(badRole.body.message).toContain("Admin, Member")

      const review = yield* call("POST", "/api/v1/transactions/nope/review", { token: ownerToken, json: { decision: "APPROVE" } })
      expectProblem(review, 404, "transaction_not_found")
      const badDecision = yield* call("POST", "/api/v1/transactions/nope/review", { token: ownerToken, json: { decision: "maybe" } })
      expectProblem(badDecision, 400, "validation_failed")
      expect(badDecision.body.message).toContain("approve, reject")
    }))

  it.effect("string and float kobo are 400s saying integer kobo; no message names an internal schema", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      for (const amount of ["150000", 1500.5, -1, 0, null, true, {}]) {
        const r = yield* call("POST", VA, { token, json: { accountRef: "kobo-x", name: "K", expectedAmountKobo: amount } })
        expectProblem(r, 400, "validation_failed")
        expect(r.body.message).toContain("integer kobo")
        expectPlain(r)
      }
      for (const body of [[1, 2], "text", 42, null, { accountRef: 5, name: ["x"] }, {}]) {
        const r = yield* call("POST", VA, { token, rawBody: JSON.stringify(body) })
        expectProblem(r, 400, "validation_failed")
        expectPlain(r)
      }
      const { ownerToken } = yield* tenant
      const longNote = yield* call("POST", "/api/v1/transactions/x/review", { token: ownerToken, json: { decision: "approve", note: "n".repeat(1001) } })
      expectProblem(longNote, 400, "validation_failed")
      expect(longNote.body.message).toMatch(/note: must be a string at most 1000 character\(s\) long/)
      expectPlain(longNote)
      const numberUrl = yield* call("POST", "/api/v1/webhook-endpoints", { token, json: { url: 5 } })
      expect(numberUrl.body.message).toMatch(/url: must be a string, not 5/)
      const dates = yield* call("GET", "/api/v1/transactions?from=yesterday", { token })
      expectProblem(dates, 400, "validation_failed")
      expectPlain(dates)
    }))

  it.effect("a body that is not JSON is 415 unsupported_media_type; malformed JSON stays 400", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const json = JSON.stringify({ accountRef: "media-1", name: "Media" })
      for (const contentType of ["multipart/form-data", "text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
        const r = yield* raw("POST", VA, { token, body: contentType.includes("urlencoded") ? "accountRef=media-1&name=Media" : json, contentType })
        expectProblem(r, 415, "unsupported_media_type")
      }
      // Public endpoints too, before authentication.
      expectProblem(yield* raw("POST", "/api/v1/auth/token", { body: "clientId=a", contentType: "application/x-www-form-urlencoded" }), 415, "unsupported_media_type")
      expectProblem(yield* raw("POST", VA, { token, body: "{nope", contentType: "application/json; charset=utf-8" }), 400, "malformed_request")
      expectStatus(yield* raw("POST", VA, { token, body: json, contentType: "application/json; charset=utf-8" }), 201)
    }))

  it.effect("NUL characters and lone surrogates in the path, query or body are 400 invalid_text", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      expectProblem(yield* call("GET", `${VA}/abc%00def`, { token }), 400, "invalid_text")
      expectProblem(yield* call("GET", `${VA}/abc%ED%A0%80`, { token }), 400, "invalid_text")
      expectProblem(yield* call("GET", `${VA}?subMerchantRef=a%00b`, { token }), 400, "invalid_text")
      expectProblem(yield* call("GET", `/api/v1/transactions?accountRef=%ED%B0%80`, { token }), 400, "invalid_text")
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef":"nul-1","name":"A\\u0000B"}' }), 400, "invalid_text")
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef":"sur-1","name":"A\\ud800B"}' }), 400, "invalid_text")
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef":"sur-2","name":"A\\udc00"}' }), 400, "invalid_text")
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef\\u0000":"k","name":"A"}' }), 400, "invalid_text")
      // A real surrogate pair (an emoji) and an escaped backslash before "u0000" are fine.
      expectStatus(yield* call("POST", VA, { token, rawBody: '{"accountRef":"emoji-1","name":"Ade \\ud83d\\ude00"}' }), 201)
      expectStatus(yield* call("POST", VA, { token, rawBody: '{"accountRef":"slash-1","name":"C:\\\\u0000"}' }), 201)
      // Before authentication: no token, still 400.
      expectProblem(yield* call("POST", VA, { rawBody: '{"name":"\\u0000"}' }), 400, "invalid_text")
    }))

  it.effect("the provider receiver refuses invalid text before the signature (unsigned: 400, not 401)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const body = JSON.stringify({ ...eventBody(t, { accountNumber: "9930000737", amountKobo: 100 }), narration: "fees\u0000" })
      for (const path of ["/webhooks/sandbox", "/api/v1/webhooks/sandbox"]) {
        expectProblem(yield* raw("POST", path, { body }), 400, "invalid_text")
        expectProblem(yield* raw("POST", path, { body: body.replace("\\u0000", "\\udfff") }), 400, "invalid_text")
      }
      expectProblem(yield* raw("POST", "/webhooks/sand%00box", { body }), 400, "invalid_text")
      // Without the bad text, the same unsigned body is a 401.
      expectProblem(yield* raw("POST", "/webhooks/sandbox", { body: body.replace("\\u0000", "") }), 401, "invalid_signature")
    }))

  it.effect("a bearer token without exp is 401 invalid_token", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const { tokenSigningKey } = yield* Keys
      const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())
      const forever = yield* Effect.promise(() =>
        new SignJWT({ tid: claims.tid, mode: claims.mode, plane: claims.plane })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setSubject(claims.sub).setIssuer(claims.iss).setAudience(claims.aud).setIssuedAt(claims.iat)
          .sign(tokenSigningKey)
      )
      const r = yield* call("GET", VA, { token: forever })
      expectProblem(r, 401, "invalid_token")
      expect(r.body.message).toMatch(/expiry/)
      expectStatus(yield* call("GET", VA, { token }), 200)
    }))

  it.effect("lists answer { data, hasMore } and page with startingAfter (stable across pages)", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const refs = ["p-1", "p-2", "p-3", "p-4", "p-5"]
      for (const accountRef of refs) expectStatus(yield* call("POST", VA, { token, json: { accountRef, name: "Pager" } }), 201)
      const first = yield* call("GET", `${VA}?take=2`, { token })
      expectStatus(first, 200)
      expect(first.body.hasMore).toBe(true)
      expect(first.body.data.map((a: any) => a.accountRef)).toEqual(["p-5", "p-4"])
      const second = yield* call("GET", `${VA}?take=2&startingAfter=p-4`, { token })
      expect(second.body.data.map((a: any) => a.accountRef)).toEqual(["p-3", "p-2"])
      expect(second.body.hasMore).toBe(true)
      const last = yield* call("GET", `${VA}?take=2&startingAfter=p-2`, { token })
      expect(last.body).toMatchObject({ hasMore: false })
      expect(last.body.data.map((a: any) => a.accountRef)).toEqual(["p-1"])
      const all = yield* call("GET", `${VA}?take=9999`, { token })
      expect(all.body).toMatchObject({ hasMore: false })
      expect(all.body.data).toHaveLength(5)

      const unknown = yield* call("GET", `${VA}?startingAfter=nope`, { token })
      expectProblem(unknown, 400, "unknown_starting_after")
      expect(unknown.body.message).toContain("startingAfter")

      // The same shape on every implemented list.
      for (const path of ["/api/v1/transactions", "/api/v1/webhook-endpoints", "/api/v1/webhook-endpoints/deliveries"]) {
        const r = yield* call("GET", `${path}?take=1`, { token })
        expectStatus(r, 200)
        expect(r.body).toEqual({ data: expect.any(Array), hasMore: false })
        expectProblem(yield* call("GET", `${path}?startingAfter=nope`, { token }), 400, "unknown_starting_after")
      }
      yield* apiToken(ownerToken, "test").pipe(Effect.zipRight(apiToken(ownerToken, "test")))
      const keys1 = yield* call("GET", "/api/v1/dashboard/api-keys?take=2", { token: ownerToken })
      expect(keys1.body.hasMore).toBe(true)
      const keys2 = yield* call("GET", `/api/v1/dashboard/api-keys?take=2&startingAfter=${keys1.body.data[1].id}`, { token: ownerToken })
      expect(keys2.body).toMatchObject({ hasMore: false })
      expect(keys2.body.data).toHaveLength(1)
      const users = yield* call("GET", "/api/v1/dashboard/users?take=1", { token: ownerToken })
      expect(users.body).toEqual({ data: [expect.objectContaining({ role: "Owner" })], hasMore: false })
    }))

  it.effect("GET / redirects to /docs and mentions the dashboard", () =>
    Effect.gen(function* () {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.followRedirects(0))
      const r = yield* client.execute(HttpClientRequest.get("/")).pipe(
        Effect.flatMap((res) => Effect.map(res.text, (text) => ({ status: res.status, location: res.headers["location"], text }))),
        Effect.scoped,
        Effect.orDie
      )
      expect(r.status).toBe(302)
      expect(r.location).toBe("/docs")
      expect(r.text).toContain("/dashboard")
    }))

  it.effect("every answer carries an x-request-id; a caller's plain one is echoed", () =>
    Effect.gen(function* () {
      const mine = yield* raw("GET", "/api/v1/dashboard/me", { headers: { "x-request-id": "req-abc.123" } })
      expect(mine.status).toBe(401)
      expect(mine.headers["x-request-id"]).toBe("req-abc.123")
      const fresh = yield* raw("GET", "/swagger/v1/swagger.json", { headers: { "x-request-id": "bad id\u00e9" } })
      expect(fresh.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
    }))
})

const logs = captureLogs()
layer(makeWebhooksTestApp({ config: { logLevel: LogLevel.All }, logs: logs.layer }), { timeout: 60_000, excludeTestServices: true })("the access log", (it) => {
  it.effect("one info line per request: method, path without query, status, duration, request id; never a token or query", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const access = () => logs.lines.filter((l) => /^INFO (GET|POST) /.test(l))
      const before = access().length
      const listed = yield* raw("GET", `${VA}?take=1&subMerchantRef=hush-query`, { token, headers: { "x-request-id": "trace-1" } })
      expectStatus(listed, 200)
      yield* raw("GET", "/api/v1/checkout/ck_secret_token_123")
      // The receiver's fast path is the hot path: it writes no access line.
      yield* raw("POST", "/webhooks/sandbox", { body: JSON.stringify({ event: "transfer.inbound" }) })
      const lines = access().slice(before)
      expect(lines).toEqual([
        expect.stringMatching(/^INFO GET \/api\/v1\/virtual-accounts 200 \d+ms request=trace-1$/),
        expect.stringMatching(/^INFO GET \/api\/v1\/checkout\/\{token\} 404 \d+ms request=[0-9a-f-]{36} code=checkout_session_not_found$/)
      ])
      const all = logs.lines.join("\n")
      for (const secret of [token, ownerToken, "hush-query", "ck_secret_token_123"]) expect(all).not.toContain(secret)
    }))

  it.effect("a 4xx line ends with the problem code the answer carries (code=...); a 2xx line has none", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const access = () => logs.lines.filter((l) => /^INFO (GET|POST) /.test(l))
      const before = access().length
      // Each kind of 4xx: the auth middleware's, the input checks' before routing, the payload decoder's, a handler's,
      // the router's. The code logged is the one in the answer's body.
      const answers = [
        yield* raw("GET", VA, { headers: { "x-request-id": "log-401" } }),
        yield* raw("POST", VA, { token, body: "accountRef=x", contentType: "text/plain", headers: { "x-request-id": "log-415" } }),
        yield* raw("POST", VA, { token, body: JSON.stringify({ accountRef: "log-1", name: "Log", expectedAmountKbo: 5 }), headers: { "x-request-id": "log-400" } }),
        yield* raw("POST", VA, { token, body: JSON.stringify({ accountRef: "log-1", name: "Log", expectedAmountKobo: "five" }), headers: { "x-request-id": "log-400b" } }),
        yield* raw("GET", `${VA}/no-such-account`, { token, headers: { "x-request-id": "log-404" } }),
        yield* raw("GET", "/api/v1/no-such-route", { headers: { "x-request-id": "log-404b" } }),
        yield* raw("GET", VA, { token, headers: { "x-request-id": "log-200" } })
      ]
      expect(answers.map((a) => [a.status, a.body?.code])).toEqual([
        [401, "missing_token"], [415, "unsupported_media_type"], [400, "unknown_field"], [400, "validation_failed"],
        [404, "virtual_account_not_found"], [404, "route_not_found"], [200, undefined]
      ])
      expect(access().slice(before)).toEqual([
        expect.stringMatching(/^INFO GET \/api\/v1\/virtual-accounts 401 \d+ms request=log-401 code=missing_token$/),
        expect.stringMatching(/^INFO POST \/api\/v1\/virtual-accounts 415 \d+ms request=log-415 code=unsupported_media_type$/),
        expect.stringMatching(/^INFO POST \/api\/v1\/virtual-accounts 400 \d+ms request=log-400 code=unknown_field$/),
        expect.stringMatching(/^INFO POST \/api\/v1\/virtual-accounts 400 \d+ms request=log-400b code=validation_failed$/),
        expect.stringMatching(/^INFO GET \/api\/v1\/virtual-accounts\/no-such-account 404 \d+ms request=log-404 code=virtual_account_not_found$/),
        expect.stringMatching(/^INFO GET \/api\/v1\/no-such-route 404 \d+ms request=log-404b code=route_not_found$/),
        expect.stringMatching(/^INFO GET \/api\/v1\/virtual-accounts 200 \d+ms request=log-200$/)
      ])
    }))

  it.effect("a 5xx line carries its code too: 500 internal_error (an error, with its cause), 503 as a warning", () =>
    Effect.gen(function* () {
      // The service's own access log and problem middlewares around an app that fails, as Server.ts composes them.
      const serve = (app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>, id: string) =>
        accessLog(problemDetails(app)).pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request(`http://localhost/api/v1/odd?q=${id}`, { headers: { "x-request-id": id } }))),
          Effect.scoped,
          Effect.exit
        )
      expect(Exit.isFailure(yield* serve(Effect.die(new Error("boom in a handler")), "log-500"))).toBe(true)
      const unavailable = HttpServerResponse.unsafeJson({ code: "database_unavailable", message: "The database is unavailable." }, { status: 503 })
      expect(Exit.isSuccess(yield* serve(Effect.succeed(unavailable), "log-503"))).toBe(true)
      const error = logs.lines.find((l) => l.includes("request=log-500"))
      expect(error).toMatch(/^ERROR GET \/api\/v1\/odd 500 \d+ms request=log-500 code=internal_error /)
      expect(error).toContain("boom in a handler")
      expect(logs.lines.filter((l) => l.includes("request=log-503"))).toEqual([
        expect.stringMatching(/^WARN GET \/api\/v1\/odd 503 \d+ms request=log-503 code=database_unavailable$/)
      ])
    }))
})
