import { expect, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { launchChromium, open, pw } from "../support/Browser.js"
import { expectStatus, inviteAndLogin } from "../support/ApiHelpers.js"
import { createAccount, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertSelfContained, axe, click, fill, go, heading, openContext, shot, text } from "./Driver.js"

/**
 * A Member's dashboard: what the API lets a Member do is there (reading everything, creating virtual accounts,
 * dry-runs), and what it would refuse with 403 is not offered (API keys, provider credentials, webhooks, review
 * decisions, holds and refunds, payouts, writing rules, flows, billing, sub-merchants, settlement, inviting). Opening
 * a refused page by its address shows the API's own 403 message.
 */

const simulate = (token: string, accountRef: string, amountKobo: number, senderName: string) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token, json: { accountRef, amountKobo, senderName } })
    expectStatus(r, 200)
  })

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("a Member in the dashboard", (it) => {
  it.scoped("sees the data and none of the actions a Member may not take", () =>
    Effect.gen(function* () {
      const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const t = yield* testTenant
      yield* createAccount(t.token, "inv-77", "Musa Bello", 1_000_000)
      // Three quick deposits and a fourth from a stranger: held for review (velocity and a name mismatch).
      for (const k of [10_000, 20_000, 30_000]) yield* simulate(t.token, "inv-77", k, "MUSA BELLO")
      yield* simulate(t.token, "inv-77", 45_000, "QWERTY ZZYZX")
      yield* waitForTransactions(t.tenantId, 4)
      const pending = yield* call("GET", "/api/v1/transactions?status=PendingReview", { token: t.token })
      expect(pending.body.data).toHaveLength(1)
      const reference = pending.body.data[0].reference as string
      const member = yield* inviteAndLogin(t.ownerToken, "Member", "m1")

      const browser = yield* launchChromium
      const obs = yield* openContext(browser, origin)
      const { page } = obs
      yield* open(page, `${origin}/dashboard`)
      yield* heading(page, "Sign in")
      yield* fill(page, "email", member.email)
      yield* fill(page, "password", member.password)
      yield* click(page, "Sign in")
      yield* heading(page, "Home")
      expect(yield* text(page, "#role")).toBe("Member")

      const nav = yield* pw("nav", () => page.locator("#nav a").allInnerTexts())
      expect(nav).toContain("Virtual accounts")
      expect(nav).toContain("Review queue")
      for (const hidden of ["API keys", "Provider", "Webhooks"]) expect(nav).not.toContain(hidden)

      // The review queue shows the risky deposit and its reasons, without Approve or Reject.
      yield* go(page, "#/review")
      yield* heading(page, "Review queue")
      yield* pw("the item", () => page.getByText("name_mismatch").first().waitFor())
      yield* pw("the notice", () => page.getByText("Only an Owner or Admin can approve or reject.").waitFor())
      expect(yield* pw("approve buttons", () => page.getByRole("button", { name: /^(Approve|Reject)/ }).count())).toBe(0)
      yield* axe(page, "member-review")
      yield* shot(page, "member-review")

      // The transaction: no review, hold or refund.
      yield* go(page, `#/transactions/${reference}`)
      yield* heading(page, `Transaction ${reference}`)
      yield* pw("the notice", () => page.getByText("Holds, refunds and review decisions need an Owner or Admin.").waitFor())
      for (const b of ["Approve", "Hold in escrow", "Release hold", "Refund surplus"]) {
        expect(yield* pw(`no ${b}`, () => page.getByRole("button", { name: b }).count())).toBe(0)
      }

      const absent = (route: string, title: string, notice: string, buttons: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          yield* go(page, route)
          yield* heading(page, title)
          yield* pw(`notice on ${route}`, () => page.getByText(notice).first().waitFor())
          for (const b of buttons) expect(yield* pw(`no ${b}`, () => page.getByRole("button", { name: b }).count()), `${route} offers ${b}`).toBe(0)
        })
      yield* absent("#/payouts", "Payouts", "Payouts need an Owner or Admin.", ["Send payout", "Look up the account name"])
      yield* absent("#/billing", "Billing", "Creating and changing billing schedules needs an Owner or Admin.", ["Create schedule", "Advance clock"])
      yield* absent("#/automation", "Rules and flows", "Creating and changing flows needs an Owner or Admin.", ["Create rule", "Create flow"])
      // A Member may dry-run a rule: offered.
      expect(yield* pw("dry-run offered", () => page.getByRole("button", { name: "Dry-run over recent deposits" }).count())).toBe(1)
      yield* absent("#/sub-merchants", "Sub-merchants", "Creating sub-merchants and setting their payout accounts needs an Owner or Admin.", ["Create sub-merchant", "Verify and save"])
      yield* absent("#/settlement", "Settlement", "Changing settlement needs an Owner or Admin.", ["Save settings", "Save split plan", "Settle now"])
      yield* absent("#/team", "Team", "Inviting teammates needs an Owner or Admin.", ["Invite"])
      yield* go(page, "#/onboarding")
      yield* heading(page, "Onboarding")
      expect(yield* pw("no submit", () => page.getByRole("button", { name: "Submit for approval" }).count())).toBe(0)

      // A Member may create virtual accounts (any role): offered, with a pasted test key in test mode.
      yield* go(page, "#/accounts")
      yield* heading(page, "Virtual accounts")
      expect(yield* pw("no key creation", () => page.getByRole("button", { name: "Create a test key for the sandbox" }).count())).toBe(0)
      yield* pw("create offered", () => page.getByRole("button", { name: "Create test account" }).waitFor())
      yield* axe(page, "member-accounts")
      yield* shot(page, "member-accounts")

      // Typed in by address, a refused page shows the API's 403 message.
      yield* go(page, "#/keys")
      yield* heading(page, "API keys")
      yield* pw("the 403", () => page.locator("[role=alert]").first().waitFor())
      expect(yield* text(page, "[role=alert]")).toMatch(/Error 403: This operation needs a dashboard Owner or Admin; you are Member\./)
      yield* shot(page, "member-forbidden")
      assertSelfContained({ ...obs, errors: obs.errors.filter((e) => !/403/.test(e)) }, origin)
    }), 180_000)
})
