import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Layer, LogLevel } from "effect"
import { BankProvider } from "../../services/providers/BankProvider.js"
import { SandboxProviderLive } from "../../services/providers/SandboxProvider.js"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { Tenants } from "../../services/access/Tenants.js"
import { approve, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { callWithHeaders, eventBody } from "../support/Pipeline.js"
import { apiToken, makeTestApp, signup } from "../support/TestApp.js"
import { startPaystackFake } from "../fakes/PaystackFake.js"
import { api, appBaseUrl, capturedLogs, newSecretKey, seen } from "./support.js"

/**
 * Not the sandbox by accident: with SANDBOX_LIVE_MODE unset, no live-mode path reaches the sandbox bank. The sandbox
 * adapter is wrapped in a spy that counts every call; every live-mode operation that needs a provider is tried, and
 * each answers 409 provider_not_connected (or, for the sandbox's webhook, 401) until Paystack live keys are connected,
 * after which live money goes to Paystack. The spy must count nothing.
 */
const fake = await startPaystackFake({ webhookRetryDelaysMs: [100], transferReportDelayMs: 50 })
afterAll(() => fake.close())

const sandboxCalls: Array<string> = []
const SpiedSandbox = Layer.effect(
  BankProvider,
  Effect.map(BankProvider, (real) => BankProvider.of({
    name: real.name,
    createVirtualAccount: (req) => Effect.zipRight(Effect.sync(() => sandboxCalls.push(`createVirtualAccount ${req.mode}`)), real.createVirtualAccount(req)),
    listBanks: () => Effect.zipRight(Effect.sync(() => sandboxCalls.push("listBanks")), real.listBanks()),
    nameEnquiry: (a, b) => Effect.zipRight(Effect.sync(() => sandboxCalls.push("nameEnquiry")), real.nameEnquiry(a, b)),
    transfer: (req) => Effect.zipRight(Effect.sync(() => sandboxCalls.push(`transfer ${req.mode}`)), real.transfer(req)),
    transferStatus: (l) => Effect.zipRight(Effect.sync(() => sandboxCalls.push(`transferStatus ${l.mode}`)), real.transferStatus(l))
  }))
).pipe(Layer.provide(SandboxProviderLive))

const liveTenant = Effect.gen(function* () {
  const s = yield* signup()
  yield* approve(s.tenantId)
  const { token } = yield* apiToken(s.ownerToken, "live")
  return { ...s, token }
})

layer(
  makeTestApp({ config: { sandboxLiveMode: false, paystackBaseUrl: fake.url, logLevel: LogLevel.All }, provider: SpiedSandbox }).pipe(Layer.provide(capturedLogs)),
  { timeout: 60_000, excludeTestServices: true }
)("SANDBOX_LIVE_MODE unset", (it) => {
  it.effect("every live-mode path is refused until a provider is connected, and the sandbox is never called", () =>
    Effect.gen(function* () {
      sandboxCalls.length = 0
      const t = yield* liveTenant
      expect((yield* api("GET", "/api/v1/dashboard/provider", { token: t.ownerToken })).body).toMatchObject({ mode: "live", provider: "none", connectedAt: null })
      expect(seen.some((l) => l.includes("SANDBOX_LIVE_MODE is on"))).toBe(false)

      expectProblem(yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "live-1", name: "Ngozi Eze" } }), 409, "provider_not_connected")
      expectProblem(yield* api("POST", "/api/v1/virtual-accounts", { token: t.ownerToken, json: { accountRef: "live-2", name: "Ngozi Eze" } }), 409, "provider_not_connected")
      expectProblem(yield* api("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: "0123456785", bankCode: "058" } }), 409, "provider_not_connected")
      expectProblem(yield* api("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: "live-po-1", amountKobo: 1_000, accountNumber: "0123456785", bankCode: "058" } }), 409, "provider_not_connected")
      expectProblem(yield* api("PUT", "/api/v1/settings/settlement", {
        token: t.token, json: { settlementAccountNumber: "0123456785", settlementBankCode: "058", settlementAccountName: "ADAEZE OKAFOR" }
      }), 409, "provider_not_connected")
      const banks = yield* api("GET", "/api/v1/transfers/banks", { token: t.token })
      expectStatus(banks, 200)
      expect(banks.body.data.some((b: { name: string }) => b.name === "Collections Sandbox MFB")).toBe(false)

      // The sandbox bank's webhook, correctly signed with the tenant's live sandbox credentials: refused.
      const creds = yield* Effect.flatMap(Tenants, (ts) => ts.providerFor(t.tenantId, "live"))
      const body = eventBody(creds, { accountNumber: "9930000737", amountKobo: 100_000 })
      for (const path of ["/webhooks/sandbox", "/api/v1/webhooks/sandbox"]) {
        const r = yield* callWithHeaders("POST", path, JSON.stringify(body), { "x-sandbox-signature": signSandboxEvent(creds.webhookSecret, body) })
        expect([r.status, r.body.code], path).toEqual([401, "sandbox_not_live"])
      }

      // Live keys connected: live money goes to Paystack.
      const secretKey = newSecretKey("live")
      fake.addIntegration({ secretKey, webhookUrl: `${yield* appBaseUrl}/webhooks/paystack` })
      const connected = yield* api("PUT", "/api/v1/dashboard/provider", { token: t.ownerToken, json: { provider: "paystack", secretKey } })
      expectStatus(connected, 200)
      expect(connected.body).toMatchObject({ provider: "paystack", mode: "live", preferredBank: "wema-bank" })
      const account = yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "live-1", name: "Ngozi Eze" } })
      expectStatus(account, 201)
      expect(account.body).toMatchObject({ mode: "live", bankName: "Wema Bank", bankCode: "035" })
      expect(fake.dedicatedAccounts(secretKey).map((d) => d.accountNumber)).toEqual([account.body.nuban])
      expectStatus(yield* api("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: "0123456785", bankCode: "058" } }), 200)

      expect(sandboxCalls).toEqual([])
    }))
})

layer(
  makeTestApp({ config: { sandboxLiveMode: true, logLevel: LogLevel.All }, provider: SpiedSandbox }).pipe(Layer.provide(capturedLogs)),
  { timeout: 60_000, excludeTestServices: true }
)("SANDBOX_LIVE_MODE=1", (it) => {
  it.effect("is announced, and lets the sandbox serve live mode for a tenant with no connection", () =>
    Effect.gen(function* () {
      sandboxCalls.length = 0
      expect(seen.some((l) => l.includes("SANDBOX_LIVE_MODE is on"))).toBe(true)
      const t = yield* liveTenant
      const account = yield* api("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "live-sbx", name: "Ngozi Eze" } })
      expectStatus(account, 201)
      expect(account.body.bankName).toBe("Collections Sandbox MFB")
      expect(sandboxCalls).toEqual(["createVirtualAccount live"])
      expect((yield* api("GET", "/api/v1/dashboard/provider", { token: t.ownerToken })).body.provider).toBe("sandbox")
    }))
})
