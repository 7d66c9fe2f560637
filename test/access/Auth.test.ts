import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { approve, expectProblem, expectStatus, inviteAndLogin, login, OWNER_PASSWORD } from "../support/ApiHelpers.js"
import { apiToken, call, makeTestApp, signup } from "../support/TestApp.js"
import { isValidNuban } from "../../src/domain/Nuban.js"

// Token expiry runs on the Effect Clock. `layer()` from @effect/vitest builds the harness on top of its
// TestContext, so the HTTP server's fibers read the same TestClock as the test: moving it with
// TestClock.adjust moves the server's "now" (tokens minted here are issued at TestClock time, epoch 0).
// Each layer below is its own app, database and TestClock, so moving the clock here affects no other test.
layer(makeTestApp({ workers: false }), { timeout: 60_000 })("token expiry (Effect clock moved, no sleep)", (it) => {
  it.effect("a token works until its hour is up, then answers 401 token_expired", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())
      expect(claims.exp - claims.iat).toBe(3600)

      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token }), 200)
      expectStatus(yield* call("GET", "/api/v1/dashboard/me", { token: ownerToken }), 200)

      yield* TestClock.adjust("3599 seconds")
      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token }), 200)

      yield* TestClock.adjust("2 seconds") // 3601 s after minting
      expectProblem(yield* call("GET", "/api/v1/virtual-accounts", { token }), 401, "token_expired")
      // Dashboard tokens expire the same way.
      expectProblem(yield* call("GET", "/api/v1/dashboard/me", { token: ownerToken }), 401, "token_expired")

      // The remedy the message names: a new token minted now works.
      const fresh = yield* apiToken((yield* signup()).ownerToken, "test")
      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token: fresh.token }), 200)
    }))
})

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("dashboard and API-key authentication", (it) => {
  it.effect("signup with a taken e-mail is 409 email_taken (any letter case)", () =>
    Effect.gen(function* () {
      const { email } = yield* signup()
      const again = yield* call("POST", "/api/v1/dashboard/signup", {
        json: { businessName: "Another Biz", email: email.toUpperCase(), password: OWNER_PASSWORD }
      })
      expectProblem(again, 409, "email_taken")
    }))

  it.effect("login: wrong password or unknown e-mail is 401 invalid_credentials", () =>
    Effect.gen(function* () {
      const { email } = yield* signup()
      expectProblem(yield* login(email, "not the password at all"), 401, "invalid_credentials")
      expectProblem(yield* login("nobody-here@example.ng", OWNER_PASSWORD), 401, "invalid_credentials")
      const ok = yield* login(email, OWNER_PASSWORD)
      expectStatus(ok, 200)
      expect(ok.body).toMatchObject({ tokenType: "Bearer", expiresIn: 3600 })
    }))

  it.effect("login with mode test gives a dashboard token whose me says test; the default is live", () =>
    Effect.gen(function* () {
      const { email, tenantId } = yield* signup()
      const test = yield* login(email, OWNER_PASSWORD, "test")
      expectStatus(test, 200)
      const meTest = yield* call("GET", "/api/v1/dashboard/me", { token: test.body.accessToken })
      expectStatus(meTest, 200)
      expect(meTest.body).toMatchObject({ mode: "test", tenant: { id: tenantId, onboardingStatus: "NotStarted" }, user: { email, role: "Owner" } })

      const live = yield* login(email, OWNER_PASSWORD)
      const meLive = yield* call("GET", "/api/v1/dashboard/me", { token: live.body.accessToken })
      expect(meLive.body.mode).toBe("live")
    }))

  it.effect("GET /dashboard/provider gives the merchant id and webhook secret of the token's mode, to Owner/Admin only", () =>
    Effect.gen(function* () {
      const { email, ownerToken } = yield* signup()
      const live = yield* call("GET", "/api/v1/dashboard/provider", { token: ownerToken })
      expectStatus(live, 200)
      expect(live.body).toMatchObject({ mode: "live", provider: "sandbox", receiverPath: "/webhooks/sandbox" })
      expect(live.body.merchantId).toMatch(/^m_live_/)
      expect(live.body.webhookSecret).toMatch(/^whsk_live_/)

      const testLogin = yield* login(email, OWNER_PASSWORD, "test")
      const test = yield* call("GET", "/api/v1/dashboard/provider", { token: testLogin.body.accessToken })
      expectStatus(test, 200)
      expect(test.body.mode).toBe("test")
      expect(test.body.merchantId).toMatch(/^m_test_/)
      expect(test.body.webhookSecret).toMatch(/^whsk_test_/)
      expect(test.body.merchantId).not.toBe(live.body.merchantId)
      expect(test.body.webhookSecret).not.toBe(live.body.webhookSecret)
      // Stable across calls.
      expect((yield* call("GET", "/api/v1/dashboard/provider", { token: ownerToken })).body).toEqual(live.body)

      const admin = yield* inviteAndLogin(ownerToken, "Admin", `p${Date.now()}`)
      const asAdmin = yield* call("GET", "/api/v1/dashboard/provider", { token: admin.token })
      expectStatus(asAdmin, 200)
      expect(asAdmin.body.merchantId).toBe(live.body.merchantId)

      const member = yield* inviteAndLogin(ownerToken, "Member", `p${Date.now()}`)
      expectProblem(yield* call("GET", "/api/v1/dashboard/provider", { token: member.token }), 403, "insufficient_role")
    }))

  it.effect("a Member is 403 insufficient_role where Owner/Admin is needed, but may read me", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const member = yield* inviteAndLogin(ownerToken, "Member", `m${Date.now()}`)
      const me = yield* call("GET", "/api/v1/dashboard/me", { token: member.token })
      expectStatus(me, 200)
      expect(me.body.user.role).toBe("Member")

      expectProblem(yield* call("POST", "/api/v1/dashboard/api-keys", { token: member.token, json: { mode: "test" } }), 403, "insufficient_role")
      expectProblem(yield* call("GET", "/api/v1/dashboard/api-keys", { token: member.token }), 403, "insufficient_role")
      expectProblem(
        yield* call("POST", "/api/v1/dashboard/users", { token: member.token, json: { email: `x${Date.now()}@example.ng`, password: "long enough password", role: "Member" } }),
        403,
        "insufficient_role"
      )

      // Inviting an e-mail already in use is 409 email_taken.
      expectProblem(
        yield* call("POST", "/api/v1/dashboard/users", { token: ownerToken, json: { email: member.email, password: "long enough password", role: "Member" } }),
        409,
        "email_taken"
      )
      // An Admin may create keys.
      const admin = yield* inviteAndLogin(ownerToken, "Admin", `a${Date.now()}`)
      expectStatus(yield* call("POST", "/api/v1/dashboard/api-keys", { token: admin.token, json: { mode: "test" } }), 201)
    }))

  it.effect("an API-key token on a dashboard endpoint is 403 wrong_plane", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      expectProblem(yield* call("GET", "/api/v1/dashboard/me", { token }), 403, "wrong_plane")
      expectProblem(yield* call("GET", "/api/v1/dashboard/api-keys", { token }), 403, "wrong_plane")
      expectProblem(yield* call("POST", "/api/v1/dashboard/api-keys", { token, json: { mode: "test" } }), 403, "wrong_plane")
      expectProblem(yield* call("GET", "/api/v1/dashboard/provider", { token }), 403, "wrong_plane")
    }))

  it.effect("revoking a key makes a token minted before the revocation 401 token_revoked at once", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const key = yield* apiToken(ownerToken, "test")
      const other = yield* apiToken(ownerToken, "test")
      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token: key.token }), 200)

      expectStatus(yield* call("DELETE", `/api/v1/dashboard/api-keys/${key.keyId}`, { token: ownerToken }), 204)
      expectProblem(yield* call("GET", "/api/v1/virtual-accounts", { token: key.token }), 401, "token_revoked")
      // The secret cannot mint new tokens either, and the listing shows the revocation.
      expectProblem(
        yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.clientId, clientSecret: key.clientSecret } }),
        401,
        "invalid_client"
      )
      const keys = yield* call("GET", "/api/v1/dashboard/api-keys", { token: ownerToken })
      const listed = keys.body.data.find((k: { id: string }) => k.id === key.keyId)
      expect(listed.revokedAt).toEqual(expect.any(String))
      expect(JSON.stringify(keys.body)).not.toContain(key.clientSecret)
      // Other keys of the tenant keep working.
      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token: other.token }), 200)
      // Unknown key id: 404; another tenant's key id: 404 too, and that key keeps working.
      expectProblem(yield* call("DELETE", "/api/v1/dashboard/api-keys/key_nope", { token: ownerToken }), 404, "api_key_not_found")
      const stranger = yield* signup()
      expectProblem(yield* call("DELETE", `/api/v1/dashboard/api-keys/${other.keyId}`, { token: stranger.ownerToken }), 404, "api_key_not_found")
      expectStatus(yield* call("GET", "/api/v1/virtual-accounts", { token: other.token }), 200)
    }))

  it.effect("token exchange: a wrong secret or unknown client is 401 invalid_client; the answer is a Bearer token of 3600 s", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const key = yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: "test" } })
      expectStatus(key, 201)
      expect(key.body.clientSecret).toMatch(/^sk_test_/)
      expectProblem(
        yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: "sk_test_wrong" } }),
        401,
        "invalid_client"
      )
      expectProblem(yield* call("POST", "/api/v1/auth/token", { json: { clientId: "ck_test_nope", clientSecret: "x" } }), 401, "invalid_client")
      const ok = yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })
      expectStatus(ok, 200)
      expect(ok.body).toEqual({ accessToken: expect.any(String), tokenType: "Bearer", expiresIn: 3600 })
    }))

  it.effect("live mode needs approved onboarding: live key and dashboard provisioning 403 before, working after", () =>
    Effect.gen(function* () {
      const { tenantId, ownerToken } = yield* signup()
      expectProblem(yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: "live" } }), 403, "onboarding_not_approved")
      expectProblem(
        yield* call("POST", "/api/v1/virtual-accounts", { token: ownerToken, json: { accountRef: "dash-1", name: "Chioma Okafor" } }),
        403,
        "onboarding_not_approved"
      )
      // Submitting onboarding is not approval.
      const submitted = yield* call("POST", "/api/v1/dashboard/onboarding", { token: ownerToken, json: { legalName: "Biz Ltd", rcNumber: "RC123456" } })
      expectStatus(submitted, 200)
      expect(submitted.body.onboardingStatus).toBe("Submitted")
      expectProblem(yield* call("POST", "/api/v1/dashboard/api-keys", { token: ownerToken, json: { mode: "live" } }), 403, "onboarding_not_approved")
      // Nothing was provisioned by the refused attempt.
      expect((yield* call("GET", "/api/v1/virtual-accounts", { token: ownerToken })).body.data).toEqual([])

      yield* approve(tenantId)
      const me = yield* call("GET", "/api/v1/dashboard/me", { token: ownerToken })
      expect(me.body.tenant.onboardingStatus).toBe("Approved")

      const live = yield* apiToken(ownerToken, "live")
      expect(live.clientSecret).toMatch(/^sk_live_/)
      const byKey = yield* call("POST", "/api/v1/virtual-accounts", { token: live.token, json: { accountRef: "live-1", name: "Musa Ibrahim" } })
      expectStatus(byKey, 201)
      expect(byKey.body.mode).toBe("live")
      expect(isValidNuban(byKey.body.nuban, byKey.body.bankCode)).toBe(true)

      const byDashboard = yield* call("POST", "/api/v1/virtual-accounts", { token: ownerToken, json: { accountRef: "dash-1", name: "Chioma Okafor" } })
      expectStatus(byDashboard, 201)
      expect(byDashboard.body.mode).toBe("live")
      // The live dashboard and the live key see the same live accounts.
      const listed = yield* call("GET", "/api/v1/virtual-accounts", { token: live.token })
      expect(listed.body.data.map((a: { accountRef: string }) => a.accountRef).sort()).toEqual(["dash-1", "live-1"])
    }))

  it.effect("dashboard provisioning is live even from a test-mode dashboard token", () =>
    Effect.gen(function* () {
      const { email } = yield* signup()
      const test = yield* login(email, OWNER_PASSWORD, "test")
      expectProblem(
        yield* call("POST", "/api/v1/virtual-accounts", { token: test.body.accessToken, json: { accountRef: "dash-t", name: "Ada Obi" } }),
        403,
        "onboarding_not_approved"
      )
    }))
})
