import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectStatus } from "../support/ApiHelpers.js"
import { sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, testTenant, waitForTransfer } from "./support.js"

// Late reversals as DESIGN.md fixes them ("Money movement", Late reversals): the provider takes back a credit after we
// counted it (the sandbox's `transfer.reversal` with `reversedSessionId`). The reversed amount comes first from the
// deposit's hold in escrow, then from the account's free money, and only the rest becomes tenant_receivable; a
// receivable is recovered from the tenant's next free collections, oldest first, before they count as available; and
// settlement pays nothing out while it is above zero. Real HTTP, signed webhooks, Postgres and the sandbox bank.

const sql = SqlClient.SqlClient

const transactionCount = (t: MoneyTenant) =>
  Effect.flatMap(sql, (s) => s<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

/** The bank takes back `amountKobo` of deposit `reversed` on `nuban`; waits until it is reconciled. Its reference. */
const reverse = (t: MoneyTenant, nuban: string, reversed: string, amountKobo: number) =>
  Effect.gen(function* () {
    const before = yield* transactionCount(t)
    const sent = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: nuban, amountKobo, reversedSessionId: reversed, senderName: null })
    expect(sent.status).toBe(200)
    yield* waitForTransactions(t.tenantId, before + 1)
    return sent.sessionId
  })

/** Deposits into an account of its own (an open one), as a new collection of the tenant. */
const collect = (t: MoneyTenant, accountRef: string, amountKobo: number) => fund(t, accountRef, [amountKobo])

/** The three figures each scenario ends on (GET /balance), exactly. */
const figures = (t: MoneyTenant) =>
  Effect.map(balanceOf(t.token), (b) => ({ availableKobo: b.availableKobo, heldKobo: b.heldKobo, receivableKobo: b.receivableKobo }))

const vaId = (t: MoneyTenant, accountRef: string) =>
  Effect.flatMap(sql, (s) => s<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = ${accountRef}`).pipe(
    Effect.map((rows) => rows[0]!.id),
    Effect.orDie
  )

/** A journal's legs, as posted (netted per account), by account name. */
const journal = (t: MoneyTenant, journalId: string) =>
  Effect.flatMap(sql, (s) => s<{ account: string; amountKobo: number }>`SELECT account, amount_kobo FROM ledger_entries
    WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND journal_id = ${journalId} ORDER BY account`).pipe(
    Effect.map((rows) => rows.map((r) => ({ account: r.account, amountKobo: r.amountKobo }))),
    Effect.orDie
  )

const holdOf = (t: MoneyTenant, reference: string) =>
  Effect.flatMap(sql, (s) => s<{ status: string; heldKobo: number }>`SELECT status, held_kobo FROM holds WHERE tenant_id = ${t.tenantId} AND reference = ${reference}`).pipe(
    Effect.map((rows) => rows[0]),
    Effect.orDie
  )

/** The tenant's flag the deposit path reads instead of the receivable. */
const owingModes = (t: MoneyTenant) =>
  Effect.flatMap(sql, (s) => s<{ modes: ReadonlyArray<string> }>`SELECT receivable_modes AS modes FROM tenants WHERE id = ${t.tenantId}`).pipe(
    Effect.map((rows) => [...rows[0]!.modes]),
    Effect.orDie
  )

const hold = (t: MoneyTenant, reference: string, amountKobo?: number) =>
  Effect.map(call("POST", `/api/v1/settlements/${reference}/hold`, { token: t.token, ...(amountKobo ? { json: { amountKobo } } : {}) }), (r) => {
    expectStatus(r, 200)
    return r.body
  })

const payout = (t: MoneyTenant, merchantTxRef: string, amountKobo: number) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/transfers/bank", {
      token: t.token, json: { merchantTxRef, amountKobo, accountNumber: DIRECTORY.ibrahim.accountNumber, bankCode: DIRECTORY.ibrahim.bankCode }
    })
    expectStatus(r, 201)
    expect((yield* waitForTransfer(t.token, merchantTxRef)).status).toBe("Successful")
  })

const run = (t: MoneyTenant) =>
  Effect.map(call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken }), (r) => {
    expectStatus(r, 200)
    return r.body as { data: Array<any>; settledCount: number; skippedCount: number }
  })

const waitForPaid = (t: MoneyTenant, id: string) =>
  waitFor(
    `settlement ${id} to be Paid`,
    Effect.map(call("GET", "/api/v1/settlements?take=100", { token: t.token }), (r) => (r.body.data as Array<any>).find((s) => s.id === id)),
    { until: (s) => s?.status === "Paid", timeoutMs: 20_000 }
  )

const eventsOf = (t: MoneyTenant, type: string) =>
  Effect.flatMap(sql, (s) => s<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = ${type} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))),
    Effect.orDie
  )

layer(makeTestApp(), { timeout: 180_000, excludeTestServices: true })("late reversals", (it) => {
  it.effect("held: a reversal of a deposit held in escrow takes it out of its hold; nothing is owed, other money is untouched", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* collect(t, "lr1-other", 5_000)
      const { account, references: [deposit] } = yield* fund(t, "lr1", [30_000])
      expect(yield* hold(t, deposit!)).toMatchObject({ status: "Held", heldKobo: 30_000 })
      expect(yield* figures(t)).toEqual({ availableKobo: 5_000, heldKobo: 30_000, receivableKobo: 0 })

      const reversal = yield* reverse(t, account.nuban, deposit!, 30_000)
      const id = yield* vaId(t, "lr1")
      expect(yield* journal(t, `txn:${reversal}`)).toEqual([
        { account: `escrow:${id}`, amountKobo: 30_000 },
        { account: "provider_clearing", amountKobo: -30_000 }
      ])
      // The hold gave up everything it kept: it has ended, with nothing left to release.
      expect(yield* holdOf(t, deposit!)).toEqual({ status: "Released", heldKobo: 0 })
      expect((yield* call("GET", "/api/v1/virtual-accounts/lr1", { token: t.token })).body).toMatchObject({ amountPaidKobo: 0 })
      expect((yield* call("GET", `/api/v1/transactions/${deposit}`, { token: t.token })).body.status).toBe("Reversed")
      expect(yield* eventsOf(t, "reversal.receivable")).toEqual([])
      expect(yield* figures(t)).toEqual({ availableKobo: 5_000, heldKobo: 0, receivableKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("free: a reversal of a deposit whose money is still free takes it from the account's free money; nothing is owed", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* collect(t, "lr2-other", 5_000)
      const { account, references: [deposit] } = yield* fund(t, "lr2", [30_000])
      expect(yield* figures(t)).toEqual({ availableKobo: 35_000, heldKobo: 0, receivableKobo: 0 })

      const reversal = yield* reverse(t, account.nuban, deposit!, 30_000)
      const id = yield* vaId(t, "lr2")
      expect(yield* journal(t, `txn:${reversal}`)).toEqual([
        { account: `customer_funds:${id}`, amountKobo: 30_000 },
        { account: "provider_clearing", amountKobo: -30_000 }
      ])
      expect(yield* figures(t)).toEqual({ availableKobo: 5_000, heldKobo: 0, receivableKobo: 0 })
      expect(yield* owingModes(t)).toEqual([])
      yield* assertLedgerInvariant
    }))

  it.effect("already paid out: all of it becomes tenant_receivable (never left unposted), with a reversal.receivable event; an approved deposit pays it off", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { account, references: [deposit] } = yield* fund(t, "lr3", [30_000])
      yield* payout(t, "lr3-out", 30_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 0 })

      const reversal = yield* reverse(t, account.nuban, deposit!, 30_000)
      expect(yield* journal(t, `txn:${reversal}`)).toEqual([
        { account: "provider_clearing", amountKobo: -30_000 },
        { account: "tenant_receivable", amountKobo: 30_000 }
      ])
      const [event] = yield* eventsOf(t, "reversal.receivable")
      expect(event).toMatchObject({ receivableKobo: 30_000, transaction: { reference: reversal, accountRef: "lr3" } })
      expect(yield* owingModes(t)).toEqual(["test"])
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 30_000 })
      yield* assertLedgerInvariant

      // A deposit waiting for review is no free collection yet; approved, it pays off what is owed first.
      const before = yield* transactionCount(t)
      const unmatched = yield* sendSigned(t, { accountNumber: "0000014579", amountKobo: 12_000, senderName: "ADAEZE OKAFOR" })
      yield* waitForTransactions(t.tenantId, before + 1)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, receivableKobo: 30_000, pendingReviewKobo: 12_000 })
      const approved = yield* call("POST", `/api/v1/transactions/${unmatched.sessionId}/review`, { token: t.testOwnerToken, json: { decision: "approve", accountRef: "lr3" } })
      expectStatus(approved, 200)
      expect(yield* journal(t, `review:${unmatched.sessionId}`)).toEqual([
        { account: "suspense:unmatched", amountKobo: 12_000 },
        { account: "tenant_receivable", amountKobo: -12_000 }
      ])
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 18_000 })
      expect(yield* owingModes(t)).toEqual(["test"])
      yield* assertLedgerInvariant
    }))

  it.effect("partly each: held first, then free, the rest owed; new deposits pay it off, oldest first, and count as available only for the rest", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // 40,000 in: 10,000 of it held, 20,000 of the free 30,000 paid out, 10,000 still free.
      const { account, references: [deposit] } = yield* fund(t, "lr4", [40_000])
      yield* hold(t, deposit!, 10_000)
      yield* payout(t, "lr4-out", 20_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 10_000, heldKobo: 10_000, receivableKobo: 0 })

      // The bank takes the whole 40,000 back: more than the account still holds (20,000), the difference is owed.
      const reversal = yield* reverse(t, account.nuban, deposit!, 40_000)
      const id = yield* vaId(t, "lr4")
      expect(yield* journal(t, `txn:${reversal}`)).toEqual([
        { account: `customer_funds:${id}`, amountKobo: 10_000 },
        { account: `escrow:${id}`, amountKobo: 10_000 },
        { account: "provider_clearing", amountKobo: -40_000 },
        { account: "tenant_receivable", amountKobo: 20_000 }
      ])
      expect(yield* holdOf(t, deposit!)).toEqual({ status: "Released", heldKobo: 0 })
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 20_000 })
      yield* assertLedgerInvariant

      // New collections recover what is owed before they count: 8,000 all of it, then 15,000 the last 12,000 of it.
      const first = yield* collect(t, "lr4-next-1", 8_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 12_000 })
      expect(yield* journal(t, `txn:${first.references[0]}`)).toEqual([
        { account: "provider_clearing", amountKobo: 8_000 },
        { account: "tenant_receivable", amountKobo: -8_000 }
      ])
      const second = yield* collect(t, "lr4-next-2", 15_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 3_000, heldKobo: 0, receivableKobo: 0 })
      expect(yield* journal(t, `txn:${second.references[0]}`)).toEqual([
        { account: `customer_funds:${yield* vaId(t, "lr4-next-2")}`, amountKobo: -3_000 },
        { account: "provider_clearing", amountKobo: 15_000 },
        { account: "tenant_receivable", amountKobo: -12_000 }
      ])
      // Nothing is owed any more: the flag is down, and the next collection counts whole.
      expect(yield* owingModes(t)).toEqual([])
      yield* collect(t, "lr4-next-3", 4_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 7_000, heldKobo: 0, receivableKobo: 0 })
      // The accounts' own figures do not change: each deposit is paid in full on its account.
      expect((yield* call("GET", "/api/v1/virtual-accounts/lr4-next-2", { token: t.token })).body).toMatchObject({ amountPaidKobo: 15_000 })
      yield* assertLedgerInvariant
    }))

  it.effect("collections arriving together pay off what is owed between them before any of them counts as available", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { account, references: [deposit] } = yield* fund(t, "lr5", [25_000])
      yield* payout(t, "lr5-out", 25_000)
      yield* reverse(t, account.nuban, deposit!, 25_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 25_000 })
      // Several collections at once, into several accounts: whatever batches the reconciler makes of them, together
      // they pay the 25,000 off before any of them counts, and only the rest (35,000 - 25,000) is available.
      const accounts: Array<{ nuban: string }> = []
      for (const ref of ["lr5-a", "lr5-b", "lr5-c"]) {
        accounts.push(yield* call("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: ref, name: "Adaeze Okafor" } }).pipe(Effect.map((r) => r.body)))
      }
      const before = yield* transactionCount(t)
      yield* Effect.forEach([[0, 10_000], [1, 10_000], [2, 15_000]] as const, ([i, amountKobo]) =>
        sendSigned(t, { accountNumber: accounts[i]!.nuban, amountKobo, senderName: "ADAEZE OKAFOR" }), { concurrency: "unbounded" })
      yield* waitForTransactions(t.tenantId, before + 3)
      expect(yield* figures(t)).toEqual({ availableKobo: 10_000, heldKobo: 0, receivableKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("settlement pays nothing out while the tenant owes: the run skips with a reason; once collections clear it, the run pays", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      expectStatus(yield* call("PUT", "/api/v1/settings/settlement", {
        token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }
      }), 200)
      // 10,000 collected and settled; then 6,000 more into another account, still free.
      const { account, references: [settledDeposit] } = yield* fund(t, "ls-a", [10_000])
      const first = yield* run(t)
      expect(first.data).toMatchObject([{ accountRef: "ls-a", netKobo: 10_000 }])
      yield* waitForPaid(t, first.data[0].id)
      yield* collect(t, "ls-b", 6_000)

      // The bank takes the settled 10,000 back: the account holds none of it, all of it is owed.
      yield* reverse(t, account.nuban, settledDeposit!, 10_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 6_000, heldKobo: 0, receivableKobo: 10_000 })
      const transfersBefore = yield* Effect.flatMap(sql, (s) => s<{ n: number }>`SELECT count(*)::int AS n FROM transfers WHERE tenant_id = ${t.tenantId}`)

      // The run skips ls-b's 6,000, says why, and sends nothing.
      const skipped = yield* run(t)
      expect(skipped).toMatchObject({ settledCount: 0, skippedCount: 1 })
      expect(skipped.data).toMatchObject([{ accountRef: "ls-b", netKobo: 6_000, status: "Skipped", reasonCode: "receivable_outstanding", legs: [] }])
      expect(skipped.data[0].reason).toContain("owes 10000 kobo")
      expect((yield* eventsOf(t, "settlement.skipped")).map((e) => e.settlement.reasonCode)).toEqual(["receivable_outstanding"])
      expect(yield* Effect.flatMap(sql, (s) => s<{ n: number }>`SELECT count(*)::int AS n FROM transfers WHERE tenant_id = ${t.tenantId}`)).toEqual(transfersBefore)
      expect(yield* figures(t)).toEqual({ availableKobo: 6_000, heldKobo: 0, receivableKobo: 10_000 })
      yield* assertLedgerInvariant

      // 7,000 collected: all of it recovered, none of it available; still owing, the run still settles nothing.
      const { account: c } = yield* collect(t, "ls-c", 7_000)
      expect(yield* figures(t)).toEqual({ availableKobo: 6_000, heldKobo: 0, receivableKobo: 3_000 })
      const still = yield* run(t)
      expect(still).toMatchObject({ settledCount: 0 })
      expect(still.data.filter((s: any) => s.status !== "Skipped")).toEqual([])

      // 5,000 more: the last 3,000 owed, and 2,000 free. Cleared: the run pays ls-b and ls-c.
      const before = yield* transactionCount(t)
      expect((yield* sendSigned(t, { accountNumber: c.nuban, amountKobo: 5_000, senderName: "ADAEZE OKAFOR" })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, before + 1)
      expect(yield* figures(t)).toEqual({ availableKobo: 8_000, heldKobo: 0, receivableKobo: 0 })
      const paid = yield* run(t)
      expect(paid.settledCount).toBe(2)
      expect(paid.data.map((s: any) => [s.accountRef, s.netKobo]).sort()).toEqual([["ls-b", 6_000], ["ls-c", 2_000]])
      for (const s of paid.data) yield* waitForPaid(t, s.id)
      expect(yield* figures(t)).toEqual({ availableKobo: 0, heldKobo: 0, receivableKobo: 0 })
      yield* assertLedgerInvariant
    }))
})
