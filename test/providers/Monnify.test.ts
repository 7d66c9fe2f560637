import { SqlClient } from "@effect/sql"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, LogLevel, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { makeMonnifyAdapter } from "../../services/providers/MonnifyAdapter.js"
import { ProviderCircuits } from "../../services/providers/ProviderHttp.js"
import type { ProviderBank } from "../../services/providers/BankProvider.js"
import { Redacted } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, testTenant } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"
import { waitForTransfer } from "../transfers/support.js"
import { MONNIFY_FAKE_DIRECTORY, signMonnify, startMonnifyFake } from "../fakes/MonnifyFake.js"
import { api, appBaseUrl, capturedLogs, inboxWith, openAccount, resultOf, seen, transactionsWith, waitForTransaction } from "./support.js"

/**
 * What is Monnify's own (beside the conformance suite): the token under load and across its expiry, naira amounts in
 * every form converted exactly, a payment Monnify rejected recorded and never credited, OTP, D07 and a 200 FAILED
 * explained to the tenant, and the connection's own checks. No secret in any answer or log line.
 */
const monnify = await startMonnifyFake({ webhookRetryDelaysMs: [100], disbursementReportDelayMs: 50 })
afterAll(() => monnify.close())

const ADAEZE = MONNIFY_FAKE_DIRECTORY.find((d) => d.accountName === "ADAEZE OKAFOR")!
const newMerchant = (opts: { mfa?: boolean; tokenTtlSeconds?: number; walletBalanceKobo?: number } = {}) => {
  const m = {
    apiKey: `MK_TEST_${crypto.randomBytes(6).toString("hex").toUpperCase()}`, secretKey: crypto.randomBytes(16).toString("hex").toUpperCase(),
    contractCode: String(crypto.randomInt(1_000_000_000, 9_999_999_999)), walletAccountNumber: String(crypto.randomInt(1_000_000_000, 9_999_999_999))
  }
  monnify.addMerchant({ ...m, mfa: opts.mfa ?? false, walletBalanceKobo: opts.walletBalanceKobo ?? 1_000_000_000, ...(opts.tokenTtlSeconds ? { tokenTtlSeconds: opts.tokenTtlSeconds } : {}) })
  return m
}

layer(ProviderCircuits.Default, { timeout: 60_000, excludeTestServices: true })("the Monnify token", (it) => {
  const adapterFor = (m: ReturnType<typeof newMerchant>) =>
    Effect.flatMap(Ref.make<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>(undefined), (banks) =>
      makeMonnifyAdapter({
        apiKey: Redacted.make(m.apiKey), secretKey: Redacted.make(m.secretKey), contractCode: m.contractCode,
        walletAccountNumber: m.walletAccountNumber, preferredBanks: ["50515"]
      }, { baseUrl: monnify.url, timeoutMs: 5_000, bankListTtlMs: 0 }, banks))

  it.effect("50 concurrent calls across an expiry make one login, and every call succeeds", () =>
    Effect.gen(function* () {
      const m = newMerchant({ tokenTtlSeconds: 2 })
      const adapter = yield* adapterFor(m)
      const lookup = adapter.nameEnquiry(ADAEZE.accountNumber, ADAEZE.bankCode)
      expect((yield* lookup).accountName).toBe("ADAEZE OKAFOR")
      expect(monnify.logins(m.apiKey)).toBe(1)
      // Past the token's life (ours is kept until a tenth of it before the end): 50 calls at once.
      yield* Effect.sleep("2100 millis")
      const answers = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(lookup)), { concurrency: "unbounded" })
      expect(answers.filter(Either.isRight)).toHaveLength(50)
      expect(monnify.logins(m.apiKey)).toBe(2)
    }))

  it.effect("a token Monnify stops accepting early (401) is dropped, fetched again once for all 50 calls, and each call made once more", () =>
    Effect.gen(function* () {
      const m = newMerchant()
      const adapter = yield* adapterFor(m)
      const lookup = adapter.nameEnquiry(ADAEZE.accountNumber, ADAEZE.bankCode)
      yield* lookup
      const before = monnify.logins(m.apiKey)
      monnify.fault("account.validate", "expiredToken", 50)
      const answers = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(lookup)), { concurrency: "unbounded" })
      expect(answers.filter(Either.isRight)).toHaveLength(50)
      expect(monnify.logins(m.apiKey) - before).toBe(1)
      monnify.clearFaults()
    }))

  it.effect("a wrong client secret is a refused credential, not an outage", () =>
    Effect.gen(function* () {
      const m = newMerchant()
      const adapter = yield* adapterFor({ ...m, secretKey: "WRONG" })
      const r = yield* Effect.either(adapter.verifyCredentials())
      expect(Either.isLeft(r) && r.left._tag).toBe("CredentialsRejected")
    }))
})

layer(
  makeTestApp({
    config: { monnifyBaseUrl: Option.some(monnify.url), logLevel: LogLevel.All },
    moneyOut: { providerTimeoutMs: 1_000, leaseMs: 2_500, statusCheckAfterMs: 400 }
  }).pipe(Layer.provide(capturedLogs)),
  { timeout: 120_000, excludeTestServices: true }
)("Monnify through the public API", (it) => {
  const connected = (opts: Parameters<typeof newMerchant>[0] = {}) =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const m = newMerchant(opts)
      monnify.setWebhookUrl(m.apiKey, `${yield* appBaseUrl}/webhooks/monnify`)
      const r = yield* api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json: { provider: "monnify", ...m } })
      expectStatus(r, 200)
      return { ...t, m, view: r.body }
    })

  it.effect("connect: prefix, mode, missing fields and refused credentials; the view shows the contract, wallet and webhook URL, never a secret", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const m = newMerchant()
      const put = (json: unknown) => api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json })
      expectProblem(yield* put({ provider: "monnify", ...m, apiKey: "MK_PROD_ABC123" }), 400, "provider_mode_mismatch")
      expectProblem(yield* put({ provider: "monnify", ...m, apiKey: "sk_test_abc" }), 400, "provider_credentials_invalid")
      expectProblem(yield* put({ provider: "monnify", apiKey: m.apiKey }), 400, "validation_failed")
      expectProblem(yield* put({ provider: "monnify", ...m, secretKey: "WRONG" }), 400, "provider_credentials_invalid")
      monnify.fault("auth.login", "5xx", 5)
      expectProblem(yield* put({ provider: "monnify", ...m }), 502, "provider_unavailable")
      monnify.clearFaults()
      const ok = yield* put({ provider: "monnify", ...m, preferredBanks: ["50515"] })
      expectStatus(ok, 200)
      expect(ok.body).toMatchObject({
        provider: "monnify", keyHint: m.apiKey.slice(-4), contractCode: m.contractCode, walletAccountNumber: m.walletAccountNumber,
        preferredBanks: ["50515"], webhookUrl: `${yield* appBaseUrl}/webhooks/monnify`, signatureHeader: "monnify-signature"
      })
      expect(JSON.stringify(ok.body)).not.toContain(m.secretKey)
    }))

  it.effect("naira as numbers and decimal strings become exact kobo; the payer and the NIP session id are kept; a fraction of a kobo is refused", () =>
    Effect.gen(function* () {
      const t = yield* connected()
      const a = yield* openAccount(t.token, "mn-amounts")
      expect(a.bankName).toMatch(/Moniepoint/)
      const sessionId = `090405${"1".repeat(24)}`
      const d = yield* Effect.promise(() => monnify.credit({ accountNumber: a.nuban, amountNaira: 1500.5, payerName: "TUNDE BAKARE", sessionId }))
      expect(d.statuses).toEqual([200])
      expect(yield* waitForTransaction(t.token, d.reference)).toMatchObject({ amountKobo: 150_050, senderName: "TUNDE BAKARE" })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ payload: { providerSessionId?: string } }>`SELECT payload FROM inbound_events WHERE provider_reference = ${d.reference}`
      expect(row!.payload.providerSessionId).toBe(sessionId)
      const s = yield* Effect.promise(() => monnify.credit({ accountNumber: a.nuban, amountNaira: "2990.00" }))
      expect((yield* waitForTransaction(t.token, s.reference)).amountKobo).toBe(299_000)
      // Monnify never sends ₦10.005; if it did, no kobo would be invented or lost: refused and logged, never credited.
      // (The fake refuses to send it, so the test writes the notification and signs it with the client secret.)
      const base = yield* Effect.promise(() => monnify.credit({ accountNumber: a.nuban, amountNaira: 10, deliver: "never" }))
      const body = JSON.parse(base.body)
      body.eventData.transactionReference = body.eventData.paymentReference = `MNFY|99|${Date.now()}|000001`
      body.eventData.amountPaid = body.eventData.totalPayable = 10.005
      const raw = JSON.stringify(body)
      const r = yield* Effect.promise(() => monnify.sendRaw(t.m.apiKey, raw, signMonnify(t.m.secretKey, raw)))
      expect([r.status, resultOf(r.text)]).toEqual([200, "ignored"])
      expect(yield* inboxWith(t.tenantId, body.eventData.transactionReference)).toBe(0)
      expect(seen.some((l) => l.includes(body.eventData.transactionReference) && l.includes("finer than a kobo"))).toBe(true)
      yield* assertLedgerInvariant
    }))

  it.effect("a payment Monnify rejected is recorded as money that never arrived, never credited", () =>
    Effect.gen(function* () {
      const t = yield* connected()
      const a = yield* openAccount(t.token, "mn-rejected")
      const d = yield* Effect.promise(() => monnify.rejectPayment({ accountNumber: a.nuban, amountNaira: 400, reason: "RESTRICTED_PAYMENT_SOURCE" }))
      expect(d.statuses).toEqual([200])
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ amountKobo: number; reason: string }>`SELECT amount_kobo, reason FROM rejected_payments WHERE tenant_id = ${t.tenantId}`
      expect(rows).toEqual([{ amountKobo: 40_000, reason: "RESTRICTED_PAYMENT_SOURCE" }])
      expect(yield* inboxWith(t.tenantId, d.reference)).toBe(0)
      expect(yield* transactionsWith(t.tenantId, d.reference)).toBe(0)
      expect((yield* api("GET", "/api/v1/virtual-accounts/mn-rejected", { token: t.token })).body.amountPaidKobo).toBe(0)
      // Sent again: still one record.
      expect(yield* Effect.promise(() => monnify.redeliver(d))).toBe(200)
      expect(yield* sql`SELECT 1 FROM rejected_payments WHERE tenant_id = ${t.tenantId}`).toHaveLength(1)
    }))

  it.effect("transfers: OTP on fails with what to do; D07 and a 200 FAILED (wallet short) are explained; the money comes back each time", () =>
    Effect.gen(function* () {
      const t = yield* connected({ mfa: true, walletBalanceKobo: 50_000 })
      const a = yield* openAccount(t.token, "mn-transfers")
      const d = yield* Effect.promise(() => monnify.credit({ accountNumber: a.nuban, amountNaira: 10_000 }))
      yield* waitForTransaction(t.token, d.reference)
      const pay = (ref: string, amountKobo: number) =>
        api("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: ref, amountKobo, accountNumber: ADAEZE.accountNumber, bankCode: ADAEZE.bankCode } })
      const otp = yield* pay("mn-otp", 10_000)
      expect(otp.body.status).toBe("Failed")
      expect(otp.body.failureReason).toMatch(/OTP/)
      monnify.setMfa(t.m.apiKey, false)
      // The wallet holds ₦500: ₦600 is refused in a 200 FAILED.
      const short = yield* pay("mn-short", 60_000)
      expect(short.body.status).toBe("Failed")
      expect(short.body.failureReason).toMatch(/sufficient balance/)
      expectStatus(yield* pay("mn-first", 20_000), 201)
      // Same amount to the same account within 2 minutes, another reference: D07.
      const d07 = yield* pay("mn-d07", 20_000)
      expect(d07.body.status).toBe("Failed")
      expect(d07.body.failureReason).toMatch(/D07.*2 minutes/)
      expect((yield* waitForTransfer(t.token, "mn-first")).status).toBe("Successful")
      expect((yield* api("GET", "/api/v1/balance", { token: t.token })).body.availableKobo).toBe(1_000_000 - 20_000)
      yield* assertLedgerInvariant
      const text = seen.join("\n")
      expect(text.includes(t.m.secretKey)).toBe(false)
      expect(text.includes(t.m.apiKey)).toBe(false)
    }))
})
