import { expect, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { launchChromium, pw } from "../support/Browser.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { createAccount, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { click, fill, go, heading, openContext, ownerWithTestToken, signIn, text } from "./Driver.js"

/**
 * The dashboard's niceties (issue 34): one sandbox test key per user, kept in the browser and reused by a second tab
 * (counted through the API); today's figures on the home page, pluralised; an error shown once.
 */


layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("the dashboard's sandbox key, today and errors", (it) => {
  it.scoped("two tabs of one user share one test key; home shows today's deposits; an error shows once", () =>
    Effect.gen(function* () {
      const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      // One test key made here, to pay a deposit in today.
      const { email, tenantId, owner, token } = yield* ownerWithTestToken("Kano Rice Ltd")
      yield* createAccount(token, "inv-1", "Amina Yusuf", 250_000)
      expectStatus(yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token, json: { accountRef: "inv-1", amountKobo: 250_000, senderName: "AMINA YUSUF" } }), 200)
      yield* waitForTransactions(tenantId, 1)
      const testKeys = Effect.map(call("GET", "/api/v1/dashboard/api-keys?take=100", { token: owner }), (r) =>
        (r.body.data as Array<{ mode: string; revokedAt: string | null }>).filter((k) => k.mode === "test" && !k.revokedAt).length)
      expect(yield* testKeys).toBe(1)

      const browser = yield* launchChromium
      const { page, context } = yield* Effect.map(openContext(browser, origin), (o) => ({ page: o.page, context: o.page.context() }))
      yield* signIn(page, origin, email)
      // Today's figures, in Lagos time and in words.
      yield* pw("today", () => page.locator("#today-count").waitFor())
      expect(yield* text(page, "#today-count")).toBe("1 deposit")
      expect(yield* text(page, "#today")).toMatch(/₦2,500\.00/)

      // The first tab mints the user's sandbox key.
      yield* go(page, "#/accounts")
      yield* heading(page, "Virtual accounts")
      yield* click(page, "Create a test key for the sandbox")
      yield* pw("kept", () => page.locator("#sandbox-key").waitFor())
      const kept = yield* text(page, "#sandbox-key code")
      expect(yield* testKeys).toBe(2)

      // A second tab of the same user (its own session: sessionStorage is per tab) finds the key and mints none.
      const second = yield* pw("second tab", () => context.newPage())
      yield* signIn(second, origin, email)
      yield* go(second, "#/accounts")
      yield* heading(second, "Virtual accounts")
      yield* pw("kept in tab 2", () => second.locator("#sandbox-key").waitFor())
      expect(yield* text(second, "#sandbox-key code")).toBe(kept)
      expect(yield* pw("no create button", () => second.getByRole("button", { name: "Create a test key for the sandbox" }).count())).toBe(0)
      yield* fill(second, "accountRef", "inv-2")
      yield* fill(second, "name", "Bola Ade")
      yield* click(second, "Create test account")
      yield* pw("created", () => second.getByText(/Created inv-2/).waitFor())
      expect(yield* testKeys).toBe(2)

      // A missing account: its 404 is shown once, not once per failed call.
      yield* go(second, "#/accounts/no-such-account")
      yield* pw("the 404", () => second.locator("[role=alert]").first().waitFor())
      yield* Effect.sleep("500 millis")
      expect(yield* pw("alerts", () => second.locator("[role=alert]").count())).toBe(1)
      expect(yield* text(second, "[role=alert]")).toMatch(/Error 404: /)
    }), 180_000)
})
