import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { NIGERIAN_BANKS, SANDBOX_BANK } from "../../src/domain/Banks.js"
import { expectProblem, expectStatus, inviteAndLogin, login } from "../support/ApiHelpers.js"
import { call, makeTestApp, TEST_MONEY_OUT } from "../support/TestApp.js"
import { assertLedgerInvariant, DIRECTORY, fund, type MoneyTenant, testTenant } from "./support.js"

// Who may call the money-out endpoints (planes, roles, tenants, modes), the bank list with its cache and fallback, the
// provider's timeouts, and the bodies the endpoints refuse.

/** A dashboard user of the role, signed in to test mode (inviteAndLogin signs in to live mode). */
const testModeUser = (t: MoneyTenant, role: "Admin" | "Member") =>
  Effect.gen(function* () {
    const invited = yield* inviteAndLogin(t.ownerToken, role, crypto.randomBytes(4).toString("hex"))
    const session = yield* login(invited.email, invited.password, "test")
    expectStatus(session, 200)
    return session.body.accessToken as string
  })

const payoutBody = (merchantTxRef: string, amountKobo = 1_000) => ({
  merchantTxRef, amountKobo, accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: DIRECTORY.bolanle.bankCode
})
const lookupBody = { accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: DIRECTORY.bolanle.bankCode }

const banksOf = (token: string) =>
  Effect.map(call("GET", "/api/v1/transfers/banks", { token }), (r) => {
    expectStatus(r, 200)
    expect(r.body.hasMore).toBe(false)
    return r.body.data as ReadonlyArray<{ name: string; code: string }>
  })

const withoutFaults = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.ensuring(effect, Effect.flatMap(SandboxFaults, (f) => f.clear))

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("money out: access and banks", (it) => {
  it.effect("the bank list from the provider includes the sandbox bank; once fetched, the cache serves it while the provider fails", () =>
    withoutFaults(Effect.gen(function* () {
      const t = yield* testTenant
      const banks = yield* banksOf(t.token)
      expect(banks).toContainEqual({ name: "Collections Sandbox MFB", code: "51999" })
      expect(banks).toContainEqual({ name: "Zenith Bank", code: "057" })
      // Each bank once: the sandbox bank first, then the built-in institutions.
      expect(new Set(banks.map((b) => b.code)).size).toBe(banks.length)
      expect(banks[0]).toEqual(SANDBOX_BANK)
      expect(banks.length).toBe(NIGERIAN_BANKS.length)
      const faults = yield* SandboxFaults
      for (const mode of ["error", "timeout"] as const) {
        yield* faults.set("listBanks", mode)
        const started = Date.now()
        expect(yield* banksOf(t.token)).toEqual(banks)
        // Served from the cache: the provider is not even asked (no wait for its timeout).
        expect(Date.now() - started).toBeLessThan(TEST_MONEY_OUT.providerTimeoutMs)
      }
      // Name enquiry names the bank from the cached list too.
      expect((yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: lookupBody })).body).toMatchObject({ bankName: "Zenith Bank" })
    })))

  it.effect("name enquiry that times out is 502 provider_unavailable within the provider timeout; a 5xx at once; nothing is sent", () =>
    withoutFaults(Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "ab-ne", [100_000])
      const faults = yield* SandboxFaults
      yield* faults.set("nameEnquiry", "timeout")
      let started = Date.now()
      const lookup = yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: lookupBody })
      const took = Date.now() - started
      expectProblem(lookup, 502, "provider_unavailable")
      expect(took).toBeGreaterThanOrEqual(TEST_MONEY_OUT.providerTimeoutMs - 50)
      expect(took).toBeLessThan(TEST_MONEY_OUT.providerTimeoutMs + 1_500)
      started = Date.now()
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: payoutBody("ab-ne-1") }), 502, "provider_unavailable")
      expect(Date.now() - started).toBeLessThan(TEST_MONEY_OUT.providerTimeoutMs + 1_500)
      yield* faults.set("nameEnquiry", "error")
      started = Date.now()
      expectProblem(yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: lookupBody }), 502, "provider_unavailable")
      expect(Date.now() - started).toBeLessThan(TEST_MONEY_OUT.providerTimeoutMs)
      // No transfer was recorded, nothing was drawn, the same reference works once the provider answers.
      expectProblem(yield* call("GET", "/api/v1/transfers/ab-ne-1", { token: t.token }), 404, "transfer_not_found")
      expect((yield* call("GET", "/api/v1/balance", { token: t.token })).body).toMatchObject({ availableKobo: 100_000, inTransitKobo: 0 })
      yield* faults.clear
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: payoutBody("ab-ne-1") }), 201)
      yield* assertLedgerInvariant
    })))

  it.effect("payout create, lookup, hold, release: API key and dashboard Owner/Admin; a Member is 403 insufficient_role; no token 401", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "ab-roles", [10_000, 10_000, 10_000, 10_000])
      const admin = yield* testModeUser(t, "Admin")
      const member = yield* testModeUser(t, "Member")
      const writers = [["key", t.token, "api"], ["owner", t.testOwnerToken, "dashboard"], ["admin", admin, "dashboard"]] as const
      for (const [i, [who, token, source]] of writers.entries()) {
        const created = yield* call("POST", "/api/v1/transfers/bank", { token, json: payoutBody(`ab-${who}`) })
        expectStatus(created, 201)
        expect(created.body).toMatchObject({ merchantTxRef: `ab-${who}`, source, mode: "test" })
        expectStatus(yield* call("POST", "/api/v1/transfers/bank/lookup", { token, json: lookupBody }), 200)
        const ref = references[i]!
        expect((yield* call("POST", `/api/v1/settlements/${ref}/hold`, { token, json: { amountKobo: 500 } })).body).toMatchObject({ status: "Held", heldKobo: 500 })
        expect((yield* call("POST", `/api/v1/settlements/${ref}/release`, { token })).body).toMatchObject({ status: "Released" })
      }
      const ref = references[3]!
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: member, json: payoutBody("ab-member") }), 403, "insufficient_role")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank/lookup", { token: member, json: lookupBody }), 403, "insufficient_role")
      expectProblem(yield* call("POST", `/api/v1/settlements/${ref}/hold`, { token: member }), 403, "insufficient_role")
      expectProblem(yield* call("POST", `/api/v1/settlements/${ref}/release`, { token: member }), 403, "insufficient_role")
      expectProblem(yield* call("POST", `/api/v1/transactions/${ref}/refund`, { token: member }), 403, "insufficient_role")
      // The Member's refusals changed nothing.
      expectProblem(yield* call("GET", "/api/v1/transfers/ab-member", { token: t.token }), 404, "transfer_not_found")
      expectProblem(yield* call("POST", `/api/v1/settlements/${ref}/release`, { token: t.token }), 404, "hold_not_found")
      for (const [method, path] of [
        ["POST", "/api/v1/transfers/bank"], ["POST", "/api/v1/transfers/bank/lookup"], ["POST", `/api/v1/settlements/${ref}/hold`],
        ["POST", `/api/v1/settlements/${ref}/release`], ["POST", `/api/v1/transactions/${ref}/refund`], ["GET", "/api/v1/transfers"],
        ["GET", "/api/v1/transfers/ab-key"], ["GET", "/api/v1/transfers/banks"], ["GET", "/api/v1/balance"]
      ] as const) {
        const r = yield* call(method, path, method === "POST" ? { json: {} } : {})
        expect(r.status, `${method} ${path}`).toBe(401)
      }
      yield* assertLedgerInvariant
    }))

  it.effect("reads (list, get, banks, balance) answer any role of the tenant's dashboard and its API key", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "ab-reads", [50_000])
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: payoutBody("ab-read-1", 2_000) }), 201)
      const admin = yield* testModeUser(t, "Admin")
      const member = yield* testModeUser(t, "Member")
      for (const token of [t.token, t.testOwnerToken, admin, member]) {
        const list = yield* call("GET", "/api/v1/transfers", { token })
        expectStatus(list, 200)
        expect(list.body.data.map((x: any) => x.merchantTxRef)).toEqual(["ab-read-1"])
        const one = yield* call("GET", "/api/v1/transfers/ab-read-1", { token })
        expectStatus(one, 200)
        expect(one.body).toMatchObject({ merchantTxRef: "ab-read-1", amountKobo: 2_000, source: "api" })
        expect(yield* banksOf(token)).toContainEqual(SANDBOX_BANK)
        const balance = yield* call("GET", "/api/v1/balance", { token })
        expectStatus(balance, 200)
        expect(balance.body).toMatchObject({ availableKobo: 48_000, mode: "test", paidOutTodayKobo: 2_000 })
      }
    }))

  it.effect("tenants and modes are apart: another tenant's transfer and deposit are 404; a live token sees no test transfers", () =>
    Effect.gen(function* () {
      const a = yield* testTenant
      const b = yield* testTenant
      const { references: [deposit] } = yield* fund(a, "ab-iso", [20_000], { expected: 10_000 })
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: a.token, json: payoutBody("ab-iso-1", 3_000) }), 201)
      for (const token of [b.token, b.testOwnerToken]) {
        expectProblem(yield* call("GET", "/api/v1/transfers/ab-iso-1", { token }), 404, "transfer_not_found")
        expect((yield* call("GET", "/api/v1/transfers", { token })).body.data).toEqual([])
        expect((yield* call("GET", "/api/v1/balance", { token })).body).toMatchObject({ availableKobo: 0, paidOutTodayKobo: 0, inTransitKobo: 0 })
        expectProblem(yield* call("POST", `/api/v1/settlements/${deposit}/hold`, { token }), 404, "transaction_not_found")
        expectProblem(yield* call("POST", `/api/v1/settlements/${deposit}/release`, { token }), 404, "transaction_not_found")
      }
      expectProblem(yield* call("POST", `/api/v1/transactions/${deposit}/refund`, { token: b.testOwnerToken }), 404, "transaction_not_found")
      // The same merchantTxRef in another tenant is another transfer.
      yield* fund(b, "ab-iso-b", [5_000])
      const other = yield* call("POST", "/api/v1/transfers/bank", { token: b.token, json: payoutBody("ab-iso-1", 1_000) })
      expectStatus(other, 201)
      expect(other.body.amountKobo).toBe(1_000)

      // Tenant A's live mode (its Owner's live dashboard token) sees nothing of test mode.
      const live = a.ownerToken
      expectProblem(yield* call("GET", "/api/v1/transfers/ab-iso-1", { token: live }), 404, "transfer_not_found")
      expect((yield* call("GET", "/api/v1/transfers", { token: live })).body.data).toEqual([])
      expect((yield* call("GET", "/api/v1/balance", { token: live })).body).toMatchObject({ mode: "live", availableKobo: 0, paidOutTodayKobo: 0 })
      expectProblem(yield* call("POST", `/api/v1/settlements/${deposit}/hold`, { token: live }), 404, "transaction_not_found")
      expectProblem(yield* call("POST", `/api/v1/transactions/${deposit}/refund`, { token: live }), 404, "transaction_not_found")
      // Nothing of that touched A's test money.
      expect((yield* call("GET", "/api/v1/balance", { token: a.token })).body).toMatchObject({ availableKobo: 17_000, heldKobo: 0 })
      const sql = yield* SqlClient.SqlClient
      const holds = yield* sql`SELECT 1 FROM holds WHERE reference = ${deposit!}`
      expect(holds).toHaveLength(0)
      yield* assertLedgerInvariant
    }))

  it.effect("bodies: an unknown field is 400 unknown_field; a float or string amountKobo is 400 validation_failed naming integer kobo", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references: [deposit] } = yield* fund(t, "ab-bodies", [20_000], { expected: 10_000 })
      const unknown: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
        ["/api/v1/transfers/bank", t.token, { ...payoutBody("ab-u1"), amount: 5 }],
        ["/api/v1/transfers/bank/lookup", t.token, { ...lookupBody, name: "x" }],
        [`/api/v1/settlements/${deposit}/hold`, t.token, { amountKobo: 100, reasn: "typo" }],
        [`/api/v1/transactions/${deposit}/refund`, t.testOwnerToken, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011", acountName: "typo" }]
      ]
      for (const [path, token, json] of unknown) {
        const r = yield* call("POST", path, { token, json })
        expectProblem(r, 400, "unknown_field")
        expect(r.body.message, path).toMatch(/Unknown field/)
      }
      for (const amountKobo of [100.5, "1000", 0.01]) {
        const created = yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...payoutBody("ab-f1"), amountKobo } })
        expectProblem(created, 400, "validation_failed")
        expect(JSON.stringify(created.body), String(amountKobo)).toMatch(/integer kobo/)
        const held = yield* call("POST", `/api/v1/settlements/${deposit}/hold`, { token: t.token, json: { amountKobo } })
        expectProblem(held, 400, "validation_failed")
        expect(JSON.stringify(held.body), String(amountKobo)).toMatch(/integer kobo/)
      }
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...payoutBody("ab-f2"), amountKobo: 0 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...payoutBody("ab-f3"), amountKobo: -5 } }), 400, "validation_failed")
      // None of those did anything.
      expect((yield* call("GET", "/api/v1/transfers", { token: t.token })).body.data).toEqual([])
      expect((yield* call("GET", "/api/v1/balance", { token: t.token })).body).toMatchObject({ availableKobo: 20_000, heldKobo: 0 })
      expect(yield* assertLedgerInvariant).toBeGreaterThan(0)
    }))
})

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("money out: the bank list when the provider fails from the start", (it) => {
  it.effect("the built-in Nigerian list (without the sandbox bank) until the provider answers; then its list, cached", () =>
    withoutFaults(Effect.gen(function* () {
      const faults = yield* SandboxFaults
      // Before anything asked for the list in this fresh app.
      yield* faults.set("listBanks", "error")
      const t = yield* testTenant
      const builtIn = yield* banksOf(t.token)
      expect(builtIn).toEqual(NIGERIAN_BANKS.filter((b) => b.code !== "51999").map((b) => ({ name: b.name, code: b.code })))
      expect(builtIn.length).toBeGreaterThan(20)
      expect(builtIn.map((b) => b.code)).not.toContain("51999")
      expect(builtIn).toContainEqual({ name: "Guaranty Trust Bank", code: "058" })
      // The fallback is not cached: the provider is asked again.
      expect(yield* banksOf(t.token)).toEqual(builtIn)
      yield* faults.set("listBanks", "timeout")
      const started = Date.now()
      expect(yield* banksOf(t.token)).toEqual(builtIn)
      expect(Date.now() - started).toBeLessThan(TEST_MONEY_OUT.providerTimeoutMs + 1_500)
      // Name enquiry still names the bank (from the built-in list) while the provider's list is down.
      expect((yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: lookupBody })).body).toMatchObject({ bankName: "Zenith Bank" })
      yield* faults.clear
      const live = yield* banksOf(t.token)
      expect(live).toContainEqual(SANDBOX_BANK)
      yield* faults.set("listBanks", "error")
      expect(yield* banksOf(t.token)).toEqual(live)
    })))
})
