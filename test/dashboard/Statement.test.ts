import { expect, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import type { Page } from "playwright-core"
import { launchChromium, pw } from "../support/Browser.js"
import { expectStatus, inviteAndLogin } from "../support/ApiHelpers.js"
import { createAccount, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertSelfContained, axe, click, go, heading, openContext, ownerWithTestToken, shot, signIn, text } from "./Driver.js"

/**
 * An account's statement and the tenant's events in the dashboard (Debian's chromium against the real service): two
 * deposits and a hold, the statement's opening and closing figures and its movements as the API answers them, the CSV
 * downloaded by the button and parsed back to the same figures (and the same bytes as the API's CSV); the Events page
 * newest first with "Load more", filtered by type, a payload opened; a Member is not offered the page and gets the
 * API's 403 once by its address. axe-core on both views; docs/screenshots/dashboard-statement.png and -events.png.
 */

/** Today in Lagos (WAT, UTC+1 all year), as the dashboard's default range ends. */
const lagosToday = () => new Date(Date.now() + 3_600_000).toISOString().slice(0, 10)


const attr = (page: Page, selector: string, name: string) => pw(`${name} of ${selector}`, () => page.locator(selector).first().getAttribute(name))
const rowIds = (page: Page) => pw("event rows", () => page.locator("tr.event").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id"))))

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("the statement and the events in the dashboard", (it) => {
  it.scoped("a statement with deposits and a hold, its CSV downloaded and parsed; the events page; a Member's 403", () =>
    Effect.gen(function* () {
      const origin = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const { email, tenantId, owner, token } = yield* ownerWithTestToken("Eze Foods Ltd")

      // ₦2,000 and ₦1,500 paid in; ₦500 of the first held.
      yield* createAccount(token, "stm-web", "Ngozi Eze", 500_000)
      for (const amountKobo of [200_000, 150_000]) {
        expectStatus(yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token, json: { accountRef: "stm-web", amountKobo, senderName: "NGOZI EZE" } }), 200)
        yield* waitForTransactions(tenantId, amountKobo === 200_000 ? 1 : 2)
      }
      const txs = yield* call("GET", "/api/v1/transactions?accountRef=stm-web", { token })
      const refs = (txs.body.data as Array<{ reference: string; amountKobo: number }>)
      const first = refs.find((t) => t.amountKobo === 200_000)!.reference
      expectStatus(yield* call("POST", `/api/v1/settlements/${first}/hold`, { token, json: { amountKobo: 50_000, reason: "disputed" } }), 200)
      // 25 changes to another account: 25 virtual_account.updated events, so the events take two pages.
      yield* createAccount(token, "ev-other", "Bola Ade")
      for (let i = 1; i <= 25; i++) expectStatus(yield* call("PATCH", "/api/v1/virtual-accounts/ev-other", { token, json: { name: `Bola Ade ${i}` } }), 200)

      // The statement the dashboard shows by default: this month in Lagos.
      const to = lagosToday()
      const from = `${to.slice(0, 8)}01`
      const range = `from=${from}&to=${to}`
      const stmt = (yield* call("GET", `/api/v1/virtual-accounts/stm-web/statement?${range}`, { token })).body
      expect(stmt.closing).toEqual({ balanceKobo: 350_000, freeKobo: 300_000, heldKobo: 50_000 })
      expect(stmt.movements.map((m: any) => m.reason)).toEqual(["deposit", "deposit", "hold"])

      const browser = yield* launchChromium
      const obs = yield* openContext(browser, origin)
      const { page } = obs
      yield* signIn(page, origin, email)
      yield* go(page, "#/accounts/stm-web")
      yield* heading(page, "Virtual account stm-web")
      yield* pw("the statement", () => page.locator("#statement-closing").waitFor())
      expect(yield* pw("from", () => page.locator('[name="statement-from"]').inputValue())).toBe(from)
      expect(yield* pw("to", () => page.locator('[name="statement-to"]').inputValue())).toBe(to)
      expect(yield* attr(page, "#statement-opening", "data-balance")).toBe(String(stmt.opening.balanceKobo))
      expect(yield* text(page, "#statement-opening")).toMatch(/^₦0\.00/)
      expect(yield* attr(page, "#statement-closing", "data-balance")).toBe("350000")
      expect(yield* attr(page, "#statement-closing", "data-held")).toBe("50000")
      expect(yield* text(page, "#statement-closing")).toBe("₦3,500.00 (free ₦3,000.00, held ₦500.00)")
      const rows = yield* pw("movements", () => page.locator("tr.movement").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => (td as { innerText: string }).innerText))))
      expect(rows.map((r) => r.slice(1))).toEqual(stmt.movements.map((m: any, i: number) => [
        m.reason, m.reference, ["₦2,000.00", "₦1,500.00", "₦0.00"][i], ["₦2,000.00", "₦3,500.00", "₦3,500.00"][i], ["₦0.00", "₦0.00", "₦500.00"][i]
      ]))
      yield* axe(page, "statement")
      yield* shot(page, "statement")

      // Download CSV: the file the API answers with Accept: text/csv, named for the account and the dates.
      const download = yield* pw("download", async () => {
        const waiting = page.waitForEvent("download")
        await page.getByRole("button", { name: "Download CSV" }).click()
        return waiting
      })
      expect(download.suggestedFilename()).toBe(`statement-stm-web-${from}-${to}.csv`)
      const file = yield* pw("the downloaded file", () => download.path())
      const csv = fs.readFileSync(file, "utf8")
      const api = yield* call("GET", `/api/v1/virtual-accounts/stm-web/statement?${range}`, { token, headers: { accept: "text/csv" } })
      expect(csv).toBe(String(api.body))
      const lines = parse(csv, { columns: true, cast: false }) as Array<Record<string, string>>
      expect(lines.map((l) => l.reason)).toEqual(["opening_balance", "deposit", "deposit", "hold", "closing_balance"])
      expect(Number(lines[0]!.balance_kobo)).toBe(stmt.opening.balanceKobo)
      lines.slice(1, -1).forEach((l, i) => {
        const m = stmt.movements[i]
        expect([l.date, l.reference, l.journal_id]).toEqual([m.createdAt, m.reference, m.journalId])
        expect([l.amount_kobo, l.balance_kobo, l.free_balance_kobo, l.held_balance_kobo].map(Number)).toEqual([m.amountKobo, m.balanceKobo, m.freeBalanceKobo, m.heldBalanceKobo])
      })
      const closing = lines.at(-1)!
      expect([closing.balance_kobo, closing.free_balance_kobo, closing.held_balance_kobo].map(Number)).toEqual([350_000, 300_000, 50_000])

      // Events: linked for the Owner, newest first, 25 a page and "Load more" for the rest.
      const all = (yield* call("GET", "/api/v1/events?take=100", { token })).body.data as Array<{ id: string; type: string; data: any }>
      expect(all).toHaveLength(27)
      yield* pw("the Events link", () => page.locator("#nav a", { hasText: /^Events$/ }).click())
      yield* heading(page, "Events")
      yield* pw("a page of events", () => page.locator("tr.event").nth(24).waitFor())
      expect(yield* rowIds(page)).toEqual(all.slice(0, 25).map((e) => e.id))
      yield* click(page, "Load more")
      yield* pw("the rest", () => page.locator("tr.event").nth(26).waitFor())
      expect(yield* rowIds(page)).toEqual(all.map((e) => e.id))
      expect(yield* pw("no more", () => page.getByRole("button", { name: "Load more" }).count())).toBe(0)

      // Filtered by type: the two deposits; one's payload opened is the event as the API answers it.
      yield* pw("filter", () => page.locator('select[name="event-type"]').selectOption("deposit.reconciled"))
      yield* pw("filtered", () => page.waitForFunction(() => {
        const rows = (globalThis as any).document.querySelectorAll("tr.event")
        return rows.length === 2 && [...rows].every((r: any) => r.getAttribute("data-type") === "deposit.reconciled")
      }))
      const deposits = all.filter((e) => e.type === "deposit.reconciled")
      expect(yield* rowIds(page)).toEqual(deposits.map((e) => e.id))
      const row = page.locator(`tr.event[data-id="${deposits[1]!.id}"]`)
      yield* pw("open the payload", () => row.locator("summary").click())
      const shown = JSON.parse(yield* pw("the payload", () => row.locator("pre").innerText()))
      expect(shown).toEqual((yield* call("GET", `/api/v1/events/${deposits[1]!.id}`, { token })).body)
      expect(shown.data.transaction.reference).toBe(first)
      expect(yield* pw("the row", () => row.innerText())).toContain("₦2,000.00")
      yield* axe(page, "events")
      yield* shot(page, "events")
      assertSelfContained(obs, origin)

      // A Member: no Events link; by its address, the API's 403 once.
      const member = yield* inviteAndLogin(owner, "Member", crypto.randomBytes(3).toString("hex"))
      const m = yield* openContext(browser, origin)
      yield* signIn(m.page, origin, member.email, member.password)
      expect(yield* pw("nav", () => m.page.locator("#nav a").allInnerTexts())).not.toContain("Events")
      yield* go(m.page, "#/events")
      yield* heading(m.page, "Events")
      yield* pw("the 403", () => m.page.locator("[role=alert]").first().waitFor())
      yield* Effect.sleep("500 millis")
      expect(yield* pw("alerts", () => m.page.locator("[role=alert]").count())).toBe(1)
      expect(yield* text(m.page, "[role=alert]")).toMatch(/^Error 403: /)
      expect(yield* pw("no rows", () => m.page.locator("tr.event").count())).toBe(0)
    }), 180_000)
})
