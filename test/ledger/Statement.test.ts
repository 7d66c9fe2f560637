import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, DIRECTORY, fund, type MoneyTenant, testTenant, waitForTransfer } from "../transfers/support.js"

// A virtual account's statement (DESIGN.md "Reading the ledger, events and statements"; docs/ledger.md) over a real
// scenario: three credits, a late reversal, a refund of surplus, a hold and a settlement, on real Postgres and NATS.

const sql = SqlClient.SqlClient

/** The bank takes back `amountKobo` of deposit `reversed`; waits until reconciled. */
const reverse = (t: MoneyTenant, nuban: string, reversed: string, amountKobo: number) =>
  Effect.gen(function* () {
    const [{ n }] = (yield* Effect.flatMap(sql, (s) => s<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`)) as unknown as [{ n: number }]
    const sent = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: nuban, amountKobo, reversedSessionId: reversed, senderName: null })
    expect(sent.status).toBe(200)
    yield* waitForTransactions(t.tenantId, n + 1)
  }).pipe(Effect.orDie)

/** The money the ledger holds for the account (customer_funds + escrow + review_pending), straight from its entries. */
const heldInLedger = (t: MoneyTenant, accountRef: string) =>
  Effect.flatMap(sql, (s) => s<{ total: number }>`SELECT COALESCE(-sum(e.amount_kobo), 0)::bigint AS total FROM ledger_entries e
    JOIN virtual_accounts va ON e.account IN ('customer_funds:' || va.id, 'escrow:' || va.id, 'review_pending:' || va.id)
    WHERE va.tenant_id = ${t.tenantId} AND va.account_ref = ${accountRef} AND e.tenant_id = ${t.tenantId} AND e.mode = 'test'`).pipe(
    Effect.map((rows) => rows[0]!.total),
    Effect.orDie
  )

const sum = (xs: ReadonlyArray<{ amountKobo: number }>) => xs.reduce((s, m) => s + m.amountKobo, 0)

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("statements", (it) => {
  it.effect("credits, a reversal, a refund, a hold and a settlement: opening + movements = closing to the kobo, and the CSV parses back to the same figures", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // Due 60,000; paid 50,000 + 20,000 + 30,000 = 100,000 (overpaid 40,000).
      const { account, references } = yield* fund(t, "stm-1", [50_000, 20_000, 30_000], { expected: 60_000 })
      const [first, second, third] = references as [string, string, string]
      // The bank takes the second credit back: 80,000 paid, 20,000 over.
      yield* reverse(t, account.nuban, second, 20_000)
      // The third deposit's surplus is refunded, as far as the account is still overpaid: 20,000.
      const refund = yield* call("POST", `/api/v1/transactions/${third}/refund`, { token: t.testOwnerToken })
      expectStatus(refund, 200)
      expect(refund.body.amountKobo).toBe(20_000)
      expect((yield* waitForTransfer(t.token, `rfd_${third}`)).status).toBe("Successful")
      // 10,000 of the first deposit held; the rest of the free money (50,000) settled to the tenant's account.
      expectStatus(yield* call("POST", `/api/v1/settlements/${first}/hold`, { token: t.token, json: { amountKobo: 10_000 } }), 200)
      expectStatus(yield* call("PUT", "/api/v1/settings/settlement", {
        token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }
      }), 200)
      const run = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      expectStatus(run, 200)
      expect(run.body.settledCount).toBe(1)

      const r = yield* call("GET", "/api/v1/virtual-accounts/stm-1/statement", { token: t.token })
      expectStatus(r, 200)
      const s = r.body
      expect(s).toMatchObject({ accountRef: "stm-1", nuban: account.nuban, from: null, opening: { balanceKobo: 0, freeKobo: 0, heldKobo: 0 } })
      expect(s.movements.map((m: any) => [m.reason, m.reference, m.amountKobo, m.freeChangeKobo, m.heldChangeKobo])).toEqual([
        ["deposit", first, 50_000, 50_000, 0],
        ["deposit", second, 20_000, 20_000, 0],
        ["deposit", third, 30_000, 30_000, 0],
        ["reversal", expect.any(String), -20_000, -20_000, 0],
        ["refund", `rfd_${third}`, -20_000, -20_000, 0],
        ["hold", first, 0, -10_000, 10_000],
        ["settlement", expect.stringMatching(/^set_/), -50_000, -50_000, 0]
      ])
      expect(s.closing).toEqual({ balanceKobo: 10_000, freeKobo: 0, heldKobo: 10_000 })
      expect(s.opening.balanceKobo + sum(s.movements)).toBe(s.closing.balanceKobo)
      expect(s.closing.balanceKobo).toBe(yield* heldInLedger(t, "stm-1"))
      // Running figures: each line's balance is the one before plus its amount.
      let running = s.opening.balanceKobo
      for (const m of s.movements) {
        running += m.amountKobo
        expect(m.balanceKobo).toBe(running)
        expect(m.freeBalanceKobo + m.heldBalanceKobo).toBe(m.balanceKobo)
      }

      // From the reversal on: the opening is the balance before it, and the figures still add up.
      const reversalAt = s.movements[3].createdAt as string
      const part = (yield* call("GET", `/api/v1/virtual-accounts/stm-1/statement?from=${encodeURIComponent(reversalAt)}`, { token: t.token })).body
      expect(part.from).toBe(reversalAt)
      expect(part.opening.balanceKobo).toBe(s.movements[2].balanceKobo)
      expect(part.movements.map((m: any) => m.reason)).toEqual(["reversal", "refund", "hold", "settlement"])
      expect(part.opening.balanceKobo + sum(part.movements)).toBe(part.closing.balanceKobo)
      expect(part.closing).toEqual(s.closing)
      // Up to it (exclusive): its closing is the later statement's opening.
      const before = (yield* call("GET", `/api/v1/virtual-accounts/stm-1/statement?to=${encodeURIComponent(reversalAt)}`, { token: t.token })).body
      expect(before.movements).toHaveLength(3)
      expect(before.closing).toEqual(part.opening)

      // The same as CSV, through a real CSV parser.
      const csv = yield* call("GET", "/api/v1/virtual-accounts/stm-1/statement", { token: t.token, headers: { accept: "text/csv" } })
      expectStatus(csv, 200)
      expect(csv.contentType).toMatch(/^text\/csv/)
      expect(String(csv.body)).toContain("\r\n")
      const rows = parse(String(csv.body), { columns: true, cast: false }) as Array<Record<string, string>>
      expect(rows.map((row) => row.reason)).toEqual(["opening_balance", ...s.movements.map((m: any) => m.reason), "closing_balance"])
      expect(Number(rows[0]!.balance_kobo)).toBe(s.opening.balanceKobo)
      const lines = rows.slice(1, -1)
      lines.forEach((row, i) => {
        const m = s.movements[i]
        expect([row.date, row.reference, row.journal_id]).toEqual([m.createdAt, m.reference, m.journalId])
        expect([row.amount_kobo, row.free_change_kobo, row.held_change_kobo, row.balance_kobo, row.free_balance_kobo, row.held_balance_kobo].map(Number))
          .toEqual([m.amountKobo, m.freeChangeKobo, m.heldChangeKobo, m.balanceKobo, m.freeBalanceKobo, m.heldBalanceKobo])
      })
      expect(rows[1]!.amount_naira).toBe("500.00")
      const closing = rows.at(-1)!
      expect([closing.balance_kobo, closing.free_balance_kobo, closing.held_balance_kobo].map(Number)).toEqual([10_000, 0, 10_000])
      expect(Number(rows[0]!.balance_kobo) + lines.reduce((acc, row) => acc + Number(row.amount_kobo), 0)).toBe(Number(closing.balance_kobo))
      yield* assertLedgerInvariant
    }))

  it.effect("bad ranges are 400s, an unknown account 404, another tenant's account 404, and live sees none of test", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "stm-2", [7_500])
      const url = "/api/v1/virtual-accounts/stm-2/statement"
      for (const q of ["from=yesterday", "to=2026-02-30", "from=2026-05-01T10:00:00", "from=2026-05-02&to=2026-05-01"]) {
        expectProblem(yield* call("GET", `${url}?${q}`, { token: t.token }), 400, "validation_failed")
      }
      expectProblem(yield* call("GET", `${url}?form=2026-05-01`, { token: t.token }), 400, "unknown_parameter")
      expectProblem(yield* call("GET", "/api/v1/virtual-accounts/nope/statement", { token: t.token }), 404, "virtual_account_not_found")
      const other = yield* testTenant
      expectProblem(yield* call("GET", url, { token: other.token }), 404, "virtual_account_not_found")
      // The owner's dashboard token acts in live mode: test's account is not there.
      expectProblem(yield* call("GET", url, { token: t.ownerToken }), 404, "virtual_account_not_found")
      // A date is a Lagos day, `to` included: today's deposit is in today's statement.
      const today = new Date(Date.now() + 3_600_000).toISOString().slice(0, 10)
      const day = (yield* call("GET", `${url}?from=${today}&to=${today}`, { token: t.token })).body
      expect(day.movements.map((m: any) => m.amountKobo)).toEqual([7_500])
      expect(day.closing.balanceKobo).toBe(7_500)
      const future = (yield* call("GET", `${url}?from=2999-01-01`, { token: t.token })).body
      expect(future).toMatchObject({ opening: { balanceKobo: 7_500 }, movements: [], closing: { balanceKobo: 7_500 } })
    }))
})
