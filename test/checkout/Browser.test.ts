import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { HttpServer } from "@effect/platform"
import { Deferred, Duration, Effect, TestClock, TestContext } from "effect"
import * as crypto from "node:crypto"
import type { Page, Response } from "playwright-core"
import { CheckoutClock } from "../../services/checkout/Checkout.js"
import { formatWat } from "../../src/domain/Wat.js"
import { axe } from "../dashboard/Driver.js"
import { launchChromium, type ObservedPage, PHONE, NAVIGATION_TIMEOUT_MS, open, phonePage, pw, screenshot } from "../support/Browser.js"
import { testTenant } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"

/**
 * The hosted checkout page in a real browser: Debian's chromium, headless, at a phone's size, driven by playwright-core
 * against the real service over real HTTP. A payer opens the page, the money arrives through the sandbox bank, and
 * the page changes by itself (no reload): awaiting, part paid, paid, expired. The page asks nothing of anyone but the
 * service, and shows nothing of who the payer is. Screenshots of each state go to docs/screenshots/.
 *
 * Every wait is bounded (Playwright's own timeouts, 10 s at most); the browser and its contexts close with each
 * test's scope, whatever happens.
 */

/** A customer whose every detail is distinctive, so any leak of it on the page is found. */
const customerFor = (suffix: string) => ({
  name: "Oluwaseun Adebayo-Okonkwo",
  email: `seun.okonkwo.${suffix}@example.ng`,
  phone: "+2348035550199",
  accountRef: `order-zx${suffix}`
})
type Customer = ReturnType<typeof customerFor>

/** Money through the sandbox bank: the merchant's test API, as a merchant's integration test would send it. */
const deposit = (token: string, accountRef: string, amountKobo: number) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token, json: { accountRef, amountKobo, senderName: "ADEBAYO OLUWASEUN" } })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  })

/** A tenant, an account for a distinctive customer expecting `expectedKobo`, and a checkout session on it. */
const setUp = (expectedKobo: number, ttlSeconds?: number) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const customer = customerFor(crypto.randomBytes(4).toString("hex"))
    const acc = yield* call("POST", "/api/v1/virtual-accounts", {
      token: t.token,
      json: { accountRef: customer.accountRef, name: customer.name, email: customer.email, phone: customer.phone, expectedAmountKobo: expectedKobo }
    })
    expect(acc.status, JSON.stringify(acc.body)).toBe(201)
    const s = yield* call("POST", "/api/v1/checkout/sessions", {
      token: t.token,
      json: { accountRef: customer.accountRef, ...(ttlSeconds === undefined ? {} : { ttlSeconds }) }
    })
    expect(s.status, JSON.stringify(s.body)).toBe(201)
    const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
    return {
      t,
      customer,
      nuban: acc.body.nuban as string,
      bankName: acc.body.bankName as string,
      accountName: acc.body.accountName as string,
      session: s.body as { token: string; hostedUrl: string; streamUrl: string; snapshotUrl: string; expiresAt: string },
      origin
    }
  })

const text = (page: Page, selector: string) => pw(`text of ${selector}`, () => page.locator(selector).innerText())

const visible = (page: Page, selector: string) => pw(`visibility of ${selector}`, () => page.locator(selector).isVisible())

/** The page is no wider than `width` CSS pixels, and the NUBAN is on one line. */
const fitsWidth = (page: Page, width: number) =>
  Effect.gen(function* () {
    expect(yield* pw("page width", () => page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(width)
    const box = yield* pw("the NUBAN's box", () => page.locator("#nuban").boundingBox())
    const fontSize = yield* pw("the NUBAN's font size", () => page.evaluate("parseFloat(getComputedStyle(document.getElementById('nuban')).fontSize)"))
    expect(box!.height).toBeLessThan(2 * (fontSize as number))
    expect(box!.x + box!.width).toBeLessThanOrEqual(width)
  })

/** Waits (bounded) until the page's status shows `state`. */
const waitForState = (page: Page, state: string) =>
  pw(`waiting for the page to show ${state}`, () => page.locator(`#status[data-state="${state}"]`).waitFor({ state: "visible", timeout: 10_000 }))

/**
 * Opens the hosted page as a phone's browser would, checks the answer's headers, and waits until the page's live
 * connection has its first event (from then on, every change of the account reaches it). Returns the HTML as sent.
 */
const openHosted = (obs: ObservedPage, origin: string, hostedUrl: string) =>
  Effect.gen(function* () {
    const response = yield* open(obs.page, `${origin}${hostedUrl}`, "opening the hosted page")
    expect(response?.status()).toBe(200)
    const headers = response!.headers()
    expect(headers["content-type"]).toMatch(/^text\/html/)
    const csp = headers["content-security-policy"]
    expect(csp).toBeDefined()
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+'/)
    expect(csp).not.toContain("unsafe-inline")
    expect(headers["cache-control"]).toBe("no-store")
    expect(headers["referrer-policy"]).toBe("no-referrer")
    yield* pw("waiting for the live connection", () => obs.page.locator(`body[data-live="live"]`).waitFor({ state: "attached", timeout: 10_000 }))
    return yield* pw("the page's HTML", () => response!.text())
  })

/**
 * No personal data and no third-party requests: every request the page made went to the service's own origin, and
 * were only the page itself and its stream; neither the HTML as sent, nor the live DOM, nor the text a person reads
 * holds the customer's name, e-mail, phone or the merchant's accountRef; no error in the console (a CSP violation
 * would be one). The one exception is the NUBAN's account name (the provider's, which holds the customer's name): the
 * payer's bank app shows it to anyone who types the NUBAN, and the page shows it so the payer can check it there.
 */
const assertPrivateAndSelfContained = (obs: ObservedPage, origin: string, session: { hostedUrl: string; streamUrl: string }, customer: Customer, sentHtml: string, accountName: string) =>
  Effect.gen(function* () {
    expect(obs.requests.length).toBeGreaterThan(0)
    for (const r of obs.requests) expect(new URL(r.url).origin, r.url).toBe(new URL(origin).origin)
    const paths = new Set(obs.requests.map((r) => new URL(r.url).pathname))
    expect([...paths].sort()).toEqual([session.hostedUrl, session.streamUrl].sort())
    const dom = yield* pw("the page's DOM", () => obs.page.content())
    const visible = yield* text(obs.page, "body")
    const phoneDigits = customer.phone.replace(/\D/g, "")
    for (const haystack of [sentHtml, dom, visible]) {
      const lower = haystack.toLowerCase().split(accountName.toLowerCase()).join("")
      for (const needle of [customer.name, "Oluwaseun", "Okonkwo", customer.email, customer.email.split("@")[0]!, customer.accountRef]) {
        expect(lower, `the page shows "${needle}"`).not.toContain(needle.toLowerCase())
      }
      expect(haystack.replace(/\D/g, ""), "the page shows the phone number").not.toContain(phoneDigits.slice(-10))
    }
    for (const r of obs.requests) expect(r.url).not.toContain(customer.accountRef)
    expect(obs.errors).toEqual([])
  })

/** The page a browser gets for an unknown or expired link: a 404 HTML page with its heading, under a strict CSP. */
const expectGonePage = (page: Page, response: Response | null) =>
  Effect.gen(function* () {
    expect(response?.status()).toBe(404)
    expect(response!.headers()["content-type"]).toMatch(/^text\/html/)
    expect(response!.headers()["content-security-policy"]).toContain("default-src 'none'")
    const heading = page.getByRole("heading", { level: 1 })
    expect(yield* pw("the heading", () => heading.innerText())).toBe("This payment link has expired or does not exist")
    expect(yield* text(page, "body")).toContain("Ask the business that sent it for a new link.")
  })

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("the hosted checkout page in chromium", (it) => {
  it.scoped("shows where to pay on a phone, copies the NUBAN by keyboard, and turns paid by itself when the money arrives", () =>
    Effect.gen(function* () {
      const { t, customer, nuban, bankName, accountName, session, origin } = yield* setUp(150_000)
      const browser = yield* launchChromium
      const obs = yield* phonePage(browser, origin)
      const { page } = obs
      const html = yield* openHosted(obs, origin, session.hostedUrl)

      // Awaiting: the amount, the bank, the NUBAN, a copy button and the status, on a phone-sized screen.
      expect(yield* text(page, "#amount-label")).toBe("Amount to pay")
      expect(yield* text(page, "#amount")).toBe("₦1,500.00")
      expect(yield* visible(page, "#paid-line")).toBe(false)
      expect(yield* text(page, "#bank")).toBe(bankName)
      expect(yield* text(page, "#nuban")).toBe(nuban)
      expect(yield* text(page, "#status")).toBe("Waiting for your transfer")
      // Who is paid, the name the payer's bank app will show for the NUBAN, and until when, in Lagos time.
      const sql = yield* SqlClient.SqlClient
      const [tenant] = yield* sql<{ name: string }>`SELECT name FROM tenants WHERE id = ${t.tenantId}`
      expect(yield* text(page, "#business")).toBe(tenant!.name)
      expect(accountName).toBe(`COLLECTIONS/${customer.name.toUpperCase()}`)
      expect(yield* text(page, "#account-name")).toBe(accountName)
      expect(yield* text(page, "#expires")).toBe(formatWat(Date.parse(session.expiresAt)))
      expect(yield* text(page, "#expires")).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} WAT$/)
      expect(yield* text(page, "#note")).toBe("This page updates by itself when your transfer arrives.")
      yield* axe(page, "the hosted checkout page, awaiting payment")
      expect(yield* pw("the copy button", () => page.getByRole("button", { name: "Copy the account number" }).isVisible())).toBe(true)
      // Nothing is wider than the phone (no sideways scrolling), even on a small one, and the NUBAN stays on one line.
      yield* fitsWidth(page, 390)
      yield* screenshot(page, "checkout-awaiting.png")
      yield* pw("a small phone", () => page.setViewportSize({ width: 320, height: 640 }))
      yield* fitsWidth(page, 320)
      yield* pw("back to the phone", () => page.setViewportSize(PHONE.viewport))

      // The copy button is the first stop of the keyboard, and copies the NUBAN (digits only).
      yield* pw("Tab", () => page.keyboard.press("Tab"))
      expect(yield* pw("focused element", () => page.evaluate("document.activeElement && document.activeElement.id"))).toBe("copy")
      yield* pw("Enter", () => page.keyboard.press("Enter"))
      yield* pw("waiting for Copied", () => page.locator("#copy", { hasText: "Copied" }).waitFor({ timeout: 5_000 }))
      expect(yield* pw("reading the clipboard", () => page.evaluate("navigator.clipboard.readText()"))).toBe(nuban)

      // The money arrives while the page is open: it turns paid by itself, without a reload.
      yield* pw("marking the window", () => page.evaluate("window.__beforeDeposit = 'still here'"))
      yield* deposit(t.token, customer.accountRef, 150_000)
      yield* waitForState(page, "paid")
      expect(yield* text(page, "#status")).toBe("Paid. Thank you!")
      expect(yield* text(page, "#amount-label")).toBe("Amount paid")
      expect(yield* text(page, "#amount")).toBe("₦1,500.00")
      // Paid: where to pay is no longer shown (no invitation to pay twice).
      expect(yield* visible(page, "#details")).toBe(false)
      expect(yield* text(page, "#note")).toBe("You can close this page.")
      expect(yield* pw("the marker", () => page.evaluate("window.__beforeDeposit"))).toBe("still here")
      expect(obs.navigations()).toBe(1)
      expect(obs.requests.filter((r) => r.resourceType === "document")).toHaveLength(1)
      yield* screenshot(page, "checkout-paid.png")

      yield* assertPrivateAndSelfContained(obs, origin, session, customer, html, accountName)
    }))

  it.scoped("a part payment shows the amount still due, then paid when the rest arrives", () =>
    Effect.gen(function* () {
      const { t, customer, accountName, session, origin } = yield* setUp(150_000)
      const browser = yield* launchChromium
      const obs = yield* phonePage(browser, origin)
      const { page } = obs
      const html = yield* openHosted(obs, origin, session.hostedUrl)
      expect(yield* text(page, "#amount")).toBe("₦1,500.00")

      yield* deposit(t.token, customer.accountRef, 50_000)
      yield* waitForState(page, "partially_paid")
      expect(yield* text(page, "#status")).toBe("Part payment received: please send the rest")
      expect(yield* text(page, "#amount-label")).toBe("Amount still to pay")
      expect(yield* text(page, "#amount")).toBe("₦1,000.00")
      expect(yield* text(page, "#paid")).toBe("₦500.00")
      expect(yield* visible(page, "#details")).toBe(true)
      yield* screenshot(page, "checkout-partial.png")

      yield* deposit(t.token, customer.accountRef, 100_000)
      yield* waitForState(page, "paid")
      expect(yield* text(page, "#amount")).toBe("₦1,500.00")
      expect(obs.navigations()).toBe(1)
      yield* assertPrivateAndSelfContained(obs, origin, session, customer, html, accountName)
    }))

  it.scoped("an open page shows the expired state when the session expires (checkout clock on a TestClock)", () =>
    Effect.gen(function* () {
      // A TestClock from a forked fiber (the test fiber stays on the live clock), set to now; sessions expire by it
      // until the test's scope closes, then by the clock they had before.
      const clockReady = yield* Deferred.make<TestClock.TestClock>()
      yield* Effect.forkScoped(
        Effect.provide(Effect.flatMap(TestClock.testClock(), (c) => Deferred.succeed(clockReady, c)).pipe(Effect.zipRight(Effect.never)), TestContext.TestContext)
      )
      const testClock = yield* Deferred.await(clockReady)
      yield* testClock.setTime(Date.now())
      const checkoutClock = yield* CheckoutClock
      const before = yield* checkoutClock.current
      yield* Effect.acquireRelease(checkoutClock.use(testClock), () => checkoutClock.use(before))

      const { customer, accountName, session, origin } = yield* setUp(150_000, 60)
      const browser = yield* launchChromium
      const obs = yield* phonePage(browser, origin)
      const { page } = obs
      const html = yield* openHosted(obs, origin, session.hostedUrl)
      expect(yield* text(page, "#status")).toBe("Waiting for your transfer")

      yield* testClock.adjust(Duration.seconds(61))
      yield* waitForState(page, "expired")
      expect(yield* text(page, "#status")).toBe("This checkout has expired. Ask the merchant for a new link.")
      // Expired: neither the amount nor where to pay is shown any more, and the page stopped listening.
      expect(yield* visible(page, "#details")).toBe(false)
      expect(yield* visible(page, "#summary")).toBe(false)
      expect(yield* pw("the live state", () => page.locator("body").getAttribute("data-live"))).toBe("closed")
      expect(obs.navigations()).toBe(1)
      yield* screenshot(page, "checkout-expired.png")
      // The session is gone for everyone now.
      expect((yield* call("GET", session.snapshotUrl)).status).toBe(404)
      yield* assertPrivateAndSelfContained(obs, origin, session, customer, html, accountName)
      // Opened again, the dead link is a page a payer can read (not JSON), naming nobody.
      const again = yield* pw("reloading the expired link", () => page.reload({ waitUntil: "load", timeout: NAVIGATION_TIMEOUT_MS }))
      yield* expectGonePage(page, again)
      const gone = (yield* text(page, "body")).toLowerCase()
      for (const needle of [accountName, customer.name, customer.accountRef]) expect(gone).not.toContain(needle.toLowerCase())
      yield* screenshot(page, "checkout-link-expired.png")
    }))

  it.scoped("an unknown link is a readable, accessible page for a browser (and problem+json for an API client)", () =>
    Effect.gen(function* () {
      const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const browser = yield* launchChromium
      const { page } = yield* phonePage(browser, origin)
      const url = `/checkout/chk_${crypto.randomBytes(32).toString("base64url")}`
      const response = yield* open(page, `${origin}${url}`, "opening an unknown link")
      yield* expectGonePage(page, response)
      yield* axe(page, "the page of an unknown checkout link")
      const api = yield* call("GET", url, { headers: { accept: "application/json" } })
      expect(api.status).toBe(404)
      expect(api.contentType).toMatch(/^application\/problem\+json/)
    }))
})
