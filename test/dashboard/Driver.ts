import { expect } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import * as crypto from "node:crypto"
import { expectStatus, OWNER_PASSWORD } from "../support/ApiHelpers.js"
import { open, pw, screenshot } from "../support/Browser.js"
import { apiToken, call } from "../support/TestApp.js"

/**
 * Driving the dashboard in Debian's chromium: a desktop or phone context on the service's origin whose every request,
 * console error and uncaught exception is recorded; axe-core injected (through the DevTools protocol, so the page's
 * CSP stays on) to check accessibility; screenshots into docs/screenshots/dashboard-*.png.
 */

export const DESKTOP = { viewport: { width: 1280, height: 900 } } as const
export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true } as const

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Observed {
  readonly page: Page
  readonly requests: Array<string>
  readonly errors: Array<string>
}

export const openContext = (browser: Browser, origin: string, size: typeof DESKTOP | typeof PHONE = DESKTOP) =>
  Effect.gen(function* () {
    const context = yield* Effect.acquireRelease(
      pw("new context", () => browser.newContext({ ...size, locale: "en-NG", timezoneId: "Africa/Lagos", serviceWorkers: "block" })),
      (c) => pw("closing context", () => c.close()).pipe(Effect.timeout("10 seconds"), Effect.ignore)
    )
    yield* pw("clipboard permissions", () => context.grantPermissions(["clipboard-read", "clipboard-write"], { origin }))
    context.setDefaultTimeout(30_000)
    const requests: Array<string> = []
    const errors: Array<string> = []
    context.on("request", (r) => requests.push(r.url()))
    const page = yield* pw("new page", () => context.newPage())
    page.on("console", (m) => {
      // A 4xx answer the page shows as an error box is logged by chromium as a failed resource; that is expected.
      if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`${m.text()} (${m.location().url})`)
    })
    page.on("pageerror", (e) => errors.push(e.message))
    page.on("dialog", (d) => void d.accept())
    return { page, requests, errors } satisfies Observed
  })

/** Every request stayed on the service's origin, and the page logged no error (a CSP violation would be one). */
export const assertSelfContained = (o: Observed, origin: string) => {
  expect(o.requests.length).toBeGreaterThan(0)
  for (const url of o.requests) expect(new URL(url).origin, url).toBe(new URL(origin).origin)
  expect(o.errors).toEqual([])
}

export const go = (page: Page, route: string) => pw(`going to ${route}`, () => page.evaluate(`location.hash = ${JSON.stringify(route)}`))

/** Waits for the page's heading. */
export const heading = (page: Page, text: string | RegExp) =>
  pw(`heading ${text}`, () => page.getByRole("heading", { level: 1, name: text }).waitFor())

export const fill = (page: Page, name: string, value: string) => pw(`filling ${name}`, () => page.locator(`[name="${name}"]`).fill(value))

export const click = (page: Page, name: string | RegExp) => pw(`clicking ${name}`, () => page.getByRole("button", { name, exact: typeof name === "string" }).first().click())

export const text = (page: Page, selector: string) => pw(`text of ${selector}`, () => page.locator(selector).first().innerText())

export const shot = (page: Page, name: string) => screenshot(page, `dashboard-${name}.png`)

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

/** axe-core over the page as it is: the serious and critical violations (none expected). */
export const axe = (page: Page, what: string) =>
  Effect.gen(function* () {
    const has = yield* pw("axe present", () => page.evaluate("typeof window.axe !== 'undefined'"))
    if (!has) yield* pw("injecting axe-core", () => page.evaluate(axeSource))
    const violations = (yield* pw(`axe on ${what}`, () =>
      page.evaluate("window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))")
    )) as ReadonlyArray<AxeViolation>
    const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    expect(bad.map((v) => `${what}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`)).toEqual([])
    return violations
  })

/** The page is no wider than the viewport (nothing scrolls sideways but tables in their own scroller). */
export const fitsWidth = (page: Page, width: number) =>
  Effect.map(pw("page width", () => page.evaluate("document.documentElement.scrollWidth")), (w) => expect(w).toBeLessThanOrEqual(width))

/** Opens the dashboard and signs in; done when Home shows. */
export const signIn = (page: Page, origin: string, email: string, password: string = OWNER_PASSWORD) =>
  Effect.gen(function* () {
    yield* open(page, `${origin}/dashboard`)
    yield* heading(page, "Sign in")
    yield* fill(page, "email", email)
    yield* fill(page, "password", password)
    yield* click(page, "Sign in")
    yield* heading(page, "Home")
  })

/** A new tenant signed up through the API: its Owner's e-mail and dashboard token, and a test API token. */
export const ownerWithTestToken = (businessName: string) =>
  Effect.gen(function* () {
    const email = `o-${crypto.randomBytes(4).toString("hex")}@example.ng`
    const signup = yield* call("POST", "/api/v1/dashboard/signup", { json: { businessName, email, password: OWNER_PASSWORD } })
    expectStatus(signup, 201)
    const owner = signup.body.accessToken as string
    const { token } = yield* apiToken(owner, "test")
    return { email, tenantId: signup.body.tenantId as string, owner, token }
  })
