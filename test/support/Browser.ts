import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"

/**
 * A real browser for tests: Debian's `chromium` (`.ci/run` installs it when absent) driven by `playwright-core`, which
 * never downloads a browser of its own. Everything is scoped: the browser and each context close with the test's scope,
 * so a failing test leaves no chromium behind.
 */

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** Where the tests' screenshots go (committed: they show what a payer sees). */
export const SCREENSHOTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/screenshots")

const attempt = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (e) => new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`) }).pipe(Effect.orDie)

/** Headless chromium, closed (bounded) when the scope closes. */
export const launchChromium = Effect.acquireRelease(
  attempt("launching chromium", () => chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, timeout: 30_000 })),
  (browser) => attempt("closing chromium", () => browser.close()).pipe(Effect.timeout("10 seconds"), Effect.ignore)
)

/** A phone: the viewport and touch of a mid-size handset at twice the pixel density. */
export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true } as const

export interface ObservedPage {
  readonly context: BrowserContext
  readonly page: Page
  /** Every request the page made (documents, scripts, images, fetch, EventSource...), in order. */
  readonly requests: Array<{ readonly url: string; readonly resourceType: string }>
  /** How many times the main frame navigated (1 after the first load; more means a reload or a redirect). */
  readonly navigations: () => number
  /** Messages of the page's console errors and uncaught exceptions (a CSP violation is reported there too). */
  readonly errors: Array<string>
}

/**
 * A fresh phone-sized context on `origin`, with clipboard permissions for that origin, and a page whose requests,
 * navigations and errors are recorded. Closed when the scope closes.
 */
export const phonePage = (browser: Browser, origin: string) =>
  Effect.gen(function* () {
    const context = yield* Effect.acquireRelease(
      attempt("new context", () => browser.newContext({ ...PHONE, locale: "en-NG", timezoneId: "Africa/Lagos", serviceWorkers: "block" })),
      (c) => attempt("closing context", () => c.close()).pipe(Effect.timeout("10 seconds"), Effect.ignore)
    )
    yield* attempt("clipboard permissions", () => context.grantPermissions(["clipboard-read", "clipboard-write"], { origin }))
    context.setDefaultTimeout(10_000)
    const requests: Array<{ url: string; resourceType: string }> = []
    const errors: Array<string> = []
    let navigations = 0
    context.on("request", (r) => requests.push({ url: r.url(), resourceType: r.resourceType() }))
    const page = yield* attempt("new page", () => context.newPage())
    page.on("framenavigated", (f) => {
      if (f === page.mainFrame()) navigations++
    })
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`${m.text()} (${m.location().url})`)
    })
    page.on("pageerror", (e) => errors.push(e.message))
    return { context, page, requests, navigations: () => navigations, errors } satisfies ObservedPage
  })

/** Runs a Playwright call as an Effect (a failure is a defect carrying Playwright's message). */
export const pw = attempt

/**
 * How long a navigation may take. Not a speed check: a fresh browser's first load on a loaded CI box (chromium starting
 * its renderer, the dashboard's 700 KB script compiled while a hundred test files share two cores) once took over the
 * 15 s a context allows by default, and failed a whole CI run.
 */
export const NAVIGATION_TIMEOUT_MS = 60_000

/** Opens `url` in `page` and waits for its load event; the answer (for its status and headers). */
export const open = (page: Page, url: string, what = `opening ${url}`) =>
  attempt(what, () => page.goto(url, { waitUntil: "load", timeout: NAVIGATION_TIMEOUT_MS }))

/** Saves a screenshot of the page as `docs/screenshots/<name>`. */
export const screenshot = (page: Page, name: string) =>
  attempt(`screenshot ${name}`, async () => {
    fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, name), fullPage: true, animations: "disabled", caret: "hide" })
  })
