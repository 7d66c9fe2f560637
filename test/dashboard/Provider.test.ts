import { HttpServer } from "@effect/platform"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { launchChromium, open, pw } from "../support/Browser.js"
import { OWNER_PASSWORD } from "../support/ApiHelpers.js"
import { makeTestApp, signup } from "../support/TestApp.js"
import { startPaystackFake } from "../fakes/PaystackFake.js"
import { startMonnifyFake } from "../fakes/MonnifyFake.js"
import { Option } from "effect"
import { assertSelfContained, axe, click, fill, go, heading, openContext, shot, text } from "./Driver.js"

/**
 * The provider page in a real browser: an Owner in test mode sees the sandbox, is told why a live key does not fit,
 * connects Paystack test keys (proved by the fake Paystack), and sees the connection and the webhook URL to paste at
 * Paystack; the key itself is never shown again.
 */
const fake = await startPaystackFake()
const monnify = await startMonnifyFake()
afterAll(async () => {
  await fake.close()
  await monnify.close()
})

layer(makeTestApp({ config: { sandboxLiveMode: false, paystackBaseUrl: fake.url, monnifyBaseUrl: Option.some(monnify.url) } }), { timeout: 120_000, excludeTestServices: true })("the provider page", (it) => {
  it.scoped("an Owner connects Paystack test keys, then moves the mode to Monnify", () =>
    Effect.gen(function* () {
      const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const s = yield* signup()
      const secretKey = `sk_test_${"a1b2c3d4".repeat(5)}`
      fake.addIntegration({ secretKey })

      const browser = yield* launchChromium
      const obs = yield* openContext(browser, origin)
      const { page } = obs
      yield* open(page, `${origin}/dashboard`)
      yield* heading(page, "Sign in")
      yield* fill(page, "email", s.email)
      yield* fill(page, "password", OWNER_PASSWORD)
      yield* click(page, "Sign in")
      yield* heading(page, "Home")

      yield* go(page, "#/provider")
      yield* heading(page, "Bank provider")
      expect(yield* text(page, "#provider-name")).toBe("Sandbox")
      yield* click(page, "Change provider")
      // A live key in test mode: the API's own message, once.
      yield* fill(page, "secretKey", `sk_live_${"a1b2c3d4".repeat(5)}`)
      yield* click(page, "Connect Paystack")
      yield* pw("the mismatch", () => page.getByText(/This is a live-mode key/).first().waitFor())
      expect(yield* pw("once", () => page.getByText(/This is a live-mode key/).count())).toBe(1)

      yield* fill(page, "secretKey", secretKey)
      yield* click(page, "Connect Paystack")
      yield* pw("connected", () => page.locator("#provider-name", { hasText: "Paystack" }).waitFor())
      expect(yield* text(page, "#webhook-url")).toBe(`${origin}/webhooks/paystack`)
      yield* pw("the key hint", () => page.getByText(`…${secretKey.slice(-4)}`).waitFor())
      yield* pw("the OTP advice", () => page.getByText(/turn off "Confirm transfers before sending"/).waitFor())
      expect(yield* pw("page text", () => page.content())).not.toContain(secretKey)
      yield* axe(page, "provider-paystack")
      yield* shot(page, "provider-paystack")

      // No account at Paystack yet: the mode may move to Monnify, whose form asks for its four fields.
      const merchant = { apiKey: "MK_TEST_ABCD1234EF", secretKey: "C0FFEE0000C0FFEE0000C0FFEE0000AA", contractCode: "5867418298", walletAccountNumber: "3934178936" }
      monnify.addMerchant(merchant)
      yield* click(page, "Change provider")
      yield* pw("choose Monnify", () => page.locator('[name="provider"]').selectOption("monnify"))
      yield* fill(page, "apiKey", merchant.apiKey)
      yield* fill(page, "secretKey", merchant.secretKey)
      yield* fill(page, "contractCode", merchant.contractCode)
      yield* fill(page, "walletAccountNumber", merchant.walletAccountNumber)
      yield* click(page, "Connect Monnify")
      yield* pw("connected to Monnify", () => page.locator("#provider-name", { hasText: "Monnify" }).waitFor())
      expect(yield* text(page, "#contract-code")).toBe(merchant.contractCode)
      expect(yield* text(page, "#webhook-url")).toBe(`${origin}/webhooks/monnify`)
      expect(yield* pw("page text", () => page.content())).not.toContain(merchant.secretKey)
      yield* axe(page, "provider-monnify")
      yield* shot(page, "provider-monnify")
      assertSelfContained(obs, origin)
    }))
})
