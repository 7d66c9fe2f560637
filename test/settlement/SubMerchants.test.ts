import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeNuban } from "../../src/domain/Nuban.js"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, providerCalls, testTenant, waitForTransfer } from "../transfers/support.js"

// Sub-merchants over real HTTP (interface "Sub-merchants", DESIGN.md "Money movement" and "Wire shapes"): the CRUD and
// its wire shape, verified payout accounts, roles and planes, tenant and mode isolation, the routing of a sub-merchant
// account's collections by a settlement run, the balance against the ledger at every step, and what happens to money
// that has already been settled (refund, hold, a late reversal). Every scenario ends with the ledger invariant.
//
// A Processing transfer is checked with the provider only once its lease (statusCheckAfterMs) runs out. This file sets
// that to an hour, so a leg to a SLOW directory row stays in transit until the test expires its lease by SQL: "in
// transit" is a state the test holds, not a race it hopes to win.

const STATUS_CHECK_AFTER_MS = 3_600_000

const SM = "/api/v1/sub-merchants"

/** Directory rows this file adds (valid NUBANs at their banks): a slow, a failing and a second ordinary account. */
const SLOW_KEMI = { accountNumber: makeNuban("058", 700_000_001), bankCode: "058", accountName: "KEMI ADEBAYO" }
const FAIL_TOLU = { accountNumber: makeNuban("058", 700_000_002), bankCode: "058", accountName: "TOLU BELLO" }

const addDirectoryRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO sandbox_name_directory (bank_code, account_number, account_name, outcome) VALUES
    (${SLOW_KEMI.bankCode}, ${SLOW_KEMI.accountNumber}, ${SLOW_KEMI.accountName}, 'slow'),
    (${FAIL_TOLU.bankCode}, ${FAIL_TOLU.accountNumber}, ${FAIL_TOLU.accountName}, 'failed')
    ON CONFLICT DO NOTHING`
}).pipe(Effect.orDie)

const createSm = (token: string, name: string, reference: string) => call("POST", SM, { token, json: { name, reference } })

const setPayout = (token: string, id: string, to: { accountNumber: string; bankCode: string }, platformFeeBps?: number) =>
  call("PUT", `${SM}/${id}/payout`, {
    token, json: { bankName: "Some Bank", bankCode: to.bankCode, accountNumber: to.accountNumber, ...(platformFeeBps === undefined ? {} : { platformFeeBps }) }
  })

/** A sub-merchant with a verified payout account. */
const verifiedSm = (t: MoneyTenant, name: string, reference: string, to: { accountNumber: string; bankCode: string }, platformFeeBps: number) =>
  Effect.gen(function* () {
    const created = yield* createSm(t.token, name, reference)
    expectStatus(created, 201)
    const set = yield* setPayout(t.token, created.body.id, to, platformFeeBps)
    expectStatus(set, 200)
    return set.body as { id: string; reference: string }
  })

/** The tenant's own settlement account (Ngozi Eze Enterprises, First Bank). */
const settlementAccount = (t: MoneyTenant) =>
  Effect.map(
    call("PUT", "/api/v1/settings/settlement", {
      token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }
    }),
    (r) => expectStatus(r, 200)
  )

/** A virtual account (open unless `expected`) routed to the sub-merchant `subMerchantRef`. */
const smAccount = (t: MoneyTenant, accountRef: string, subMerchantRef: string, expected?: number) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/virtual-accounts", {
      token: t.token, json: { accountRef, name: "Adaeze Okafor", subMerchantRef, ...(expected === undefined ? {} : { expectedAmountKobo: expected }) }
    })
    expectStatus(r, 201)
    expect(r.body.subMerchantRef).toBe(subMerchantRef)
    return r.body as { nuban: string; accountRef: string }
  })

/** Deposits into an account, signed as the sandbox bank, and waits until they are reconciled; answers their references. */
const deposit = (t: MoneyTenant, nuban: string, amounts: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`) as unknown as [{ n: number }]
    const refs: Array<string> = []
    for (const amountKobo of amounts) {
      const sent = yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName: "ADAEZE OKAFOR", senderAccountNumber: DIRECTORY.adaeze.accountNumber })
      expect(sent.status).toBe(200)
      refs.push(sent.sessionId)
    }
    yield* waitForTransactions(t.tenantId, n + amounts.length)
    return refs
  }).pipe(Effect.orDie)

const run = (t: MoneyTenant) =>
  Effect.map(call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken }), (r) => {
    expectStatus(r, 200)
    return r.body as { data: Array<any>; settledCount: number; skippedCount: number; heldBackCount: number; retriedLegCount: number }
  })

/**
 * The sub-merchant's figures straight from the ledger: collected = what settlement allocations (`stl:<settlement id>`)
 * credited to `sub_merchant:<id>`; pending = that account's balance; in transit = what the legs drawn from it (their
 * claim journals `stl:<leg reference>`) still have in settlements_in_transit; unswept = the free money
 * (customer_funds) of its virtual accounts.
 */
const ledgerFigures = (t: MoneyTenant, id: string, reference: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const account = `sub_merchant:${id}`
    const [f] = yield* sql<{ collected: number; pending: number; inTransit: number; unswept: number }>`
      WITH legs AS (
        SELECT substr(journal_id, 5) AS ref FROM ledger_entries
        WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND account = ${account} AND journal_id LIKE 'stl:stl\\_%' AND amount_kobo > 0
          AND position(':' in substr(journal_id, 5)) = 0
      )
      SELECT
        (SELECT -COALESCE(sum(e.amount_kobo), 0) FROM ledger_entries e WHERE e.tenant_id = ${t.tenantId} AND e.mode = 'test' AND e.account = ${account}
          AND e.journal_id IN (SELECT 'stl:' || s.id FROM settlements s WHERE s.tenant_id = ${t.tenantId}))::bigint AS collected,
        (SELECT -COALESCE(sum(e.amount_kobo), 0) FROM ledger_entries e WHERE e.tenant_id = ${t.tenantId} AND e.mode = 'test'
          AND e.account = ${account})::bigint AS pending,
        (SELECT -COALESCE(sum(e.amount_kobo), 0) FROM ledger_entries e WHERE e.tenant_id = ${t.tenantId} AND e.mode = 'test'
          AND e.account = 'settlements_in_transit' AND split_part(substr(e.journal_id, 5), ':', 1) IN (SELECT ref FROM legs))::bigint AS in_transit,
        (SELECT -COALESCE(sum(e.amount_kobo), 0) FROM virtual_accounts va JOIN ledger_entries e ON e.tenant_id = va.tenant_id AND e.mode = va.mode
          AND e.account = 'customer_funds:' || va.id
          WHERE va.tenant_id = ${t.tenantId} AND va.mode = 'test' AND va.sub_merchant_ref = ${reference})::bigint AS unswept`
    return {
      collectedKobo: f!.collected, settledKobo: f!.collected - f!.pending, pendingKobo: f!.pending, inTransitKobo: f!.inTransit, unsweptKobo: f!.unswept
    }
  }).pipe(Effect.orDie)

/** GET .../balance, held to the ledger's figures and to the figures the scenario expects. */
const expectBalance = (
  t: MoneyTenant,
  sm: { id: string; reference: string },
  expected: { collectedKobo: number; settledKobo: number; pendingKobo: number; inTransitKobo: number; unsweptKobo: number }
) =>
  Effect.gen(function* () {
    const r = yield* call("GET", `${SM}/${sm.id}/balance`, { token: t.token })
    expectStatus(r, 200)
    expect(r.body).toEqual({ id: sm.id, reference: sm.reference, ...expected, mode: "test" })
    expect(yield* ledgerFigures(t, sm.id, sm.reference)).toEqual(expected)
  })

/** The settlement's status, polled until it is `status` (the leg outcomes arrive by the sandbox bank's webhook). */
const waitForSettlement = (t: MoneyTenant, id: string, status: string) =>
  waitFor(
    `settlement ${id} to be ${status}`,
    Effect.map(call("GET", "/api/v1/settlements?take=100", { token: t.token }), (r) => (r.body.data as Array<any>).find((s) => s.id === id)),
    { until: (s) => s?.status === status, timeoutMs: 20_000 }
  )

layer(makeTestApp({ moneyOut: { statusCheckAfterMs: STATUS_CHECK_AFTER_MS } }), { timeout: 120_000, excludeTestServices: true })("sub-merchants", (it) => {
  it.effect("create answers 201 with the wire shape; list is newest first with take and startingAfter", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const created = yield* createSm(t.token, "Bolanle Adeyemi", "sm-1")
      expectStatus(created, 201)
      expect(created.body).toEqual({
        id: expect.any(String), name: "Bolanle Adeyemi", reference: "sm-1", payoutAccount: null, platformFeeBps: 0,
        createdAt: expect.any(String), mode: "test"
      })
      expect(Number.isNaN(Date.parse(created.body.createdAt))).toBe(false)
      // The name is trimmed.
      const trimmed = yield* createSm(t.token, "  Ibrahim Musa  ", "sm-2")
      expectStatus(trimmed, 201)
      expect(trimmed.body.name).toBe("Ibrahim Musa")
      expectStatus(yield* createSm(t.token, "Tunde Bakare", "sm-3"), 201)

      const all = yield* call("GET", SM, { token: t.token })
      expectStatus(all, 200)
      expect(all.body.data.map((s: any) => s.reference)).toEqual(["sm-3", "sm-2", "sm-1"])
      expect(all.body.hasMore).toBe(false)
      expect(all.body.data[2]).toEqual(created.body)
      const first = yield* call("GET", `${SM}?take=2`, { token: t.token })
      expect(first.body.data.map((s: any) => s.reference)).toEqual(["sm-3", "sm-2"])
      expect(first.body.hasMore).toBe(true)
      const second = yield* call("GET", `${SM}?take=2&startingAfter=${first.body.data[1].id}`, { token: t.token })
      expect(second.body.data.map((s: any) => s.reference)).toEqual(["sm-1"])
      expect(second.body.hasMore).toBe(false)
      expectProblem(yield* call("GET", `${SM}?startingAfter=sm_nope`, { token: t.token }), 400, "unknown_starting_after")
      // Another tenant sees none of them.
      const other = yield* testTenant
      expect((yield* call("GET", SM, { token: other.token })).body).toEqual({ data: [], hasMore: false })
      yield* assertLedgerInvariant
    }))

  it.effect("a repeated reference is always 409 duplicate_reference; bad input is 400 and creates nothing", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      expectStatus(yield* createSm(t.token, "Bolanle Adeyemi", "dup"), 201)
      expectProblem(yield* createSm(t.token, "Bolanle Adeyemi", "dup"), 409, "duplicate_reference")
      expectProblem(yield* createSm(t.token, "Someone Else", "dup"), 409, "duplicate_reference")
      // The same reference in another tenant, or in live mode, is another sub-merchant.
      const other = yield* testTenant
      expectStatus(yield* createSm(other.token, "Bolanle Adeyemi", "dup"), 201)

      const missingName = yield* call("POST", SM, { token: t.token, json: { reference: "v-1" } })
      expectProblem(missingName, 400, "validation_failed")
      expect(missingName.body.errors.map((e: any) => e.path)).toContain("name")
      expectProblem(yield* call("POST", SM, { token: t.token, json: { name: "   ", reference: "v-2" } }), 400, "validation_failed")
      const badRef = yield* call("POST", SM, { token: t.token, json: { name: "X Y", reference: "has space" } })
      expectProblem(badRef, 400, "validation_failed")
      expect(badRef.body.errors.map((e: any) => e.path)).toContain("reference")
      expectProblem(yield* call("POST", SM, { token: t.token, json: { name: "X Y", reference: "" } }), 400, "validation_failed")
      expectProblem(yield* call("POST", SM, { token: t.token, json: { name: "X Y", reference: "r".repeat(65) } }), 400, "validation_failed")
      const unknown = yield* call("POST", SM, { token: t.token, json: { name: "X Y", reference: "v-3", platformFee: 100 } })
      expectProblem(unknown, 400, "unknown_field")
      expect(unknown.body.message).toContain("platformFee")
      const list = yield* call("GET", SM, { token: t.token })
      expect(list.body.data.map((s: any) => s.reference)).toEqual(["dup"])
      yield* assertLedgerInvariant
    }))

  it.effect("404 sub_merchant_not_found for an unknown id, another tenant's sub-merchant and another mode's", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      const created = yield* createSm(t.token, "Bolanle Adeyemi", "iso-1")
      expectStatus(created, 201)
      const id = created.body.id as string
      const to = DIRECTORY.bolanle
      expectProblem(yield* setPayout(t.token, "sm_unknown", to), 404, "sub_merchant_not_found")
      expectProblem(yield* call("GET", `${SM}/sm_unknown/balance`, { token: t.token }), 404, "sub_merchant_not_found")
      // Another tenant: 404, never its data, and nothing changed.
      const foreignPut = yield* setPayout(other.token, id, to, 100)
      expectProblem(foreignPut, 404, "sub_merchant_not_found")
      expect(JSON.stringify(foreignPut.body)).not.toContain("Bolanle")
      expectProblem(yield* call("GET", `${SM}/${id}/balance`, { token: other.token }), 404, "sub_merchant_not_found")
      expectProblem(yield* call("GET", `${SM}/${id}/balance`, { token: other.testOwnerToken }), 404, "sub_merchant_not_found")
      // Live mode (a dashboard live token) does not see the test-mode sub-merchant.
      expect((yield* call("GET", SM, { token: t.ownerToken })).body).toEqual({ data: [], hasMore: false })
      expectProblem(yield* call("GET", `${SM}/${id}/balance`, { token: t.ownerToken }), 404, "sub_merchant_not_found")
      expectProblem(yield* setPayout(t.ownerToken, id, to), 404, "sub_merchant_not_found")
      // A live sub-merchant with the same reference is separate, and test mode does not see it.
      const live = yield* createSm(t.ownerToken, "Bolanle Adeyemi", "iso-1")
      expectStatus(live, 201)
      expect(live.body.mode).toBe("live")
      expect((yield* call("GET", SM, { token: t.token })).body.data.map((s: any) => s.id)).toEqual([id])
      expect((yield* call("GET", SM, { token: t.ownerToken })).body.data.map((s: any) => s.id)).toEqual([live.body.id])
      expectProblem(yield* call("GET", `${SM}/${live.body.id}/balance`, { token: t.token }), 404, "sub_merchant_not_found")
      // The test-mode one was not touched by any of the refused calls.
      const mine = (yield* call("GET", SM, { token: t.token })).body.data[0]
      expect(mine).toMatchObject({ payoutAccount: null, platformFeeBps: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("PUT payout is verified (NUBAN check, name enquiry, the name matcher); the fee is kept when left out", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const created = yield* createSm(t.token, "Bolanle Adeyemi", "pay-1")
      const id = created.body.id as string
      // A bad check digit, an account the bank does not know, a name that does not match: 400 and nothing saved.
      const badDigit = yield* setPayout(t.token, id, { accountNumber: "2000000016", bankCode: "057" }, 100)
      expectProblem(badDigit, 400, "payout_account_unverified")
      const unknownAccount = yield* setPayout(t.token, id, { accountNumber: makeNuban("057", 123_456), bankCode: "057" }, 100)
      expectProblem(unknownAccount, 400, "payout_account_unverified")
      const mismatch = yield* setPayout(t.token, id, DIRECTORY.tunde, 100)
      expectProblem(mismatch, 400, "payout_account_unverified")
      expect(mismatch.body.message).toContain("TUNDE BAKARE")
      expect((yield* call("GET", SM, { token: t.token })).body.data[0]).toMatchObject({ id, payoutAccount: null, platformFeeBps: 0 })
      // Schema: 10 digits, a bank code, platformFeeBps an integer from 0 to 10000.
      expectProblem(yield* setPayout(t.token, id, { accountNumber: "12345", bankCode: "057" }), 400, "validation_failed")
      expectProblem(yield* setPayout(t.token, id, DIRECTORY.bolanle, 10_001), 400, "validation_failed")
      expectProblem(yield* setPayout(t.token, id, DIRECTORY.bolanle, -1), 400, "validation_failed")
      expectProblem(yield* setPayout(t.token, id, DIRECTORY.bolanle, 2.5), 400, "validation_failed")
      expectProblem(yield* call("PUT", `${SM}/${id}/payout`, { token: t.token, json: { bankCode: "057", accountNumber: DIRECTORY.bolanle.accountNumber, extra: 1 } }), 400, "unknown_field")
      expect((yield* call("GET", SM, { token: t.token })).body.data[0]).toMatchObject({ payoutAccount: null, platformFeeBps: 0 })

      // Verified: the bank's name for the account, the bank's name for the code, when.
      const before = Date.now()
      const ok = yield* setPayout(t.token, id, DIRECTORY.bolanle, 250)
      expectStatus(ok, 200)
      expect(ok.body).toMatchObject({
        id, name: "Bolanle Adeyemi", reference: "pay-1", platformFeeBps: 250,
        payoutAccount: { bankCode: "057", accountNumber: DIRECTORY.bolanle.accountNumber, accountName: "BOLANLE ADEYEMI", bankName: expect.any(String), verifiedAt: expect.any(String) }
      })
      expect(ok.body.payoutAccount.bankName).not.toBe("Some Bank")
      expect(Date.parse(ok.body.payoutAccount.verifiedAt)).toBeGreaterThanOrEqual(before - 5_000)
      expect((yield* call("GET", SM, { token: t.token })).body.data[0]).toEqual(ok.body)
      // platformFeeBps left out: kept; 0 and 10000 are in range.
      const kept = yield* setPayout(t.token, id, DIRECTORY.bolanle)
      expectStatus(kept, 200)
      expect(kept.body.platformFeeBps).toBe(250)
      expect((yield* setPayout(t.token, id, DIRECTORY.bolanle, 0)).body.platformFeeBps).toBe(0)
      expect((yield* setPayout(t.token, id, DIRECTORY.bolanle, 10_000)).body.platformFeeBps).toBe(10_000)
      // A later unverifiable account leaves the verified one in place.
      expectProblem(yield* setPayout(t.token, id, DIRECTORY.ibrahim, 5), 400, "payout_account_unverified")
      expect((yield* call("GET", SM, { token: t.token })).body.data[0]).toMatchObject({
        platformFeeBps: 10_000, payoutAccount: { accountNumber: DIRECTORY.bolanle.accountNumber, accountName: "BOLANLE ADEYEMI" }
      })
      // The name matcher allows another order and case.
      const reordered = yield* createSm(t.token, "adeyemi bolanle", "pay-2")
      expectStatus(yield* setPayout(t.token, reordered.body.id, DIRECTORY.bolanle), 200)
      yield* assertLedgerInvariant
    }))

  it.effect("roles and planes: API key and dashboard Owner/Admin may create and set payout; a Member 403; GETs open to a Member", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // API key.
      const byKey = yield* createSm(t.token, "Bolanle Adeyemi", "r-key")
      expectStatus(byKey, 201)
      expectStatus(yield* setPayout(t.token, byKey.body.id, DIRECTORY.bolanle, 100), 200)
      // Dashboard Owner (test mode).
      const byOwner = yield* createSm(t.testOwnerToken, "Ibrahim Musa", "r-owner")
      expectStatus(byOwner, 201)
      expectStatus(yield* setPayout(t.testOwnerToken, byOwner.body.id, DIRECTORY.ibrahim, 100), 200)
      // Dashboard Admin.
      const admin = yield* dashboardUser(t, "Admin")
      const byAdmin = yield* createSm(admin.token, "Tunde Bakare", "r-admin")
      expectStatus(byAdmin, 201)
      expectStatus(yield* setPayout(admin.token, byAdmin.body.id, DIRECTORY.tunde, 100), 200)
      // Member: 403 to change anything, in either mode.
      const member = yield* dashboardUser(t, "Member")
      expectProblem(yield* createSm(member.token, "Adaeze Okafor", "r-member"), 403, "insufficient_role")
      expectProblem(yield* createSm(member.liveToken, "Adaeze Okafor", "r-member"), 403, "insufficient_role")
      expectProblem(yield* setPayout(member.token, byKey.body.id, DIRECTORY.bolanle, 9_000), 403, "insufficient_role")
      // ... but may read.
      const list = yield* call("GET", SM, { token: member.token })
      expectStatus(list, 200)
      expect(list.body.data.map((s: any) => s.reference)).toEqual(["r-admin", "r-owner", "r-key"])
      expect(list.body.data[2].platformFeeBps).toBe(100)
      const balance = yield* call("GET", `${SM}/${byKey.body.id}/balance`, { token: member.token })
      expectStatus(balance, 200)
      expect(balance.body).toMatchObject({ collectedKobo: 0, settledKobo: 0, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })
      // No token: 401.
      expect((yield* call("GET", SM, {})).status).toBe(401)
      expect((yield* call("POST", SM, { json: { name: "A B", reference: "r-none" } })).status).toBe(401)
      yield* assertLedgerInvariant
    }))

  it.effect("a virtual account's subMerchantRef must name a sub-merchant of the tenant and mode (400 unknown_sub_merchant)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      expectStatus(yield* createSm(other.token, "Bolanle Adeyemi", "theirs"), 201)
      expectStatus(yield* createSm(t.ownerToken, "Bolanle Adeyemi", "live-only"), 201)
      for (const subMerchantRef of ["nobody", "theirs", "live-only"]) {
        const r = yield* call("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: `va-${subMerchantRef}`, name: "Adaeze Okafor", subMerchantRef } })
        expectProblem(r, 400, "unknown_sub_merchant")
      }
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM virtual_accounts WHERE tenant_id = ${t.tenantId}`) as unknown as [{ n: number }]
      expect(n).toBe(0)
      expectStatus(yield* createSm(t.token, "Bolanle Adeyemi", "mine"), 201)
      yield* smAccount(t, "va-mine", "mine")
      yield* assertLedgerInvariant
    }))

  it.effect("collections routed: the sub-merchant leg (net - fee) to its verified account, the fee to the tenant; the balance equals the ledger before, in transit and after", () =>
    Effect.gen(function* () {
      yield* addDirectoryRows
      const t = yield* testTenant
      const sql = yield* SqlClient.SqlClient
      yield* settlementAccount(t)
      // Kemi's payout account is a SLOW one: her leg stays in transit until the test lets the status check run.
      const kemi = yield* verifiedSm(t, "Kemi Adebayo", "sm-kemi", SLOW_KEMI, 250)
      const a = yield* smAccount(t, "kemi-1", "sm-kemi")
      const b = yield* smAccount(t, "kemi-2", "sm-kemi", 5_000)
      yield* deposit(t, a.nuban, [10_001, 5_000])
      yield* deposit(t, b.nuban, [3_000])
      // Before the run: everything unswept (the underpaid account too: it is money in its account, not yet sweepable).
      yield* expectBalance(t, kemi, { collectedKobo: 0, settledKobo: 0, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 18_001 })

      const r = yield* run(t)
      expect(r.settledCount).toBe(1)
      expect(r.heldBackCount).toBe(0)
      const net = 15_001
      const fee = Math.floor((net * 250) / 10_000)
      expect(fee).toBe(375)
      const [s] = r.data
      expect(s).toMatchObject({ accountRef: "kemi-1", netKobo: net, status: "Processing", reason: null })
      expect(s.legs).toHaveLength(2)
      expect(s.legs[0]).toMatchObject({
        legNo: 1, kind: "sub_merchant", subMerchantRef: "sm-kemi", amountKobo: net - fee, accountNumber: SLOW_KEMI.accountNumber,
        bankCode: SLOW_KEMI.bankCode, accountName: SLOW_KEMI.accountName, merchantTxRef: `stl_${s.id}_1`
      })
      expect(s.legs[1]).toMatchObject({
        legNo: 2, kind: "platform_fee", subMerchantRef: null, amountKobo: fee, accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011",
        accountName: DIRECTORY.ngozi.accountName, merchantTxRef: `stl_${s.id}_2`
      })
      // The fee leg lands; Kemi's is sent and waits for its status check.
      expect((yield* waitForTransfer(t.token, s.legs[1].merchantTxRef)).status).toBe("Successful")
      expect((yield* waitForTransfer(t.token, s.legs[0].merchantTxRef, ["Processing"])).status).toBe("Processing")
      yield* expectBalance(t, kemi, { collectedKobo: net - fee, settledKobo: net - fee, pendingKobo: 0, inTransitKobo: net - fee, unsweptKobo: 3_000 })
      yield* assertLedgerInvariant

      // The status check finds it paid.
      yield* sql`UPDATE transfers SET lease_until = now() WHERE tenant_id = ${t.tenantId} AND merchant_tx_ref = ${s.legs[0].merchantTxRef}`
      expect((yield* waitForTransfer(t.token, s.legs[0].merchantTxRef)).status).toBe("Successful")
      const paid = yield* waitForSettlement(t, s.id, "Paid")
      expect(paid.legs.map((l: any) => l.status)).toEqual(["Successful", "Successful"])
      yield* expectBalance(t, kemi, { collectedKobo: net - fee, settledKobo: net - fee, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 3_000 })
      // The sandbox bank was asked once per leg.
      const calls = yield* sql<{ reference: string; calls: number }>`SELECT reference, calls FROM sandbox_provider_transfers
        WHERE merchant_id = ${t.merchantId} ORDER BY reference`
      expect(calls).toEqual([{ reference: s.legs[0].merchantTxRef, calls: 1 }, { reference: s.legs[1].merchantTxRef, calls: 1 }])

      // Once the underpaid account is paid up, the next run settles it the same way.
      yield* deposit(t, b.nuban, [2_000])
      const r2 = yield* run(t)
      expect(r2.data.map((x) => [x.accountRef, x.netKobo, x.legs.map((l: any) => l.amountKobo)])).toEqual([["kemi-2", 5_000, [4_875, 125]]])
      yield* expectBalance(t, kemi, { collectedKobo: net - fee + 4_875, settledKobo: net - fee + 4_875, pendingKobo: 0, inTransitKobo: 4_875, unsweptKobo: 0 })
      yield* sql`UPDATE transfers SET lease_until = now() WHERE tenant_id = ${t.tenantId} AND merchant_tx_ref = ${r2.data[0].legs[0].merchantTxRef}`
      yield* waitForSettlement(t, r2.data[0].id, "Paid")
      yield* expectBalance(t, kemi, { collectedKobo: net - fee + 4_875, settledKobo: net - fee + 4_875, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("a sub-merchant with no verified payout account: its accounts' settlement is Skipped (sub_merchant_unverified) until verified", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* settlementAccount(t)
      const created = yield* createSm(t.token, "Bolanle Adeyemi", "sm-late")
      expectStatus(created, 201)
      const sm = { id: created.body.id as string, reference: "sm-late" }
      const acc = yield* smAccount(t, "late-1", "sm-late")
      yield* deposit(t, acc.nuban, [8_000])
      // A plain account in the same run is settled regardless (a single sweep to the tenant's account).
      yield* fund(t, "plain-1", [1_000])

      const r = yield* run(t)
      expect(r.settledCount).toBe(1)
      expect(r.skippedCount).toBe(1)
      const skipped = r.data.find((x) => x.accountRef === "late-1")
      expect(skipped).toMatchObject({ status: "Skipped", reasonCode: "sub_merchant_unverified", netKobo: 8_000, legs: [] })
      expect(skipped.reason).toContain("sm-late")
      const plain = r.data.find((x) => x.accountRef === "plain-1")
      expect(plain.legs).toMatchObject([{ kind: "tenant", amountKobo: 1_000, accountNumber: DIRECTORY.ngozi.accountNumber }])
      yield* expectBalance(t, sm, { collectedKobo: 0, settledKobo: 0, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 8_000 })
      const sql = yield* SqlClient.SqlClient
      const [event] = yield* sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'settlement.skipped'`
      const data = typeof event!.data === "string" ? JSON.parse(event!.data) : event!.data
      expect(data.settlement).toMatchObject({ id: skipped.id, reasonCode: "sub_merchant_unverified" })
      // Still unverified: another run records no second skip and moves nothing.
      const again = yield* run(t)
      expect(again.settledCount).toBe(0)
      expect((yield* call("GET", "/api/v1/settlements", { token: t.token })).body.data.filter((x: any) => x.accountRef === "late-1")).toHaveLength(1)
      yield* waitForTransfer(t.token, plain.legs[0].merchantTxRef)
      yield* assertLedgerInvariant

      // Verified: the next run settles it to the sub-merchant (no fee: platformFeeBps 0, a single leg).
      expectStatus(yield* setPayout(t.token, sm.id, DIRECTORY.bolanle), 200)
      const r3 = yield* run(t)
      expect(r3.settledCount).toBe(1)
      expect(r3.data[0]).toMatchObject({ accountRef: "late-1", netKobo: 8_000 })
      expect(r3.data[0].legs).toMatchObject([{ kind: "sub_merchant", subMerchantRef: "sm-late", amountKobo: 8_000, accountNumber: DIRECTORY.bolanle.accountNumber }])
      yield* waitForSettlement(t, r3.data[0].id, "Paid")
      yield* expectBalance(t, sm, { collectedKobo: 8_000, settledKobo: 8_000, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("a failing leg: the sub-merchant's money waits in its account (pendingKobo = the leg) and nothing else is paid twice", () =>
    Effect.gen(function* () {
      yield* addDirectoryRows
      const t = yield* testTenant
      yield* settlementAccount(t)
      const tolu = yield* verifiedSm(t, "Tolu Bello", "sm-tolu", FAIL_TOLU, 1_000)
      const acc = yield* smAccount(t, "tolu-1", "sm-tolu", 20_000)
      yield* deposit(t, acc.nuban, [20_000])
      const r = yield* run(t)
      const [s] = r.data
      const fee = 2_000
      expect(s.legs.map((l: any) => [l.kind, l.amountKobo])).toEqual([["sub_merchant", 18_000], ["platform_fee", fee]])
      expect((yield* waitForTransfer(t.token, s.legs[0].merchantTxRef)).status).toBe("Failed")
      expect((yield* waitForTransfer(t.token, s.legs[1].merchantTxRef)).status).toBe("Successful")
      // The leg's money is back in sub_merchant:<id>, waiting for a retry: pending, not settled.
      yield* expectBalance(t, tolu, { collectedKobo: 18_000, settledKobo: 0, pendingKobo: 18_000, inTransitKobo: 0, unsweptKobo: 0 })
      const listed = (yield* call("GET", "/api/v1/settlements", { token: t.token })).body.data[0]
      expect(listed).toMatchObject({ id: s.id, status: "Processing" })
      expect(listed.legs.map((l: any) => l.status)).toEqual(["Failed", "Successful"])
      yield* assertLedgerInvariant

      // The next run retries that leg alone, under a new reference; the fee leg is not paid again.
      const again = yield* run(t)
      expect(again.retriedLegCount).toBe(1)
      expect(again.settledCount).toBe(0)
      const retried = `stl_${s.id}_1_2`
      expect((yield* waitForTransfer(t.token, retried)).status).toBe("Failed")
      expect(yield* providerCalls(s.legs[0].merchantTxRef)).toBe(1)
      expect(yield* providerCalls(retried)).toBe(1)
      expect(yield* providerCalls(s.legs[1].merchantTxRef)).toBe(1)
      const afterRetry = (yield* call("GET", "/api/v1/settlements", { token: t.token })).body.data[0]
      expect(afterRetry.legs.map((l: any) => [l.merchantTxRef, l.status, l.attempts])).toEqual([[retried, "Failed", 2], [s.legs[1].merchantTxRef, "Successful", 1]])
      yield* expectBalance(t, tolu, { collectedKobo: 18_000, settledKobo: 0, pendingKobo: 18_000, inTransitKobo: 0, unsweptKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("after settlement: refunding the settled surplus and holding the settled deposit are 400 nothing_available", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* settlementAccount(t)
      const bol = yield* verifiedSm(t, "Bolanle Adeyemi", "sm-over", DIRECTORY.bolanle, 500)
      const acc = yield* smAccount(t, "over-1", "sm-over", 10_000)
      const [ref] = yield* deposit(t, acc.nuban, [15_000])
      const va = (yield* call("GET", "/api/v1/virtual-accounts/over-1", { token: t.token })).body
      expect(va).toMatchObject({ paymentState: "Overpaid", overpayment: 5_000 })
      const r = yield* run(t)
      expect(r.data[0]).toMatchObject({ accountRef: "over-1", netKobo: 15_000 })
      expect(r.data[0].legs.map((l: any) => l.amountKobo)).toEqual([14_250, 750])
      for (const l of r.data[0].legs) yield* waitForTransfer(t.token, l.merchantTxRef)

      const refund = yield* call("POST", `/api/v1/transactions/${ref}/refund`, { token: t.testOwnerToken })
      expectProblem(refund, 400, "nothing_available")
      const hold = yield* call("POST", `/api/v1/settlements/${ref}/hold`, { token: t.token })
      expectProblem(hold, 400, "nothing_available")
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transfers WHERE tenant_id = ${t.tenantId} AND source = 'refund'`) as unknown as [{ n: number }]
      expect(n).toBe(0)
      yield* expectBalance(t, bol, { collectedKobo: 14_250, settledKobo: 14_250, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("a late reversal (after settlement) posts to tenant_receivable: balance and event show it; new collections pay it off first and the next run settles nothing of them", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const sql = yield* SqlClient.SqlClient
      yield* settlementAccount(t)
      const bol = yield* verifiedSm(t, "Bolanle Adeyemi", "sm-rev", DIRECTORY.bolanle, 0)
      const acc = yield* smAccount(t, "rev-1", "sm-rev")
      const [deposited] = yield* deposit(t, acc.nuban, [10_000])
      const r = yield* run(t)
      expect(r.data[0].legs.map((l: any) => l.amountKobo)).toEqual([10_000])
      yield* waitForSettlement(t, r.data[0].id, "Paid")
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, receivableKobo: 0 })

      // The bank takes the deposit back after the money left: all of it is owed.
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`) as unknown as [{ n: number }]
      const reversal = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: acc.nuban, amountKobo: 10_000, reversedSessionId: deposited!, senderName: null })
      expect(reversal.status).toBe(200)
      yield* waitForTransactions(t.tenantId, n + 1)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, receivableKobo: 10_000 })
      const events = yield* sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'reversal.receivable'`
      expect(events).toHaveLength(1)
      const data = typeof events[0]!.data === "string" ? JSON.parse(events[0]!.data) : events[0]!.data
      expect(data).toMatchObject({ receivableKobo: 10_000, transaction: { reference: reversal.sessionId, accountRef: "rev-1" }, account: { accountRef: "rev-1" } })
      expect(data.risk).toBeDefined()
      // The sub-merchant's settled figures do not change (the debt is the tenant's).
      yield* expectBalance(t, bol, { collectedKobo: 10_000, settledKobo: 10_000, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })

      // New collections, less than what is owed: each pays off what is owed before it counts (the sub-merchant's account's
      // too: the tenant's collections), so nothing becomes available and the next run has nothing to settle.
      yield* fund(t, "rev-2", [4_000])
      yield* deposit(t, acc.nuban, [3_000])
      const next = yield* run(t)
      expect(next.settledCount).toBe(0)
      expect(next.data).toEqual([])
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, receivableKobo: 3_000 })
      const [{ m }] = (yield* sql<{ m: number }>`SELECT count(*)::int AS m FROM settlements WHERE tenant_id = ${t.tenantId}`) as unknown as [{ m: number }]
      expect(m).toBe(1)
      yield* expectBalance(t, bol, { collectedKobo: 10_000, settledKobo: 10_000, pendingKobo: 0, inTransitKobo: 0, unsweptKobo: 0 })
      yield* assertLedgerInvariant
    }))
})
