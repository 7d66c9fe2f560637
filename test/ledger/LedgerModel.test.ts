import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { Ledger } from "../../services/ledger/Ledger.js"
import { Tenants } from "../../services/access/Tenants.js"
import { LedgerAccount } from "../../src/domain/Ledger.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"

/** The ledger model on the real Postgres, through the real service (HTTP, receiver, reconciler). */
layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("the ledger model", (it) => {
  const journal = (tenantId: string, journalId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ account: string; amountKobo: number }>`SELECT account, amount_kobo FROM ledger_entries
        WHERE tenant_id = ${tenantId} AND mode = 'test' AND journal_id = ${journalId} ORDER BY account`)

  /** A guarded balance; `available` is the sum of the tenant's stripes. */
  const guarded = (tenantId: string, account: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ balanceKobo: number }>`SELECT COALESCE(sum(balance_kobo), 0)::bigint AS balance_kobo FROM ledger_balances
        WHERE tenant_id = ${tenantId} AND mode = 'test' AND (account = ${account} OR (${account} = 'available' AND account LIKE 'available:%'))`
    ).pipe(Effect.map((rows) => rows[0]!.balanceKobo))

  it.effect("posting a journal twice leaves one; the database itself refuses a second copy", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const t = yield* testTenant
      const scope = { tenantId: t.tenantId, mode: "test" as const }
      const legs = [{ account: LedgerAccount.providerClearing, amountKobo: 5_000 }, { account: LedgerAccount.unmatched, amountKobo: -5_000 }]
      expect(yield* sql.withTransaction(ledger.post(scope, "test:twice", legs))).toBe(true)
      expect(yield* sql.withTransaction(ledger.post(scope, "test:twice", legs))).toBe(false)
      expect(yield* journal(t.tenantId, "test:twice")).toHaveLength(2)
      const raw = yield* sql`INSERT INTO ledger_entries (tenant_id, mode, journal_id, account, amount_kobo)
        VALUES (${t.tenantId}, 'test', 'test:twice', 'provider_clearing', 5000)`.pipe(Effect.exit)
      expect(Exit.isFailure(raw)).toBe(true)
      yield* assertLedgerInvariant
    }))

  it.effect("an overdraw of a guarded account fails and rolls the whole step back", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const tenants = yield* Tenants
      const t = yield* testTenant
      const account = yield* createAccount(t.token, "guarded-1", "Ngozi Eze", 10_000)
      yield* sendSigned(t, { accountNumber: account.nuban, amountKobo: 10_000, senderName: "NGOZI EZE" })
      yield* waitForTransactions(t.tenantId, 1)
      const [va] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = 'guarded-1'`
      const scope = { tenantId: t.tenantId, mode: "test" as const }
      expect(yield* guarded(t.tenantId, "available")).toBe(10_000)

      // Holding 4,000 into escrow, then releasing 5,000 from it: the release would take escrow below zero.
      yield* sql.withTransaction(ledger.post(scope, "hold:test-1", [
        { account: LedgerAccount.customerFunds(va!.id), amountKobo: 4_000 }, { account: LedgerAccount.escrow(va!.id), amountKobo: -4_000 }
      ]))
      expect(yield* guarded(t.tenantId, LedgerAccount.escrow(va!.id))).toBe(4_000)
      expect(yield* guarded(t.tenantId, "available")).toBe(6_000)
      const step = sql.withTransaction(Effect.gen(function* () {
        yield* tenants.audit({ tenantId: t.tenantId, mode: "test", actor: "test", action: "test.overdraw", subject: "hold:test-1", details: {} })
        yield* ledger.post(scope, "release:test-1", [
          { account: LedgerAccount.escrow(va!.id), amountKobo: 5_000 }, { account: LedgerAccount.customerFunds(va!.id), amountKobo: -5_000 }
        ])
      }))
      const exit = yield* Effect.exit(step)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("Overdrawn")).toBe(true)
      expect(yield* journal(t.tenantId, "release:test-1")).toEqual([])
      expect(yield* sql`SELECT 1 FROM audit_log WHERE tenant_id = ${t.tenantId} AND action = 'test.overdraw'`).toEqual([])
      expect(yield* guarded(t.tenantId, LedgerAccount.escrow(va!.id))).toBe(4_000)
      // A credit into an account whose guarded row does not exist yet at below zero is refused too.
      const fresh = yield* Effect.exit(sql.withTransaction(ledger.post(scope, "release:test-2", [
        { account: LedgerAccount.escrow("va_none"), amountKobo: 1 }, { account: LedgerAccount.customerFunds("va_none"), amountKobo: -1 }
      ])))
      expect(Exit.isFailure(fresh)).toBe(true)
      yield* assertLedgerInvariant
    }))

  it.effect("the available balance is striped: two steps raising it at once never wait for each other; lowering takes from every stripe; an overdraw fails", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const t = yield* testTenant
      const scope = { tenantId: t.tenantId, mode: "test" as const }
      const credit = (journalId: string, amountKobo: number) =>
        ledger.post(scope, journalId, [{ account: LedgerAccount.providerClearing, amountKobo }, { account: LedgerAccount.customerFunds("va_striped"), amountKobo: -amountKobo }])
      // The first step holds its stripe until it commits; the second must finish meanwhile, on another stripe.
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(sql.withTransaction(Effect.gen(function* () {
        yield* credit("test:stripe-1", 10_000)
        yield* Deferred.succeed(holding, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(holding)
      const second = yield* sql.withTransaction(credit("test:stripe-2", 5_000)).pipe(Effect.timeout("5 seconds"), Effect.exit)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      expect(Exit.isSuccess(second)).toBe(true)
      const stripes = yield* sql<{ account: string; balanceKobo: number }>`SELECT account, balance_kobo FROM ledger_balances
        WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND account LIKE 'available:%' ORDER BY account`
      expect(stripes).toHaveLength(8)
      expect(stripes.map((s) => s.balanceKobo).filter((b) => b > 0).sort((a, b) => a - b)).toEqual([5_000, 10_000])
      expect(yield* ledger.available(scope)).toBe(15_000)

      // A payout's draw (the payout machinery's own journal: payouts_drawn / payouts_in_transit) lowers it.
      const payout = (journalId: string, amountKobo: number) =>
        ledger.post(scope, journalId, [{ account: LedgerAccount.payoutsDrawn, amountKobo }, { account: LedgerAccount.payoutsInTransit, amountKobo: -amountKobo }])
      yield* sql.withTransaction(payout("test:stripe-out-1", 12_000))
      expect(yield* ledger.available(scope)).toBe(3_000)
      const over = yield* Effect.exit(sql.withTransaction(payout("test:stripe-out-2", 3_001)))
      expect(Exit.isFailure(over) && JSON.stringify(over.cause).includes("Overdrawn")).toBe(true)
      expect(yield* journal(t.tenantId, "test:stripe-out-2")).toEqual([])
      // The draw stood for a payout: it goes back (as a failed payout's does), so the books hold no transfer that does not exist.
      yield* sql.withTransaction(ledger.post(scope, "test:stripe-out-1:returned", [
        { account: LedgerAccount.payoutsInTransit, amountKobo: 12_000 }, { account: LedgerAccount.payoutsDrawn, amountKobo: -12_000 }
      ]))
      expect(yield* ledger.available(scope)).toBe(15_000)
      yield* assertLedgerInvariant
    }))

  it.effect("raises spread over the stripes; a lowering no free stripe covers alone takes from several without waiting for a held one; short of that it waits, holding none out of order", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const t = yield* testTenant
      const scope = { tenantId: t.tenantId, mode: "test" as const }
      const stripes = sql<{ account: string; balanceKobo: number }>`SELECT account, balance_kobo FROM ledger_balances
        WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND account LIKE 'available:%' ORDER BY account`.pipe(Effect.map((rows) => rows.map((r) => r.balanceKobo)))
      const credit = (journalId: string, amountKobo: number) => sql.withTransaction(ledger.post(scope, journalId,
        [{ account: LedgerAccount.providerClearing, amountKobo }, { account: LedgerAccount.customerFunds("va_spread"), amountKobo: -amountKobo }]))
      const payout = (journalId: string, amountKobo: number) => sql.withTransaction(ledger.post(scope, journalId,
        [{ account: LedgerAccount.payoutsDrawn, amountKobo }, { account: LedgerAccount.payoutsInTransit, amountKobo: -amountKobo }]))

      // One after another, each raise goes to the emptiest stripe: all eight, not one.
      for (let i = 0; i < 8; i++) yield* credit(`test:spread-${i}`, 10_000)
      expect(yield* stripes).toEqual(Array.from({ length: 8 }, () => 10_000))

      // Another step (as a deposit batch does) holds available:0 until it is released.
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const other = yield* Effect.fork(sql.withTransaction(Effect.gen(function* () {
        yield* sql`SELECT 1 FROM ledger_balances WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND account = 'available:0' FOR UPDATE`
        yield* Deferred.succeed(holding, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(holding)

      // 25,000: no stripe holds it alone; the seven free ones together do. It does not wait for available:0.
      const spread = yield* payout("test:spread-out-1", 25_000).pipe(Effect.timeout("5 seconds"), Effect.exit)
      expect(Exit.isSuccess(spread)).toBe(true)
      const after = yield* stripes
      expect(after[0]).toBe(10_000)
      expect(after.reduce((a, b) => a + b, 0)).toBe(55_000)
      expect(after.every((b) => b >= 0)).toBe(true)

      // 50,000: the free stripes hold 45,000, so it must wait for available:0; meanwhile it holds no other stripe (its
      // savepoint let go of those it took from), and another step can lock any of them at once.
      const waiting = yield* Effect.fork(payout("test:spread-out-2", 50_000))
      yield* Effect.sleep("500 millis")
      expect(yield* journal(t.tenantId, "test:spread-out-2")).toEqual([])
      const free = yield* sql.withTransaction(sql`SELECT account FROM ledger_balances WHERE tenant_id = ${t.tenantId} AND mode = 'test'
        AND account LIKE 'available:%' AND account <> 'available:0' ORDER BY account FOR UPDATE NOWAIT`).pipe(Effect.exit)
      expect(Exit.isSuccess(free)).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(other)
      yield* Fiber.join(waiting)
      expect(yield* ledger.available(scope)).toBe(5_000)
      expect((yield* stripes).every((b) => b >= 0)).toBe(true)
      // The draws stood for payouts: they go back, so the books hold no transfer that does not exist.
      for (const [id, amount] of [["test:spread-out-1", 25_000], ["test:spread-out-2", 50_000]] as const) {
        yield* sql.withTransaction(ledger.post(scope, `${id}:returned`, [
          { account: LedgerAccount.payoutsInTransit, amountKobo: amount }, { account: LedgerAccount.payoutsDrawn, amountKobo: -amount }
        ]))
      }
      expect(yield* ledger.available(scope)).toBe(80_000)
      yield* assertLedgerInvariant
    }))

  it.effect("a reversal after the money left takes what is still free and posts the rest to tenant_receivable", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const account = yield* createAccount(t.token, "late-1", "John Adeyemi", 100_000)
      const paid = yield* sendSigned(t, { accountNumber: account.nuban, amountKobo: 100_000 })
      yield* waitForTransactions(t.tenantId, 1)
      const [va] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts WHERE tenant_id = ${t.tenantId} AND account_ref = 'late-1'`
      // 60,000 leaves as a payout (it draws on the tenant's available balance, which only this account fills).
      const payout = yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "late-out", amountKobo: 60_000, accountNumber: "0123456785", bankCode: "058" }
      })
      expect(payout.status).toBe(201)
      const reversal = yield* sendSigned(t, { accountNumber: account.nuban, amountKobo: 100_000, event: "transfer.reversal", reversedSessionId: paid.sessionId })
      yield* waitForTransactions(t.tenantId, 2)
      expect(yield* journal(t.tenantId, `txn:${reversal.sessionId}`)).toEqual([
        { account: LedgerAccount.customerFunds(va!.id), amountKobo: 40_000 },
        { account: LedgerAccount.providerClearing, amountKobo: -100_000 },
        { account: LedgerAccount.tenantReceivable, amountKobo: 60_000 }
      ])
      const fetched = yield* call("GET", "/api/v1/virtual-accounts/late-1", { token: t.token })
      expect(fetched.body).toMatchObject({ amountPaidKobo: 0, paymentState: "AwaitingPayment" })
      const credit = yield* call("GET", `/api/v1/transactions/${paid.sessionId}`, { token: t.token })
      expect(credit.body.status).toBe("Reversed")
      expect(yield* guarded(t.tenantId, "available")).toBe(0)
      yield* assertLedgerInvariant
    }))

  it.effect("an unmatched deposit: approve credits the account it names as a reconciliation; reject owes it back to the payer", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "claim-1", "Aisha Bello", 30_000)
      const first = yield* sendSigned(t, { accountNumber: "0000014579", amountKobo: 30_000 })
      const second = yield* sendSigned(t, { accountNumber: "0000014579", amountKobo: 7_000 })
      expect(first.body.result).toBe("unmatched")
      yield* waitForTransactions(t.tenantId, 2)
      const review = (reference: string, json: unknown) => call("POST", `/api/v1/transactions/${reference}/review`, { token: t.testOwnerToken, json })

      const missing = yield* review(first.sessionId, { decision: "approve" })
      expect(missing.status).toBe(400)
      expect(missing.body.code).toBe("account_ref_required")
      const unknown = yield* review(first.sessionId, { decision: "approve", accountRef: "no-such-account" })
      expect(unknown.status).toBe(404)

      const approved = yield* review(first.sessionId, { decision: "approve", accountRef: "claim-1", note: "payer called" })
      expect(approved.status).toBe(200)
      expect(approved.body).toMatchObject({ status: "Completed", accountRef: "claim-1", reconciliationStatus: "Exact" })
      const account = yield* call("GET", "/api/v1/virtual-accounts/claim-1", { token: t.token })
      expect(account.body).toMatchObject({ amountPaidKobo: 30_000, paymentState: "FullyPaid" })
      expect(yield* journal(t.tenantId, `review:${first.sessionId}`)).toEqual([
        { account: expect.stringMatching(/^customer_funds:/), amountKobo: -30_000 },
        { account: LedgerAccount.unmatched, amountKobo: 30_000 }
      ])
      expect(yield* guarded(t.tenantId, "available")).toBe(30_000)

      const rejected = yield* review(second.sessionId, { decision: "reject" })
      expect(rejected.body).toMatchObject({ status: "Rejected", accountRef: null })
      expect(yield* journal(t.tenantId, `review:${second.sessionId}`)).toEqual([
        { account: LedgerAccount.rejected, amountKobo: -7_000 },
        { account: LedgerAccount.unmatched, amountKobo: 7_000 }
      ])
      const again = yield* review(first.sessionId, { decision: "reject" })
      expect(again.status).toBe(409)
      yield* assertLedgerInvariant
    }))

  it.effect("a reversal with nothing to reverse waits for review, posts nothing and leaves the account deletable", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const account = yield* createAccount(t.token, "empty-1", "Tunde Bakare", 20_000)
      const reversal = yield* sendSigned(t, { accountNumber: account.nuban, amountKobo: 20_000, event: "transfer.reversal" })
      yield* waitForTransactions(t.tenantId, 1)
      const row = yield* call("GET", `/api/v1/transactions/${reversal.sessionId}`, { token: t.token })
      expect(row.body).toMatchObject({ status: "PendingReview", reconciliationStatus: "Reversal" })
      expect(yield* journal(t.tenantId, `txn:${reversal.sessionId}`)).toEqual([])
      const deleted = yield* call("DELETE", "/api/v1/virtual-accounts/empty-1", { token: t.token })
      expect(deleted.status).toBe(204)
      yield* assertLedgerInvariant
    }))
})
