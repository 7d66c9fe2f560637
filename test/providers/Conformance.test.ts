import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Layer, LogLevel, Option } from "effect"
import * as crypto from "node:crypto"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { ProviderSync } from "../../services/providers/ProviderSync.js"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { isValidNuban } from "../../src/domain/Nuban.js"
import { providerTransferReference } from "../../src/domain/ProviderRefs.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, callWithHeaders, eventBody, sessionId, testTenant } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"
import { providerCalls, waitForTransfer } from "../transfers/support.js"
import { MONNIFY_FAKE_DIRECTORY, startMonnifyFake } from "../fakes/MonnifyFake.js"
import { PAYSTACK_FAKE_DIRECTORY, startPaystackFake } from "../fakes/PaystackFake.js"
import { api, appBaseUrl, capturedLogs, inboxWith, newSecretKey, openAccount, resultOf, transactionsWith, waitForTransaction } from "./support.js"

/**
 * One conformance suite that every bank provider adapter must pass: the built-in sandbox, Paystack (against its
 * faithful fake) and Monnify (against its). A new adapter is done when a driver for it passes every case here
 * (docs/adding-a-provider.md). Each case runs through the public API, in both storage modes, and ends with the
 * ledger invariant.
 */
const paystack = await startPaystackFake({ webhookRetryDelaysMs: [100, 200], transferReportDelayMs: 50 })
const monnify = await startMonnifyFake({ webhookRetryDelaysMs: [100, 200], disbursementReportDelayMs: 50 })
afterAll(async () => {
  await paystack.close()
  await monnify.close()
})

interface Account { readonly accountNumber: string; readonly bankCode: string; readonly accountName: string }
interface Tenant { readonly tenantId: string; readonly token: string; readonly testOwnerToken: string; readonly key: string }
interface Credit { readonly reference: string; readonly results: ReadonlyArray<string> }

/** What the suite needs to drive one provider: how money arrives, how it is forged or lost, and its name directory. */
interface Driver {
  readonly name: string
  readonly tenant: Effect.Effect<Tenant, never, any>
  /** The provider credits the NUBAN; `twice` delivers the same notification twice. The receiver's answers. */
  readonly credit: (t: Tenant, nuban: string, amountKobo: number, deliver: "now" | "twice" | "never") => Effect.Effect<Credit, never, any>
  /** The last notification of `reference` delivered once more, later: the receiver's answer. */
  readonly again: (t: Tenant, reference: string) => Effect.Effect<string, never, any>
  /** A credit notification signed with a key that is not the tenant's: the HTTP status. */
  readonly forge: (t: Tenant, nuban: string, amountKobo: number) => Effect.Effect<{ readonly status: number; readonly reference: string }, never, any>
  /** The provider accepts the next transfer, and its answer never reaches us. */
  readonly loseNextTransferAnswer: (t: Tenant) => Effect.Effect<void, never, any>
  /** How many times the provider was asked to send the transfer. */
  readonly transferCalls: (t: Tenant, merchantTxRef: string) => Effect.Effect<number, never, any>
  /** The missed-webhook sync, where the provider has one (the sandbox cannot miss: it writes our inbox itself). */
  readonly syncs: boolean
  readonly found: Account
  readonly notFound: { readonly accountNumber: string; readonly bankCode: string }
  readonly fails: Account
  readonly reverses: Account
}

const row = (d: ReadonlyArray<Account & { readonly outcome: string }>, name: string) => d.find((x) => x.accountName === name)!
const bodies = new Map<string, { readonly body: string; readonly signature: string }>()

const sandboxDriver: Driver = {
  name: "sandbox",
  tenant: Effect.map(testTenant, (t) => ({ ...t, key: t.webhookSecret, merchantId: t.merchantId })),
  credit: (t, nuban, amountKobo, deliver) =>
    Effect.gen(function* () {
      const creds = t as Tenant & { merchantId: string }
      const body = eventBody({ merchantId: creds.merchantId }, { accountNumber: nuban, amountKobo, sessionId: sessionId(), senderName: "ADAEZE OKAFOR" })
      const raw = JSON.stringify(body)
      const signature = signSandboxEvent(t.key, body)
      bodies.set(body.sessionId, { body: raw, signature })
      const results: Array<string> = []
      for (let i = 0; i < (deliver === "twice" ? 2 : deliver === "never" ? 0 : 1); i++) {
        results.push((yield* callWithHeaders("POST", "/webhooks/sandbox", raw, { "x-sandbox-signature": signature })).body.result)
      }
      return { reference: body.sessionId, results }
    }),
  again: (_t, reference) =>
    Effect.map(callWithHeaders("POST", "/webhooks/sandbox", bodies.get(reference)!.body, { "x-sandbox-signature": bodies.get(reference)!.signature }), (r) => r.body.result),
  forge: (t, nuban, amountKobo) =>
    Effect.gen(function* () {
      const body = eventBody({ merchantId: (t as Tenant & { merchantId: string }).merchantId }, { accountNumber: nuban, amountKobo })
      const r = yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(body), { "x-sandbox-signature": signSandboxEvent("whsk_forged", body) })
      return { status: r.status, reference: body.sessionId }
    }),
  loseNextTransferAnswer: () => Effect.flatMap(SandboxFaults, (f) => f.set("transfer", "acceptThenTimeout")),
  transferCalls: (_t, ref) => providerCalls(ref),
  syncs: false,
  found: { accountNumber: "0123456785", bankCode: "058", accountName: "ADAEZE OKAFOR" },
  notFound: { accountNumber: "0000014579", bankCode: "011" },
  fails: { accountNumber: "9999999907", bankCode: "058", accountName: "FAIL TRANSFER" },
  reverses: { accountNumber: "9999999913", bankCode: "044", accountName: "REVERSE TRANSFER" }
}

const paystackDriver: Driver = {
  name: "Paystack (fake)",
  tenant: Effect.gen(function* () {
    const t = yield* testTenant
    const key = newSecretKey("test")
    paystack.addIntegration({ secretKey: key, webhookUrl: `${yield* appBaseUrl}/webhooks/paystack` })
    expectStatus(yield* api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json: { provider: "paystack", secretKey: key } }), 200)
    return { ...t, key }
  }),
  credit: (t, nuban, amountKobo, deliver) =>
    Effect.gen(function* () {
      // "now": the fake's own delivery. "twice": the same signed bytes sent twice by hand, so the answers can be read.
      const d = yield* Effect.promise(() => paystack.credit({ accountNumber: nuban, amountKobo, senderName: "ADAEZE OKAFOR", deliver: deliver === "now" ? "now" : "never" }))
      bodies.set(d.reference, { body: d.body, signature: d.signature })
      const results: Array<string> = []
      for (let i = 0; i < (deliver === "twice" ? 2 : 0); i++) results.push(resultOf((yield* Effect.promise(() => paystack.sendRaw(t.key, d.body, d.signature))).text)!)
      return { reference: d.reference, results }
    }),
  again: (t, reference) => Effect.map(Effect.promise(() => paystack.sendRaw(t.key, bodies.get(reference)!.body, bodies.get(reference)!.signature)), (r) => resultOf(r.text)!),
  forge: (_t, nuban, amountKobo) =>
    Effect.map(Effect.promise(() => paystack.credit({ accountNumber: nuban, amountKobo, signWith: newSecretKey("test") })), (d) => ({ status: d.statuses[0]!, reference: d.reference })),
  loseNextTransferAnswer: () => Effect.sync(() => paystack.fault("transfer.create", "acceptThenHang", 1)),
  transferCalls: (t, ref) =>
    Effect.sync(() => paystack.calls("transfer.create").filter((c) => (c.body as { reference?: string }).reference === providerTransferReference("paystack", t.tenantId, "test", ref)).length),
  syncs: true,
  found: row(PAYSTACK_FAKE_DIRECTORY, "ADAEZE OKAFOR"),
  notFound: { accountNumber: "0000014579", bankCode: "011" },
  fails: row(PAYSTACK_FAKE_DIRECTORY, "FAIL TRANSFER"),
  reverses: row(PAYSTACK_FAKE_DIRECTORY, "REVERSE TRANSFER")
}

const monnifyDriver: Driver = {
  name: "Monnify (fake)",
  tenant: Effect.gen(function* () {
    const t = yield* testTenant
    const apiKey = `MK_TEST_${crypto.randomBytes(6).toString("hex").toUpperCase()}`
    const key = crypto.randomBytes(16).toString("hex").toUpperCase()
    const contractCode = String(crypto.randomInt(1_000_000_000, 9_999_999_999))
    const walletAccountNumber = String(crypto.randomInt(1_000_000_000, 9_999_999_999))
    // Transfer OTP off (DESIGN.md: the tenant turns it off with Monnify); a funded wallet.
    monnify.addMerchant({ apiKey, secretKey: key, contractCode, walletAccountNumber, webhookUrl: `${yield* appBaseUrl}/webhooks/monnify`, walletBalanceKobo: 1_000_000_000, mfa: false })
    const r = yield* api("PUT", "/api/v1/dashboard/provider", { token: t.testOwnerToken, json: { provider: "monnify", apiKey, secretKey: key, contractCode, walletAccountNumber } })
    expectStatus(r, 200)
    return { ...t, key, apiKey }
  }),
  credit: (t, nuban, amountKobo, deliver) =>
    Effect.gen(function* () {
      const d = yield* Effect.promise(() => monnify.credit({ accountNumber: nuban, amountNaira: amountKobo / 100, payerName: "ADAEZE OKAFOR", deliver: deliver === "now" ? "now" : "never" }))
      bodies.set(d.reference, { body: d.body, signature: d.signature })
      const results: Array<string> = []
      const apiKey = (t as Tenant & { apiKey: string }).apiKey
      for (let i = 0; i < (deliver === "twice" ? 2 : 0); i++) results.push(resultOf((yield* Effect.promise(() => monnify.sendRaw(apiKey, d.body, d.signature))).text)!)
      return { reference: d.reference, results }
    }),
  again: (t, reference) =>
    Effect.map(Effect.promise(() => monnify.sendRaw((t as Tenant & { apiKey: string }).apiKey, bodies.get(reference)!.body, bodies.get(reference)!.signature)), (r) => resultOf(r.text)!),
  forge: (_t, nuban, amountKobo) =>
    Effect.map(Effect.promise(() => monnify.credit({ accountNumber: nuban, amountNaira: amountKobo / 100, signWith: "NOT-THE-CLIENT-SECRET" })), (d) => ({ status: d.statuses[0]!, reference: d.reference })),
  loseNextTransferAnswer: () => Effect.sync(() => monnify.fault("disbursement.single", "acceptThenHang", 1)),
  transferCalls: (t, ref) =>
    Effect.sync(() => monnify.calls("disbursement.single").filter((c) => (c.body as { reference?: string }).reference === providerTransferReference("monnify", t.tenantId, "test", ref)).length),
  syncs: true,
  found: row(MONNIFY_FAKE_DIRECTORY, "ADAEZE OKAFOR"),
  notFound: { accountNumber: "0000014579", bankCode: "011" },
  fails: row(MONNIFY_FAKE_DIRECTORY, "FAIL TRANSFER"),
  reverses: row(MONNIFY_FAKE_DIRECTORY, "REVERSE TRANSFER")
}

const appFor = (natsUrl: Option.Option<string>) =>
  makeTestApp({
    config: { paystackBaseUrl: paystack.url, monnifyBaseUrl: Option.some(monnify.url), logLevel: LogLevel.All, ...(Option.isNone(natsUrl) ? { natsUrl } : {}) },
    moneyOut: { providerTimeoutMs: 1_000, leaseMs: 2_500, statusCheckAfterMs: 400 }
  }).pipe(Layer.provide(capturedLogs))

const STORAGE = [["JetStream", Option.some(process.env.TEST_NATS_URL ?? "127.0.0.1:4222")], ["in-process bus", Option.none<string>()]] as const

for (const [storage, natsUrl] of STORAGE) {
  layer(appFor(natsUrl), { timeout: 120_000, excludeTestServices: true })(`provider conformance (${storage})`, (it) => {
    for (const d of [sandboxDriver, paystackDriver, monnifyDriver]) {
      /** A tenant of the driver with one account funded by a reconciled credit. */
      const funded = (ref: string, amountKobo: number) =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const account = yield* openAccount(t.token, ref)
          const c = yield* d.credit(t, account.nuban, amountKobo, "now")
          yield* waitForTransaction(t.token, c.reference)
          return { t, account }
        })

      it.effect(`${d.name}: provision (a valid NUBAN at the partner bank; the same accountRef is the same account)`, () =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const a = yield* openAccount(t.token, "conf-prov")
          expect(isValidNuban(a.nuban, a.bankCode), `${a.nuban} at ${a.bankCode}`).toBe(true)
          expect(a.bankName.length).toBeGreaterThan(0)
          const again = yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "conf-prov", name: "Adaeze Okafor" } })
          expectStatus(again, 200)
          expect(again.body.nuban).toBe(a.nuban)
        }))

      it.effect(`${d.name}: a credit is reconciled; delivered twice and again late, it is recorded once`, () =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const a = yield* openAccount(t.token, "conf-credit", { expectedAmountKobo: 123_450 })
          const c = yield* d.credit(t, a.nuban, 123_450, "twice")
          expect(c.results).toEqual(["processed", "duplicate"])
          expect(yield* waitForTransaction(t.token, c.reference)).toMatchObject({ amountKobo: 123_450, accountRef: "conf-credit", reconciliationStatus: "Exact" })
          expect(yield* d.again(t, c.reference)).toBe("duplicate")
          expect(yield* transactionsWith(t.tenantId, c.reference)).toBe(1)
          yield* assertLedgerInvariant
        }))

      it.effect(`${d.name}: a forged credit is 401 and records nothing`, () =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const a = yield* openAccount(t.token, "conf-forged")
          const f = yield* d.forge(t, a.nuban, 9_900_000)
          expect(f.status).toBe(401)
          expect(yield* inboxWith(null, f.reference)).toBe(0)
          yield* assertLedgerInvariant
        }))

      it.effect(`${d.name}: name enquiry found and not found`, () =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const found = yield* api("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: d.found.accountNumber, bankCode: d.found.bankCode } })
          expectStatus(found, 200)
          expect(found.body.accountName).toBe(d.found.accountName)
          expectProblem(yield* api("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: d.notFound }), 404, "bank_account_not_found")
        }))

      it.effect(`${d.name}: payouts succeed, fail and reverse; failure and reversal give the money back`, () =>
        Effect.gen(function* () {
          const { t } = yield* funded("conf-payouts", 1_000_000)
          const pay = (ref: string, to: Account, amountKobo: number) =>
            api("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: ref, amountKobo, accountNumber: to.accountNumber, bankCode: to.bankCode } })
          expectStatus(yield* pay("conf-ok", d.found, 100_000), 201)
          expectStatus(yield* pay("conf-fail", d.fails, 200_000), 201)
          expectStatus(yield* pay("conf-rev", d.reverses, 300_000), 201)
          expect((yield* waitForTransfer(t.token, "conf-ok")).status).toBe("Successful")
          expect((yield* waitForTransfer(t.token, "conf-fail")).status).toBe("Failed")
          expect((yield* waitForTransfer(t.token, "conf-rev", ["Reversed"])).status).toBe("Reversed")
          expect((yield* api("GET", "/api/v1/balance", { token: t.token })).body.availableKobo).toBe(1_000_000 - 100_000)
          for (const ref of ["conf-ok", "conf-fail", "conf-rev"]) expect(yield* d.transferCalls(t, ref), ref).toBe(1)
          yield* assertLedgerInvariant
        }))

      it.effect(`${d.name}: the status after a lost answer finishes the transfer; the provider was asked once`, () =>
        Effect.gen(function* () {
          const { t } = yield* funded("conf-lost", 500_000)
          yield* d.loseNextTransferAnswer(t)
          const r = yield* api("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: "conf-lost-1", amountKobo: 70_000, accountNumber: d.found.accountNumber, bankCode: d.found.bankCode } })
          expect([200, 201, 502]).toContain(r.status)
          expect((yield* waitForTransfer(t.token, "conf-lost-1")).status).toBe("Successful")
          expect(yield* d.transferCalls(t, "conf-lost-1")).toBe(1)
          yield* Effect.flatMap(SandboxFaults, (f) => f.clear)
          yield* assertLedgerInvariant
        }))

      it.effect(`${d.name}: ${d.syncs ? "a credit the webhook never brought is recorded once by the sync" : "the sync has nothing to do (the sandbox writes our inbox itself)"}`, () =>
        Effect.gen(function* () {
          const t = yield* d.tenant
          const a = yield* openAccount(t.token, "conf-sync")
          const sync = yield* ProviderSync
          if (!d.syncs) {
            expect(yield* sync.sync({ tenantId: t.tenantId, mode: "test" })).toEqual({ found: 0, recorded: 0, known: 0 })
            return
          }
          const missed = yield* d.credit(t, a.nuban, 45_600, "never")
          expect(yield* inboxWith(t.tenantId, missed.reference)).toBe(0)
          const first = yield* sync.sync({ tenantId: t.tenantId, mode: "test" })
          expect(first).toMatchObject({ recorded: 1 })
          expect(yield* waitForTransaction(t.token, missed.reference)).toMatchObject({ amountKobo: 45_600, accountRef: "conf-sync" })
          expect(yield* sync.sync({ tenantId: t.tenantId, mode: "test" })).toMatchObject({ recorded: 0, known: first.found })
          expect(yield* transactionsWith(t.tenantId, missed.reference)).toBe(1)
          yield* assertLedgerInvariant
        }))
    }
  })
}
