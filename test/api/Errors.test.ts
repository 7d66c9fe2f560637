import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SignJWT } from "jose"
import * as crypto from "node:crypto"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp, sharedTenant } from "../support/TestApp.js"

const VA = "/api/v1/virtual-accounts"

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("errors are problem+json", (it) => {
  // One tenant and test token for the whole file: every case here is a refusal, nothing is stored.
  const tenant = sharedTenant()

  it.effect.each([
    ["a float (naira with kobo)", 1500.5],
    ["a string", "150000"],
    ["a negative amount", -5],
    ["zero (money must move)", 0],
    ["an unsafe integer", 2 ** 53 + 2]
  ] as const)("expectedAmountKobo as %s is 400 validation_failed naming integer kobo", ([, amount]) =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("POST", VA, { token, json: { accountRef: "kobo-1", name: "Kemi Ade", expectedAmountKobo: amount } })
      expectProblem(r, 400, "validation_failed")
      expect(r.body.message).toContain("integer kobo")
      expect(r.body.message).toContain("expectedAmountKobo")
      expect(r.body.errors).toEqual([{ path: "expectedAmountKobo", message: expect.stringContaining("integer kobo (1 naira = 100 kobo)") }])
      // Nothing was created.
      expectProblem(yield* call("GET", `${VA}/kobo-1`, { token }), 404, "virtual_account_not_found")
    }))

  it.effect("a float says a fraction was given, a string says it must be a JSON number", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const float = yield* call("POST", VA, { token, json: { accountRef: "k", name: "K", expectedAmountKobo: 1500.5 } })
      expect(float.body.message).toMatch(/fraction/)
      const str = yield* call("POST", VA, { token, json: { accountRef: "k", name: "K", expectedAmountKobo: "150000" } })
      expect(str.body.message).toMatch(/not a string/)
    }))

  it.effect("missing and malformed fields are 400 validation_failed with per-field errors", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const missing = yield* call("POST", VA, { token, json: { accountRef: "x-1" } })
      expectProblem(missing, 400, "validation_failed")
      expect(missing.body.errors).toContainEqual({ path: "name", message: expect.any(String) })

      const badRef = yield* call("POST", VA, { token, json: { accountRef: "has space", name: "Y" } })
      expectProblem(badRef, 400, "validation_failed")
      expect(badRef.body.errors[0].path).toBe("accountRef")

      const badEmail = yield* call("POST", VA, { token, json: { accountRef: "x-2", name: "Y", email: "not-an-email" } })
      expectProblem(badEmail, 400, "validation_failed")
      expect(badEmail.body.errors[0].path).toBe("email")

      expectProblem(yield* call("POST", VA, { token, json: [1, 2] }), 400, "validation_failed")
    }))

  it.effect("malformed JSON is 400 malformed_request", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      expectProblem(yield* call("POST", VA, { token, rawBody: "{not json" }), 400, "malformed_request")
      expectProblem(yield* call("POST", VA, { token, rawBody: '{"accountRef": "x", ' }), 400, "malformed_request")
      // Also on a public endpoint, before any authentication.
      expectProblem(yield* call("POST", "/api/v1/auth/token", { rawBody: "{{{" }), 400, "malformed_request")
    }))

  it.effect("a body over 1 MiB is 413 payload_too_large (an answer, not a reset connection)", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const big = JSON.stringify({ accountRef: "big-1", name: "Big Body", pad: "a".repeat(2 * 1024 * 1024) })
      const r = yield* call("POST", VA, { token, rawBody: big })
      expectProblem(r, 413, "payload_too_large")
      expect(r.body.message).toContain("1 MiB")
      // The server is still there for the next request.
      expectStatus(yield* call("GET", VA, { token }), 200)
    }))

  it.effect("an unknown route is 404 route_not_found, with or without a token", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("GET", "/api/v1/no-such-thing", { token })
      expectProblem(r, 404, "route_not_found")
      expect(r.body.message).toContain("/api/v1/no-such-thing")
      expectProblem(yield* call("GET", "/nothing-here"), 404, "route_not_found")
      // A known path with another method is a 405 (test/api/ConventionsSecondRound.test.ts).
      expectProblem(yield* call("PUT", VA, { token, json: {} }), 405, "method_not_allowed")
    }))

  it.effect("a missing bearer token is 401", () =>
    Effect.gen(function* () {
      expectProblem(yield* call("GET", VA), 401, "missing_token")
      expectProblem(yield* call("POST", VA, { json: { accountRef: "x", name: "y" } }), 401, "missing_token")
      expectProblem(yield* call("GET", "/api/v1/dashboard/me"), 401, "missing_token")
    }))

  it.effect("a garbage, foreign-signed or unsigned bearer token is 401 invalid_token", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      expectProblem(yield* call("GET", VA, { token: "garbage" }), 401, "invalid_token")
      expectProblem(yield* call("GET", VA, { token: "a.b.c" }), 401, "invalid_token")

      // A well-formed token with our claims, signed with a key that is not ours.
      const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())
      const forged = yield* Effect.promise(() =>
        new SignJWT({ tid: claims.tid, mode: "test", plane: "api" })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setSubject(claims.sub)
          .setIssuer(claims.iss)
          .setAudience(claims.aud)
          .setIssuedAt(claims.iat)
          .setExpirationTime(claims.exp)
          .sign(crypto.randomBytes(32))
      )
      expectProblem(yield* call("GET", VA, { token: forged }), 401, "invalid_token")

      // The real token with alg none and no signature.
      const [, payload] = token.split(".")
      const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`
      expectProblem(yield* call("GET", VA, { token: unsigned }), 401, "invalid_token")

      // A tampered payload (test mode switched to live) fails the signature.
      const tampered = `${token.split(".")[0]}.${Buffer.from(JSON.stringify({ ...claims, mode: "live" })).toString("base64url")}.${token.split(".")[2]}`
      expectProblem(yield* call("GET", VA, { token: tampered }), 401, "invalid_token")

      // The real token still works.
      expectStatus(yield* call("GET", VA, { token }), 200)
    }))

  it.effect("every operation is built: the last one (the copilot) answers, and authentication still comes first", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      // An API key token: the copilot is dashboard-plane only.
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { token, json: { prompt: "How much came in today?" } }), 403, "wrong_plane")
      expectProblem(yield* call("POST", "/api/v1/copilot/ask", { json: { prompt: "How much came in today?" } }), 401, "missing_token")
    }))

  it.effect("problem documents carry RFC 9457 fields: type, title, status, instance", () =>
    Effect.gen(function* () {
      const { token } = yield* tenant
      const r = yield* call("GET", `${VA}/nope`, { token })
      expectProblem(r, 404, "virtual_account_not_found")
      expect(r.body).toMatchObject({ type: expect.stringContaining("virtual_account_not_found"), title: "Not Found", status: 404, instance: `${VA}/nope` })
    }))
})
