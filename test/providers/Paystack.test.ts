import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, LogLevel, Option, Redacted } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { runCli } from "../support/Processes.js"
import { shown } from "../support/CliRuns.js"
import { TestDatabaseUrl } from "../support/TestDatabase.js"
import { ProviderSync } from "../../services/providers/ProviderSync.js"
import { MoneyOutHooks } from "../../services/transfers/MoneyOutHooks.js"
import { Payouts } from "../../services/transfers/Payouts.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, testTenant } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"
import { waitForTransfer } from "../transfers/support.js"
import { PAYSTACK_FAKE_DIRECTORY, signPaystack, startPaystackFake } from "../fakes/PaystackFake.js"
import {
  api, appBaseUrl, capturedLogs, inboxWith, newSecretKey, openAccount, paystackTenant, resultOf, seen, transactionsWith, waitForTransaction
} from "./support.js"

/**
 * The Paystack adapter against the faithful fake (test/fakes/PaystackFake.ts), through the public API: connect,
 * provision (also under provider faults), signed credits (twice, late, forged, another tenant's key), payouts paid once
 * across a crash, failed and reversed payouts, a refund, and the missed-webhook sync. Both storage modes: JetStream
 * and the in-process bus. The ledger invariant after every scenario; at the end, no secret key in any answer or log.
 */
const fake = await startPaystackFake({ webhookRetryDelaysMs: [100, 200, 400], transferReportDelayMs: 50 })
afterAll(() => fake.close())

const directory = (name: string) => PAYSTACK_FAKE_DIRECTORY.find((d) => d.accountName === name)!
const ADAEZE = directory("ADAEZE OKAFOR")
const FAIL = directory("FAIL TRANSFER")
const REVERSE = directory("REVERSE TRANSFER")

const appFor = (natsUrl: Option.Option<string>) =>
  makeTestApp({
    config: { paystackBaseUrl: fake.url, logLevel: LogLevel.All, ...(Option.isNone(natsUrl) ? { natsUrl } : {}) },
    // Fake calls are local: a second is ample; the lease stays above twice the timeout.
    moneyOut: { providerTimeoutMs: 1_000, leaseMs: 2_500, statusCheckAfterMs: 400 }
  }).pipe(Layer.provide(capturedLogs))

const dvasOf = (secretKey: string) => fake.dedicatedAccounts(secretKey)
const transfersAtFake = (secretKey: string) => fake.transfers(secretKey)

/** A tenant connected to Paystack with one account funded by a signed credit of `amountKobo` (reconciled). */
const fundedTenant = (ref: string, amountKobo: number, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const t = yield* paystackTenant(fake)
    const account = yield* openAccount(t.token, ref, extra)
    const d = yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo, senderName: "ADAEZE OKAFOR" }))
    yield* waitForTransaction(t.token, d.reference)
    return { t, account, reference: d.reference }
  })

for (const [storage, natsUrl] of [["JetStream", Option.some(process.env.TEST_NATS_URL ?? "127.0.0.1:4222")], ["in-process bus", Option.none<string>()]] as const) {
  layer(appFor(natsUrl), { timeout: 120_000, excludeTestServices: true })(`Paystack through the public API (${storage})`, (it) => {
    it.effect("connect: the key is proved before it is saved; wrong prefix, wrong mode, refused and unreachable keys change nothing", () =>
      Effect.gen(function* () {
        const t = yield* testTenant
        const put = (json: unknown) => api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json })
        expectProblem(yield* put({ provider: "paystack", secretKey: "pk_test_abcdef" }), 400, "provider_credentials_invalid")
        expectProblem(yield* put({ provider: "paystack", secretKey: newSecretKey("live") }), 400, "provider_mode_mismatch")
        expectProblem(yield* put({ provider: "paystack", secretKey: newSecretKey("test") }), 400, "provider_credentials_invalid") // unknown at Paystack: 401
        expectProblem(yield* put({ provider: "paystack" }), 400, "validation_failed")
        const secretKey = newSecretKey("test")
        fake.addIntegration({ secretKey })
        fake.fault("bank.list", "5xx", 3)
        expectProblem(yield* put({ provider: "paystack", secretKey }), 502, "provider_unavailable")
        fake.clearFaults()
        const before = yield* api("GET", "/api/v1/dashboard/provider", { token: t.testOwnerToken })
        expect(before.body.provider).toBe("sandbox")

        const ok = yield* put({ provider: "PayStack", secretKey })
        expectStatus(ok, 200)
        expect(ok.body).toMatchObject({ provider: "paystack", mode: "test", keyHint: secretKey.slice(-4), preferredBank: "test-bank" })
        expect(ok.body.webhookUrl).toBe(`${yield* appBaseUrl}/webhooks/paystack`)
        expect(JSON.stringify(ok.body)).not.toContain(secretKey)
        const after = yield* api("GET", "/api/v1/dashboard/provider", { token: t.testOwnerToken })
        expect(after.body).toEqual(ok.body)
        // The key at rest is sealed: the row does not hold it in clear.
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ sealed: string }>`SELECT credentials_sealed AS sealed FROM provider_connections WHERE tenant_id = ${t.tenantId}`
        expect(row!.sealed).not.toContain(secretKey.slice(8))
        // A Member may not see or change it.
        const member = yield* api("PUT", "/api/v1/dashboard/provider", { token: t.token, json: { provider: "sandbox" } })
        expect(member.status).toBe(403)
      }))

    it.effect("moving a mode that has accounts at its provider is 409 provider_in_use", () =>
      Effect.gen(function* () {
        const t = yield* testTenant
        const sandboxAccount = yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "sbx-1", name: "Tunde Bakare" } })
        expectStatus(sandboxAccount, 201)
        const secretKey = newSecretKey("test")
        fake.addIntegration({ secretKey })
        expectProblem(yield* api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json: { provider: "paystack", secretKey } }), 409, "provider_in_use")
        const p = yield* paystackTenant(fake)
        yield* openAccount(p.token, "ps-inuse")
        expectProblem(yield* api("PUT", "/api/v1/dashboard/provider", { token: p.testOwnerToken, json: { provider: "sandbox" } }), 409, "provider_in_use")
      }))

    it.effect("provision: a customer, then one dedicated account at the preferred bank; the same accountRef again is the same account", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const account = yield* openAccount(t.token, "ps-prov-1", { email: "rhoda@example.ng", phone: "+2349053267565" })
        const dvas = dvasOf(t.secretKey)
        expect(dvas).toHaveLength(1)
        expect(dvas[0]).toMatchObject({ accountNumber: account.nuban, email: "rhoda@example.ng", bankSlug: "test-bank" })
        expect(account).toMatchObject({ bankName: "Test Bank", bankCode: "001" })
        expect(account.accountName).toMatch(/adaeze okafor/i)
        const again = yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "ps-prov-1", name: "Adaeze Okafor", email: "rhoda@example.ng", phone: "+2349053267565" } })
        expectStatus(again, 200)
        expect(again.body.nuban).toBe(account.nuban)
        // A second account of the same customer gets a provider customer of its own (a placeholder e-mail).
        const second = yield* openAccount(t.token, "ps-prov-2", { email: "rhoda@example.ng" })
        expect(second.nuban).not.toBe(account.nuban)
        expect(dvasOf(t.secretKey).map((d) => d.email)).toEqual(["rhoda@example.ng", expect.stringMatching(/@customers\.collections\.invalid$/)])
        expect(fake.calls("dedicated_account.create").filter((c) => c.secretKey === t.secretKey)).toHaveLength(2)
      }))

    it.effect("provisioning under faults: 5xx, a timeout after Paystack made the account, a 5xx after it, 429s: one account there, one here", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const create = (ref: string) => api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: ref, name: `Customer ${ref}` } })
        const sql = yield* SqlClient.SqlClient
        const ours = (ref: string) => sql<{ nuban: string | null }>`SELECT nuban FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = ${ref}`

        // 5xx before anything was made: 502, then the retry makes it.
        fake.fault("dedicated_account.create", "5xx", 1)
        expectProblem(yield* create("f-5xx"), 502, "provider_unavailable")
        expectStatus(yield* create("f-5xx"), 201)

        // Paystack made it and the answer never came (our timeout), or came as a 5xx: found at once, never made twice.
        for (const fault of ["acceptThenHang", "acceptThen5xx"] as const) {
          fake.fault("dedicated_account.create", fault, 1)
          const r = yield* create(`f-${fault}`)
          expectStatus(r, 201)
          expect((yield* create(`f-${fault}`)).body.nuban).toBe(r.body.nuban)
        }

        // The customer lookup fails twice (idempotent: retried), then two 429s on the account (backed off).
        fake.fault("customer.fetch", "5xx", 2)
        fake.fault("dedicated_account.create", "429", 2)
        expectStatus(yield* create("f-429"), 201)

        // Every customer: exactly one account at Paystack, and it is ours.
        const dvas = dvasOf(t.secretKey)
        expect(dvas).toHaveLength(4)
        for (const ref of ["f-5xx", "f-acceptThenHang", "f-acceptThen5xx", "f-429"]) {
          const rows = yield* ours(ref)
          expect(rows, ref).toHaveLength(1)
          expect(dvas.filter((d) => d.accountNumber === rows[0]!.nuban), ref).toHaveLength(1)
        }
      }))

    it.effect("a signed credit is reconciled once: delivered twice, and again late, it is a duplicate", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const account = yield* openAccount(t.token, "ps-credit", { expectedAmountKobo: 150_000 })
        const d = yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo: 150_000, senderName: "RANDALL AKANBI HORTON", deliver: "twice" }))
        expect(d.statuses).toEqual([200, 200])
        const tx = yield* waitForTransaction(t.token, d.reference)
        expect(tx).toMatchObject({ reference: d.reference, accountRef: "ps-credit", amountKobo: 150_000, reconciliationStatus: "Exact", senderName: "RANDALL AKANBI HORTON" })
        // Late: after it was reconciled, Paystack's retry brings the same bytes.
        const late = yield* Effect.promise(() => fake.sendRaw(t.secretKey, d.body, d.signature))
        expect(late.status).toBe(200)
        expect(resultOf(late.text)).toBe("duplicate")
        expect(yield* transactionsWith(t.tenantId, d.reference)).toBe(1)
        const va = yield* api("GET", `/api/v1/virtual-accounts/ps-credit`, { token: t.token })
        expect(va.body).toMatchObject({ amountPaidKobo: 150_000, paymentState: "FullyPaid" })
        yield* assertLedgerInvariant
      }))

    it.effect("a forged credit is 401 and records nothing; another tenant's key naming this tenant's NUBAN is 401", () =>
      Effect.gen(function* () {
        const a = yield* paystackTenant(fake)
        const b = yield* paystackTenant(fake)
        const bAccount = yield* openAccount(b.token, "ps-victim")
        const forged = yield* Effect.promise(() => fake.credit({ accountNumber: bAccount.nuban, amountKobo: 5_000_000, signWith: newSecretKey("test") }))
        expect(forged.statuses.every((s) => s === 401), JSON.stringify(forged.statuses)).toBe(true)
        expect(yield* inboxWith(null, forged.reference)).toBe(0)
        // Tenant A signs, with its real key, a credit to B's NUBAN.
        const crossed = yield* Effect.promise(() => fake.credit({ accountNumber: bAccount.nuban, amountKobo: 5_000_000, signWith: a.secretKey }))
        expect(crossed.statuses[0]).toBe(401)
        expect(yield* inboxWith(null, crossed.reference)).toBe(0)
        // No signature at all, and a signature over other bytes.
        const body = crossed.body
        expect((yield* Effect.promise(() => fake.sendRaw(b.secretKey, body, ""))).status).toBe(401)
        expect((yield* Effect.promise(() => fake.sendRaw(b.secretKey, body.replace("5000000", "5000001"), signPaystack(b.secretKey, body)))).status).toBe(401)
        expect(yield* transactionsWith(b.tenantId, crossed.reference)).toBe(0)
        // Events we do not take are answered 200 ignored once signed, 401 when not.
        const other = JSON.stringify({ event: "customeridentification.success", data: { customer_code: "CUS_x", domain: "test" } })
        const ignored = yield* Effect.promise(() => fake.sendRaw(b.secretKey, other))
        expect([ignored.status, resultOf(ignored.text)]).toEqual([200, "ignored"])
        expect((yield* Effect.promise(() => fake.sendRaw(b.secretKey, other, signPaystack(newSecretKey("test"), other)))).status).toBe(401)
        yield* assertLedgerInvariant
      }))

    it.effect("a credit to a NUBAN we never issued, signed by the tenant's key, is recorded as unmatched", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const account = yield* openAccount(t.token, "ps-unmatched")
        // Paystack credits a DVA of the integration that we have no account for (made outside this service).
        const body = JSON.parse(((yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo: 1_000, deliver: "never" }))).body))
        body.data.reference = `unk${Date.now()}`
        body.data.authorization.receiver_bank_account_number = "0000014579"
        const raw = JSON.stringify(body)
        const r = yield* Effect.promise(() => fake.sendRaw(t.secretKey, raw))
        expect([r.status, resultOf(r.text)]).toEqual([200, "unmatched"])
        expect(yield* inboxWith(t.tenantId, body.data.reference)).toBe(1)
      }))

    it.effect("payouts: paid once across a crash between the provider call and our commit, and after a lost answer", () =>
      Effect.gen(function* () {
        const { t } = yield* fundedTenant("ps-payout-src", 1_000_000)
        const payouts = yield* Payouts
        const scope = { tenantId: t.tenantId, mode: "test" as const }
        const input = (ref: string) => ({ merchantTxRef: ref, amountKobo: 100_000, accountNumber: ADAEZE.accountNumber, bankCode: ADAEZE.bankCode, narration: "crash" })
        // The fiber dies right after Paystack accepted the transfer, before our finalising commit.
        const crashed = yield* payouts.create(scope, input("ps-crash-1"), "api", "test").pipe(
          Effect.provideService(MoneyOutHooks, { at: (step, ref) => (step === "afterProviderCall" && ref === "ps-crash-1" ? Effect.interrupt : Effect.void) }),
          Effect.exit
        )
        expect(crashed._tag).toBe("Failure")
        // Paystack accepted it and the answer was lost (our timeout).
        fake.fault("transfer.create", "acceptThenHang", 1)
        const lost = yield* api("POST", "/api/v1/transfers/bank", { token: t.token, json: input("ps-lost-1") })
        expect([200, 201, 502]).toContain(lost.status)
        for (const ref of ["ps-crash-1", "ps-lost-1"]) {
          expect((yield* waitForTransfer(t.token, ref)).status, ref).toBe("Successful")
          // A retry with the same request answers the same transfer.
          const again = yield* api("POST", "/api/v1/transfers/bank", { token: t.token, json: input(ref) })
          expectStatus(again, 200)
        }
        const atFake = transfersAtFake(t.secretKey)
        expect(atFake).toHaveLength(2)
        // Paystack was asked to pay once per reference: the completer asked for the status, it never sent again.
        for (const x of atFake) expect(fake.calls("transfer.create").filter((c) => (c.body as { reference?: string }).reference === x.reference)).toHaveLength(1)
        expect(atFake.every((x) => x.amountKobo === 100_000 && x.status === "success")).toBe(true)
        const balance = yield* api("GET", "/api/v1/balance", { token: t.token })
        expect(balance.body.availableKobo).toBe(1_000_000 - 200_000)
        yield* assertLedgerInvariant
      }))

    it.effect("a failed and a reversed payout give the money back; a transfer held for an OTP fails with the reason", () =>
      Effect.gen(function* () {
        const { t } = yield* fundedTenant("ps-outcomes", 1_000_000)
        const pay = (ref: string, to: { accountNumber: string; bankCode: string }) =>
          api("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: ref, amountKobo: 250_000, accountNumber: to.accountNumber, bankCode: to.bankCode } })
        expectStatus(yield* pay("ps-fail", FAIL), 201)
        expectStatus(yield* pay("ps-reverse", REVERSE), 201)
        expect((yield* waitForTransfer(t.token, "ps-fail")).status).toBe("Failed")
        expect((yield* waitForTransfer(t.token, "ps-reverse", ["Reversed"])).status).toBe("Reversed")
        expect((yield* api("GET", "/api/v1/balance", { token: t.token })).body.availableKobo).toBe(1_000_000)
        // OTP on at Paystack: the transfer fails at once with what to do, and nothing is sent again.
        fake.setTransferOtp(t.secretKey, true)
        const otp = yield* pay("ps-otp", ADAEZE)
        expect(otp.body.status).toBe("Failed")
        expect(otp.body.failureReason).toMatch(/turn off transfer OTP/)
        expect(fake.calls("transfer.create").filter((c) => (c.body as { reference?: string }).reference === transfersAtFake(t.secretKey).find((x) => x.status === "otp")?.reference)).toHaveLength(1)
        expect((yield* api("GET", "/api/v1/balance", { token: t.token })).body.availableKobo).toBe(1_000_000)
        yield* assertLedgerInvariant
      }))

    it.effect("a refund of an overpayment goes out through Paystack once", () =>
      Effect.gen(function* () {
        const { t, reference } = yield* fundedTenant("ps-refund", 150_000, { expectedAmountKobo: 100_000 })
        const body = { accountNumber: ADAEZE.accountNumber, bankCode: ADAEZE.bankCode }
        // Paystack masks the payer's account number (A3), so the destination is named (a dashboard Owner refunds).
        const refund = yield* api("POST", `/api/v1/transactions/${reference}/refund`, { token: t.testOwnerToken, json: body })
        expectStatus(refund, 200)
        expect(refund.body).toMatchObject({ status: "Sent", amountKobo: 50_000, destination: { accountNumber: ADAEZE.accountNumber, accountName: "ADAEZE OKAFOR" } })
        const again = yield* api("POST", `/api/v1/transactions/${reference}/refund`, { token: t.testOwnerToken, json: body })
        expect(again.body.status).toBe("AlreadySent")
        expect(transfersAtFake(t.secretKey).filter((x) => x.amountKobo === 50_000)).toHaveLength(1)
        expect((yield* waitForTransfer(t.token, refund.body.merchantTxRef)).status).toBe("Successful")
        yield* assertLedgerInvariant
      }))

    it.effect("name enquiry through Paystack: found, 404 bank_account_not_found (its 422), 400 invalid_bank_account (its 400)", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const lookup = (accountNumber: string, bankCode: string) => api("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber, bankCode } })
        const found = yield* lookup(ADAEZE.accountNumber, ADAEZE.bankCode)
        expectStatus(found, 200)
        expect(found.body).toMatchObject({ accountName: "ADAEZE OKAFOR", bankName: "Guaranty Trust Bank" })
        expectProblem(yield* lookup("0000014579", "011"), 404, "bank_account_not_found")
        expectProblem(yield* lookup("0000014579", "059"), 400, "invalid_bank_account")
        const banks = yield* api("GET", "/api/v1/transfers/banks", { token: t.token })
        expect(banks.body.data).toEqual(expect.arrayContaining([{ name: "Test Bank", code: "001" }, { name: "Wema Bank", code: "035" }]))
      }))

    it.effect("a credit the webhook never brought is recorded once by the sync, and not again by a second sync", () =>
      Effect.gen(function* () {
        const t = yield* paystackTenant(fake)
        const account = yield* openAccount(t.token, "ps-sync", { expectedAmountKobo: 70_000 })
        const missed = yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo: 70_000, deliver: "never" }))
        const seenByWebhook = yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo: 1_000 }))
        yield* waitForTransaction(t.token, seenByWebhook.reference)
        expect(yield* inboxWith(t.tenantId, missed.reference)).toBe(0)
        const sync = yield* ProviderSync
        const first = yield* sync.sync({ tenantId: t.tenantId, mode: "test" })
        expect(first).toEqual({ found: 2, recorded: 1, known: 1 })
        const tx = yield* waitForTransaction(t.token, missed.reference)
        expect(tx).toMatchObject({ amountKobo: 70_000, accountRef: "ps-sync" })
        const second = yield* sync.sync({ tenantId: t.tenantId, mode: "test" })
        expect(second).toEqual({ found: 2, recorded: 0, known: 2 })
        // The webhook arrives after all, late: a duplicate.
        const listed = yield* Effect.promise(() =>
          fetch(`${fake.url}/transaction/verify/${missed.reference}`, { headers: { authorization: `Bearer ${t.secretKey}` } }).then((r) => r.json() as Promise<{ data: unknown }>))
        const late = yield* Effect.promise(() => fake.sendRaw(t.secretKey, JSON.stringify({ event: "charge.success", data: listed.data })))
        expect(resultOf(late.text)).toBe("duplicate")
        expect(yield* transactionsWith(t.tenantId, missed.reference)).toBe(1)
        yield* assertLedgerInvariant
      }))

    if (storage === "JetStream") {
      it.effect("collections providers sync records a missed credit once and prints {found, recorded, known}", () =>
        Effect.gen(function* () {
          const t = yield* paystackTenant(fake)
          const account = yield* openAccount(t.token, "ps-cli-sync")
          const missed = yield* Effect.promise(() => fake.credit({ accountNumber: account.nuban, amountKobo: 42_000, deliver: "never" }))
          const config = yield* AppConfigTag
          const { url } = yield* TestDatabaseUrl
          const env = {
            DATABASE_URL: Redacted.value(url), PAYSTACK_BASE_URL: fake.url,
            DATA_ENCRYPTION_KEY: Redacted.value(Option.getOrThrow(config.dataEncryptionKey)), DATA_DIR: config.dataDir
          }
          const since = new Date(Date.now() - 3_600_000).toISOString()
          const first = yield* Effect.promise(() => runCli(["providers", "sync", t.tenantId, "--mode", "test", "--since", since], env))
          expect(first.code, shown(first)).toBe(0)
          expect(JSON.parse(first.stdout.trim())).toEqual({ found: 1, recorded: 1, known: 0 })
          expect(first.stdout.trim().split("\n")).toHaveLength(1)
          // The service's inbox sweeper publishes it; the reconciler records it.
          expect(yield* waitForTransaction(t.token, missed.reference)).toMatchObject({ amountKobo: 42_000, accountRef: "ps-cli-sync" })
          const second = yield* Effect.promise(() => runCli(["providers", "sync", t.tenantId, "--mode", "test"], env))
          expect(JSON.parse(second.stdout.trim()), shown(second)).toEqual({ found: 1, recorded: 0, known: 1 })
          const bad = yield* Effect.promise(() => runCli(["providers", "sync", t.tenantId, "--mode", "test", "--since", "yesterday"], env))
          expect(bad.code, shown(bad)).not.toBe(0)
          expect(bad.stderr).toMatch(/--since must be an ISO-8601/)
          expect(shown(first) + shown(second)).not.toContain(t.secretKey)
        }), 180_000) // spawns the CLI: a minute and more on a loaded CI machine
    }
  })
}

describe("no secret anywhere", () => {
  // Runs after both storage modes' scenarios (vitest runs a file's blocks in order): every answer they saw and every
  // log line the app wrote, errors and warnings of every fault included.
  layer(Layer.empty)("the run's answers and logs", (it) => {
    it.effect("hold no Paystack secret key", () =>
      Effect.sync(() => {
        const keys = [...new Set(fake.calls().flatMap((c) => (c.secretKey ? [c.secretKey] : [])))]
        expect(keys.length).toBeGreaterThan(5)
        expect(seen.length).toBeGreaterThan(100)
        const text = seen.join("\n")
        for (const key of keys) {
          expect(text.includes(key), `secret ${key.slice(0, 8)}… found`).toBe(false)
          expect(text.includes(key.slice(8)), `the secret part of ${key.slice(0, 8)}… found`).toBe(false)
        }
        // The logs did record the faults and the provider's failures (so the search looked at real error lines).
        expect(text).toMatch(/paystack/)
        expect(text).toMatch(/WARN/)
      }))
  })
})
