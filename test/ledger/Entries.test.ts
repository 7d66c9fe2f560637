import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { approve, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { apiToken, call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, fund, testTenant } from "../transfers/support.js"

// GET /api/v1/ledger/entries (DESIGN.md "Reading the ledger, events and statements"; docs/ledger.md): newest first,
// paged, filtered by account and range, account names by accountRef, tenant and mode isolation.

const ENTRIES = "/api/v1/ledger/entries"

interface Entry { id: string; journalId: string; account: string; amountKobo: number; reason: string; reference: string; createdAt: string }

/** Every entry a token sees, page by page (`take` each), following `startingAfter`. */
const allPages = (token: string, take: number, query = "") =>
  Effect.gen(function* () {
    const seen: Array<Entry> = []
    let after: string | undefined
    for (let page = 0; page < 50; page++) {
      const r = yield* call("GET", `${ENTRIES}?take=${take}${query}${after ? `&startingAfter=${after}` : ""}`, { token })
      expectStatus(r, 200)
      seen.push(...r.body.data)
      expect(r.body.data.length).toBeLessThanOrEqual(take)
      if (!r.body.hasMore) return seen
      after = r.body.data.at(-1).id
    }
    throw new Error("more than 50 pages")
  })

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("ledger entries", (it) => {
  it.effect("newest first, paged without gaps or repeats, account names by accountRef, reasons and references; filters by account and range", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const a = yield* fund(t, "le-1", [10_000, 20_000])
      const b = yield* fund(t, "le-2", [5_000])
      const hold = yield* call("POST", `/api/v1/settlements/${a.references[0]}/hold`, { token: t.token, json: { amountKobo: 4_000 } })
      expectStatus(hold, 200)

      const first = yield* call("GET", ENTRIES, { token: t.token })
      expectStatus(first, 200)
      const all = first.body.data as Array<Entry>
      expect(first.body.hasMore).toBe(false)
      // Three credits (provider_clearing and customer_funds each) and a hold (customer_funds to escrow).
      expect(all).toHaveLength(8)
      for (let i = 1; i < all.length; i++) {
        const [prev, cur] = [all[i - 1]!, all[i]!]
        expect(prev.createdAt >= cur.createdAt).toBe(true)
        if (prev.createdAt === cur.createdAt) expect(prev.id).not.toBe(cur.id)
      }
      expect(all.some((e) => e.account.includes("va_"))).toBe(false)
      // Ids are opaque (a keyed permutation of the row id): nothing tells how many entries the service holds.
      for (const e of all) expect(e.id).toMatch(/^le_[A-Za-z0-9_-]{22}$/)
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length)
      expect(all.slice(0, 2).map((e) => [e.journalId, e.account, e.amountKobo, e.reason, e.reference]).sort()).toEqual([
        [`hold:${a.references[0]}:1`, "customer_funds:le-1", 4_000, "hold", a.references[0]],
        [`hold:${a.references[0]}:1`, "escrow:le-1", -4_000, "hold", a.references[0]]
      ])
      expect(all.filter((e) => e.reason === "deposit").map((e) => e.account).sort()).toEqual([
        "customer_funds:le-1", "customer_funds:le-1", "customer_funds:le-2", "provider_clearing", "provider_clearing", "provider_clearing"
      ])
      expect(all.find((e) => e.account === "customer_funds:le-2")).toMatchObject({ amountKobo: -5_000, reference: b.references[0], journalId: `txn:${b.references[0]}` })
      // Each journal sums to zero.
      const journals = new Map<string, number>()
      for (const e of all) journals.set(e.journalId, (journals.get(e.journalId) ?? 0) + e.amountKobo)
      expect([...journals.values()].every((v) => v === 0)).toBe(true)

      // Paging: the same entries in the same order, whatever the page size.
      for (const take of [1, 3, 5]) expect((yield* allPages(t.token, take)).map((e) => e.id)).toEqual(all.map((e) => e.id))
      const two = yield* call("GET", `${ENTRIES}?take=2`, { token: t.token })
      expect(two.body).toMatchObject({ hasMore: true })
      expect(two.body.data).toEqual(all.slice(0, 2))

      // One account's entries: its ledger accounts only.
      const le1 = (yield* call("GET", `${ENTRIES}?accountRef=le-1`, { token: t.token })).body.data as Array<Entry>
      expect(le1.map((e) => e.account).sort()).toEqual(["customer_funds:le-1", "customer_funds:le-1", "customer_funds:le-1", "escrow:le-1"])
      expect((yield* allPages(t.token, 1, "&accountRef=le-2")).map((e) => e.amountKobo)).toEqual([-5_000])

      // Ranges: from inclusive, to exclusive; a date is a Lagos day.
      const holdAt = all[0]!.createdAt
      const since = (yield* call("GET", `${ENTRIES}?from=${encodeURIComponent(holdAt)}`, { token: t.token })).body.data as Array<Entry>
      expect(since.map((e) => e.reason)).toEqual(["hold", "hold"])
      const until = (yield* call("GET", `${ENTRIES}?to=${encodeURIComponent(holdAt)}`, { token: t.token })).body.data as Array<Entry>
      expect(until.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id))
      expect((yield* call("GET", `${ENTRIES}?to=2000-01-01`, { token: t.token })).body).toEqual({ data: [], hasMore: false })
      const today = new Date(Date.now() + 3_600_000).toISOString().slice(0, 10)
      expect((yield* call("GET", `${ENTRIES}?from=${today}&to=${today}`, { token: t.token })).body.data).toHaveLength(8)

      // Refusals: problem+json 4xx, never a 500.
      expectProblem(yield* call("GET", `${ENTRIES}?accountRef=nope`, { token: t.token }), 404, "virtual_account_not_found")
      expectProblem(yield* call("GET", `${ENTRIES}?startingAfter=nope`, { token: t.token }), 400, "unknown_starting_after")
      expectProblem(yield* call("GET", `${ENTRIES}?startingAfter=99999999999999999999`, { token: t.token }), 400, "unknown_starting_after")
      const tampered = all[0]!.id.slice(0, -2) + (all[0]!.id.endsWith("AA") ? "AB" : "AA")
      for (const forged of [tampered, "le_AAAAAAAAAAAAAAAAAAAAAA", "le_", "le_!!"]) {
        expectProblem(yield* call("GET", `${ENTRIES}?startingAfter=${encodeURIComponent(forged)}`, { token: t.token }), 400, "unknown_starting_after")
      }
      for (const q of ["from=soon", "to=2026-13-01", "take=0", "take=abc", "from=2026-05-02&to=2026-05-01"]) {
        expectProblem(yield* call("GET", `${ENTRIES}?${q}`, { token: t.token }), 400, "validation_failed")
      }
      expectProblem(yield* call("GET", `${ENTRIES}?acountRef=le-1`, { token: t.token }), 400, "unknown_parameter")
      expectProblem(yield* call("GET", ENTRIES), 401, "missing_token")
      yield* assertLedgerInvariant
    }))

  it.effect("tenants and modes are separate books: another tenant and a live token see none of test's entries, nor their page keys", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "iso-1", [12_345])
      const mine = (yield* call("GET", ENTRIES, { token: t.token })).body.data as Array<Entry>
      expect(mine).toHaveLength(2)

      const other = yield* testTenant
      expect((yield* call("GET", ENTRIES, { token: other.token })).body).toEqual({ data: [], hasMore: false })
      expectProblem(yield* call("GET", `${ENTRIES}?startingAfter=${mine[0]!.id}`, { token: other.token }), 400, "unknown_starting_after")
      expectProblem(yield* call("GET", `${ENTRIES}?accountRef=iso-1`, { token: other.token }), 404, "virtual_account_not_found")

      // Live: the owner's dashboard token and a live API key see nothing of test, and test nothing of live.
      expect((yield* call("GET", ENTRIES, { token: t.ownerToken })).body).toEqual({ data: [], hasMore: false })
      yield* approve(t.tenantId)
      const live = yield* apiToken(t.ownerToken, "live")
      expect((yield* call("GET", ENTRIES, { token: live.token })).body).toEqual({ data: [], hasMore: false })
      expectProblem(yield* call("GET", `${ENTRIES}?accountRef=iso-1`, { token: live.token }), 404, "virtual_account_not_found")
      expectProblem(yield* call("GET", `${ENTRIES}?startingAfter=${mine[0]!.id}`, { token: live.token }), 400, "unknown_starting_after")
      // A live deposit lands in live's book only.
      const acct = yield* createAccount(live.token, "iso-live", "Live Payer")
      const provider = yield* call("GET", "/api/v1/dashboard/provider", { token: t.ownerToken })
      expectStatus(provider, 200)
      const sent = yield* sendSigned({ merchantId: provider.body.merchantId, webhookSecret: provider.body.webhookSecret }, { accountNumber: acct.nuban, amountKobo: 9_900 })
      expect(sent.status).toBe(200)
      yield* waitForTransactions(t.tenantId, 2)
      const liveEntries = yield* waitFor("the live deposit in live's book", Effect.map(call("GET", ENTRIES, { token: live.token }), (r) => r.body.data as Array<Entry>), {
        until: (d) => d.length === 2, timeoutMs: 30_000
      })
      expect(liveEntries.map((e) => e.account).sort()).toEqual(["customer_funds:iso-live", "provider_clearing"])
      expect((yield* call("GET", ENTRIES, { token: t.token })).body.data.map((e: Entry) => e.id)).toEqual(mine.map((e) => e.id))
      yield* assertLedgerInvariant
    }))
})
