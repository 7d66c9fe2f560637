import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, DIRECTORY, fund, testTenant, waitForTransfer } from "../transfers/support.js"

// The settlement settings over real HTTP (interface "Settlement settings", DESIGN.md "Money movement"):
// GET/PUT /settings/settlement (the account verified by name enquiry and the name matcher, fields merged, integer
// kobo), GET/PUT /settings/splits (SplitLegRequest validation, each plan error a 400 invalid_split_plan with its
// errors, an empty array clearing the plan), and POST /settlements/run and GET /settlements (roles, the missing
// account, the run lease, paging). Every scenario ends with the ledger invariant.

const SETTLEMENT = "/api/v1/settings/settlement"
const SPLITS = "/api/v1/settings/splits"

const NGOZI = { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }

const putSettlement = (token: string, json: Record<string, unknown>) => call("PUT", SETTLEMENT, { token, json })
const putSplits = (token: string, splits: unknown) => call("PUT", SPLITS, { token, json: { splits } })

/** A sub-merchant, verified to the directory account `to` unless `to` is undefined. */
const subMerchant = (token: string, name: string, reference: string, to?: { accountNumber: string; bankCode: string }) =>
  Effect.gen(function* () {
    const created = yield* call("POST", "/api/v1/sub-merchants", { token, json: { name, reference } })
    expectStatus(created, 201)
    if (to) expectStatus(yield* call("PUT", `/api/v1/sub-merchants/${created.body.id}/payout`, { token, json: { bankCode: to.bankCode, accountNumber: to.accountNumber } }), 200)
    return created.body.id as string
  })

const DEFAULTS = {
  settlementAccountNumber: null, settlementBankCode: null, settlementBankName: null, settlementAccountName: null, verifiedAt: null,
  autoSettle: false, minPayoutKobo: 0, active: false, lastRunAt: null
}

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("settlement settings API", (it) => {
  it.effect("GET /settings/settlement answers the defaults; PUT verifies the account against settlementAccountName", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const initial = yield* call("GET", SETTLEMENT, { token: t.token })
      expectStatus(initial, 200)
      expect(initial.body).toEqual({ ...DEFAULTS, mode: "test" })

      // A name the bank does not give the account: 400, nothing saved.
      const mismatch = yield* putSettlement(t.token, { ...NGOZI, settlementAccountName: "Ibrahim Musa" })
      expectProblem(mismatch, 400, "payout_account_unverified")
      expect(mismatch.body.message).toContain("NGOZI EZE ENTERPRISES")
      // A bad check digit, an account the bank does not know: the same 400.
      expectProblem(yield* putSettlement(t.token, { ...NGOZI, settlementAccountNumber: "3000000033" }), 400, "payout_account_unverified")
      expectProblem(yield* putSettlement(t.token, { ...NGOZI, settlementAccountNumber: DIRECTORY.bolanle.accountNumber }), 400, "payout_account_unverified")
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body).toEqual({ ...DEFAULTS, mode: "test" })

      const before = Date.now()
      const ok = yield* putSettlement(t.token, NGOZI)
      expectStatus(ok, 200)
      expect(ok.body).toEqual({
        ...DEFAULTS, settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementBankName: expect.any(String),
        settlementAccountName: "NGOZI EZE ENTERPRISES", verifiedAt: expect.any(String), mode: "test"
      })
      expect(ok.body.settlementBankName.length).toBeGreaterThan(0)
      expect(Date.parse(ok.body.verifiedAt)).toBeGreaterThanOrEqual(before - 5_000)
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body).toEqual(ok.body)
      // A later mismatch leaves the verified account in place.
      expectProblem(yield* putSettlement(t.token, { ...NGOZI, settlementAccountName: "Tunde Bakare", autoSettle: true }), 400, "payout_account_unverified")
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body).toEqual(ok.body)
      yield* assertLedgerInvariant
    }))

  it.effect("PUT /settings/settlement: the three account fields go together; all null clears; omitted fields keep their value; the active flag", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // Only some of the three: 400 validation_failed (before and after an account is set).
      for (const partial of [
        { settlementAccountNumber: DIRECTORY.ngozi.accountNumber },
        { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011" },
        { settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" },
        { ...NGOZI, settlementAccountName: null }
      ]) expectProblem(yield* putSettlement(t.token, partial), 400, "validation_failed")
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body).toEqual({ ...DEFAULTS, mode: "test" })

      // autoSettle alone: saved, but not active without the account.
      const auto = yield* putSettlement(t.token, { autoSettle: true })
      expectStatus(auto, 200)
      expect(auto.body).toMatchObject({ autoSettle: true, active: false, settlementAccountNumber: null })
      // The account: active now; autoSettle kept.
      const withAccount = yield* putSettlement(t.token, NGOZI)
      expect(withAccount.body).toMatchObject({ autoSettle: true, active: true, minPayoutKobo: 0, settlementAccountNumber: DIRECTORY.ngozi.accountNumber })
      // minPayoutKobo alone: the account and autoSettle kept (verifiedAt too).
      const min = yield* putSettlement(t.token, { minPayoutKobo: 50_000 })
      expect(min.body).toEqual({ ...withAccount.body, minPayoutKobo: 50_000 })
      // An empty body changes nothing.
      expect((yield* putSettlement(t.token, {})).body).toEqual(min.body)
      // autoSettle off: inactive, the rest kept.
      const off = yield* putSettlement(t.token, { autoSettle: false })
      expect(off.body).toEqual({ ...min.body, autoSettle: false, active: false })
      expectProblem(yield* putSettlement(t.token, { ...NGOZI, settlementBankCode: null }), 400, "validation_failed")
      expect(off.body.settlementAccountNumber).toBe(DIRECTORY.ngozi.accountNumber)
      // All three null clears the account (and with it active), keeping the rest.
      const on = yield* putSettlement(t.token, { autoSettle: true })
      expect(on.body.active).toBe(true)
      const cleared = yield* putSettlement(t.token, { settlementAccountNumber: null, settlementBankCode: null, settlementAccountName: null })
      expectStatus(cleared, 200)
      expect(cleared.body).toEqual({ ...DEFAULTS, autoSettle: true, minPayoutKobo: 50_000, active: false, mode: "test" })
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body).toEqual(cleared.body)
      yield* assertLedgerInvariant
    }))

  it.effect("PUT /settings/settlement: minPayoutKobo is integer kobo; unknown fields and bad types are 400; a Member is 403", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      for (const minPayoutKobo of [100.5, "100", -1]) {
        const r = yield* putSettlement(t.token, { minPayoutKobo })
        expectProblem(r, 400, "validation_failed")
        if (minPayoutKobo !== -1) expect(r.body.message).toContain("integer kobo")
      }
      expectProblem(yield* putSettlement(t.token, { autoSettle: "yes" }), 400, "validation_failed")
      expectProblem(yield* putSettlement(t.token, { ...NGOZI, settlementAccountNumber: "12345" }), 400, "validation_failed")
      const unknown = yield* putSettlement(t.token, { autoSettle: true, minimumPayoutKobo: 5 })
      expectProblem(unknown, 400, "unknown_field")
      expect(unknown.body.message).toContain("minimumPayoutKobo")
      // A Member reads but may not change; an Admin and the Owner may.
      const member = yield* dashboardUser(t, "Member")
      expectProblem(yield* putSettlement(member.token, { autoSettle: true }), 403, "insufficient_role")
      expectProblem(yield* putSettlement(member.token, NGOZI), 403, "insufficient_role")
      expectStatus(yield* call("GET", SETTLEMENT, { token: member.token }), 200)
      const admin = yield* dashboardUser(t, "Admin")
      expectStatus(yield* putSettlement(admin.token, { minPayoutKobo: 7 }), 200)
      expectStatus(yield* putSettlement(t.testOwnerToken, { autoSettle: true }), 200)
      expect((yield* call("GET", SETTLEMENT, { token: member.token })).body).toMatchObject({ ...DEFAULTS, autoSettle: true, minPayoutKobo: 7, mode: "test" })
      // Live mode is a configuration of its own.
      expect((yield* call("GET", SETTLEMENT, { token: t.ownerToken })).body).toEqual({ ...DEFAULTS, mode: "live" })
      expect((yield* call("GET", SETTLEMENT, { token: member.liveToken })).body).toEqual({ ...DEFAULTS, mode: "live" })
      yield* assertLedgerInvariant
    }))

  it.effect("PUT /settings/splits: a valid plan is answered as given, GET answers it, an empty array clears it", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      expect((yield* call("GET", SPLITS, { token: t.token })).body).toEqual({ splits: [], updatedAt: null, mode: "test" })
      yield* subMerchant(t.token, "Bolanle Adeyemi", "sm-a", DIRECTORY.bolanle)
      const plan = [
        { subMerchantRef: "sm-a", bps: 2_000, priority: 2 },
        { flatKobo: 100, priority: 1 },
        { subMerchantRef: null, bps: 500, priority: 3 }
      ]
      const put = yield* putSplits(t.token, plan)
      expectStatus(put, 200)
      expect(put.body).toEqual({
        splits: [
          { subMerchantRef: "sm-a", bps: 2_000, flatKobo: null, priority: 2 },
          { subMerchantRef: null, bps: null, flatKobo: 100, priority: 1 },
          { subMerchantRef: null, bps: 500, flatKobo: null, priority: 3 }
        ],
        updatedAt: expect.any(String), mode: "test"
      })
      const got = yield* call("GET", SPLITS, { token: t.token })
      expect(got.body).toEqual(put.body)
      // What GET answers can be sent back as it is (null is the same as left out).
      expect((yield* putSplits(t.token, got.body.splits)).body.splits).toEqual(put.body.splits)
      // Percentages may sum to exactly 10000.
      expectStatus(yield* putSplits(t.token, [{ subMerchantRef: "sm-a", bps: 7_500, priority: 0 }, { bps: 2_500, priority: 1 }]), 200)
      // Empty clears.
      const cleared = yield* putSplits(t.token, [])
      expectStatus(cleared, 200)
      expect(cleared.body).toMatchObject({ splits: [], mode: "test" })
      expect((yield* call("GET", SPLITS, { token: t.token })).body.splits).toEqual([])
      yield* assertLedgerInvariant
    }))

  it.effect("PUT /settings/splits: each plan error is 400 invalid_split_plan with its errors, and the plan is left as it was", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* subMerchant(t.token, "Bolanle Adeyemi", "sm-v", DIRECTORY.bolanle)
      const kept = yield* putSplits(t.token, [{ subMerchantRef: "sm-v", bps: 1_000, priority: 1 }])
      expectStatus(kept, 200)
      const legs = (n: number) => Array.from({ length: n }, (_, i) => ({ bps: 1, priority: i }))
      const cases: ReadonlyArray<readonly [string, unknown, string]> = [
        ["both bps and flatKobo", [{ bps: 100, flatKobo: 100, priority: 1 }], "splits.0"],
        ["neither bps nor flatKobo", [{ priority: 1 }], "splits.0"],
        ["bps 0", [{ bps: 0, priority: 1 }], "splits.0.bps"],
        ["bps over 10000", [{ bps: 10_001, priority: 1 }], "splits.0.bps"],
        ["percentages over 10000", [{ bps: 6_000, priority: 1 }, { subMerchantRef: "sm-v", bps: 4_001, priority: 2 }], "splits"],
        ["duplicate priorities", [{ bps: 100, priority: 1 }, { flatKobo: 5, priority: 1 }], "splits.1.priority"],
        ["more than 20 legs", legs(21), "splits"]
      ]
      for (const [what, plan, path] of cases) {
        const r = yield* putSplits(t.token, plan)
        expectProblem(r, 400, "invalid_split_plan")
        expect(Array.isArray(r.body.errors), what).toBe(true)
        expect(r.body.errors.map((e: any) => e.path), `${what}: ${JSON.stringify(r.body)}`).toContain(path)
      }
      // Every problem of a plan is listed at once.
      const several = yield* putSplits(t.token, [{ bps: 0, priority: 1 }, { bps: 100, flatKobo: 1, priority: 1 }])
      expectProblem(several, 400, "invalid_split_plan")
      expect(several.body.errors.map((e: any) => e.path).sort()).toEqual(["splits.0.bps", "splits.1", "splits.1.priority"])
      // 20 legs is allowed.
      expectStatus(yield* putSplits(t.token, legs(20)), 200)
      expectStatus(yield* putSplits(t.token, [{ subMerchantRef: "sm-v", bps: 1_000, priority: 1 }]), 200)
      // A leg naming no sub-merchant, or one without a verified payout account.
      const unknown = yield* putSplits(t.token, [{ subMerchantRef: "nobody", bps: 100, priority: 1 }])
      expectProblem(unknown, 400, "unknown_sub_merchant")
      expect(unknown.body.errors).toEqual([{ path: "splits.0.subMerchantRef", message: expect.any(String) }])
      yield* subMerchant(t.token, "Ibrahim Musa", "sm-unverified")
      const unverified = yield* putSplits(t.token, [{ bps: 100, priority: 0 }, { subMerchantRef: "sm-unverified", bps: 100, priority: 1 }])
      expectProblem(unverified, 400, "sub_merchant_unverified")
      expect(unverified.body.errors).toEqual([{ path: "splits.1.subMerchantRef", message: expect.any(String) }])
      // An unknown field, in a leg or beside splits; a missing splits; a flat amount that is not integer kobo.
      expectProblem(yield* putSplits(t.token, [{ bps: 100, priority: 1, percent: 1 }]), 400, "unknown_field")
      expectProblem(yield* call("PUT", SPLITS, { token: t.token, json: { splits: [], legs: [] } }), 400, "unknown_field")
      expectProblem(yield* call("PUT", SPLITS, { token: t.token, json: {} }), 400, "validation_failed")
      expectProblem(yield* putSplits(t.token, [{ flatKobo: 10.5, priority: 1 }]), 400, "validation_failed")
      // None of it changed the plan.
      expect((yield* call("GET", SPLITS, { token: t.token })).body).toEqual(
        { ...kept.body, updatedAt: expect.any(String) }
      )
      expect((yield* call("GET", SPLITS, { token: t.token })).body.splits).toEqual([{ subMerchantRef: "sm-v", bps: 1_000, flatKobo: null, priority: 1 }])
      yield* assertLedgerInvariant
    }))

  it.effect("splits: isolated between tenants and modes; a Member reads but may not change them", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      yield* subMerchant(t.token, "Bolanle Adeyemi", "sm-iso", DIRECTORY.bolanle)
      expectStatus(yield* putSplits(t.token, [{ subMerchantRef: "sm-iso", bps: 3_000, priority: 1 }]), 200)
      // The other tenant has no plan and cannot name this tenant's sub-merchant.
      expect((yield* call("GET", SPLITS, { token: other.token })).body).toEqual({ splits: [], updatedAt: null, mode: "test" })
      expectProblem(yield* putSplits(other.token, [{ subMerchantRef: "sm-iso", bps: 3_000, priority: 1 }]), 400, "unknown_sub_merchant")
      // Live mode has no plan and does not see the test-mode sub-merchant.
      expect((yield* call("GET", SPLITS, { token: t.ownerToken })).body).toEqual({ splits: [], updatedAt: null, mode: "live" })
      expectProblem(yield* putSplits(t.ownerToken, [{ subMerchantRef: "sm-iso", bps: 3_000, priority: 1 }]), 400, "unknown_sub_merchant")
      expectStatus(yield* putSplits(t.ownerToken, [{ flatKobo: 1_000, priority: 1 }]), 200)
      expect((yield* call("GET", SPLITS, { token: t.token })).body.splits).toEqual([{ subMerchantRef: "sm-iso", bps: 3_000, flatKobo: null, priority: 1 }])
      expect((yield* call("GET", SPLITS, { token: t.ownerToken })).body.splits).toEqual([{ subMerchantRef: null, bps: null, flatKobo: 1_000, priority: 1 }])
      // Roles.
      const member = yield* dashboardUser(t, "Member")
      expectProblem(yield* putSplits(member.token, []), 403, "insufficient_role")
      const read = yield* call("GET", SPLITS, { token: member.token })
      expectStatus(read, 200)
      expect(read.body.splits).toHaveLength(1)
      expectStatus(yield* putSplits(t.testOwnerToken, []), 200)
      expect((yield* call("GET", SPLITS, { token: t.token })).body.splits).toEqual([])
      expect((yield* call("GET", SPLITS, { token: t.ownerToken })).body.splits).toHaveLength(1)
      yield* assertLedgerInvariant
    }))

  it.effect("POST /settlements/run: 400 settlement_account_missing, 403 for an API key and a Member, 409 while a run holds the lease", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const sql = yield* SqlClient.SqlClient
      yield* fund(t, "run-1", [5_000])
      const missing = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      expectProblem(missing, 400, "settlement_account_missing")
      // autoSettle alone is no account either.
      expectStatus(yield* putSettlement(t.token, { autoSettle: true }), 200)
      expectProblem(yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken }), 400, "settlement_account_missing")
      expectStatus(yield* putSettlement(t.token, NGOZI), 200)
      expectProblem(yield* call("POST", "/api/v1/settlements/run", { token: t.token }), 403, "wrong_plane")
      const member = yield* dashboardUser(t, "Member")
      expectProblem(yield* call("POST", "/api/v1/settlements/run", { token: member.token }), 403, "insufficient_role")
      // None of those settled anything.
      expect((yield* call("GET", "/api/v1/settlements", { token: t.token })).body).toEqual({ data: [], hasMore: false })

      // Another run holds the tenant's lease: 409, nothing settled.
      yield* sql`UPDATE settlement_settings SET run_lease_until = now() + interval '1 hour' WHERE tenant_id = ${t.tenantId} AND mode = 'test'`
      expectProblem(yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken }), 409, "settlement_in_progress")
      expect((yield* call("GET", "/api/v1/settlements", { token: t.token })).body.data).toEqual([])
      // An expired lease (a run that crashed) does not stand in the way.
      yield* sql`UPDATE settlement_settings SET run_lease_until = now() - interval '1 second' WHERE tenant_id = ${t.tenantId} AND mode = 'test'`
      const admin = yield* dashboardUser(t, "Admin")
      const ran = yield* call("POST", "/api/v1/settlements/run", { token: admin.token })
      expectStatus(ran, 200)
      expect(ran.body).toMatchObject({ settledCount: 1, skippedCount: 0, heldBackCount: 0, retriedLegCount: 0, hasMore: false })
      expect(ran.body.data.map((s: any) => [s.accountRef, s.netKobo, s.legs.map((l: any) => [l.kind, l.amountKobo])])).toEqual([["run-1", 5_000, [["tenant", 5_000]]]])
      // The run released its lease and recorded when it ran.
      const [row] = yield* sql<{ lease: Date | null; lastRunAt: Date | null }>`SELECT run_lease_until AS lease, last_run_at FROM settlement_settings
        WHERE tenant_id = ${t.tenantId} AND mode = 'test'`
      expect(row).toMatchObject({ lease: null })
      expect(row!.lastRunAt).not.toBeNull()
      expect((yield* call("GET", SETTLEMENT, { token: t.token })).body.lastRunAt).toEqual(expect.any(String))
      yield* waitForTransfer(t.token, ran.body.data[0].legs[0].merchantTxRef)
      // Nothing left to settle: an empty answer.
      const empty = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      expect(empty.body).toMatchObject({ data: [], settledCount: 0 })
      // Live mode has no account of its own.
      expectProblem(yield* call("POST", "/api/v1/settlements/run", { token: t.ownerToken }), 400, "settlement_account_missing")
      yield* assertLedgerInvariant
    }))

  it.effect("GET /settlements: newest first with take and startingAfter; a Member may read; other tenants and modes see none", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      expectStatus(yield* putSettlement(t.token, NGOZI), 200)
      yield* fund(t, "page-1", [1_000])
      const r1 = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      yield* fund(t, "page-2", [2_000])
      const r2 = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      yield* fund(t, "page-3", [3_000])
      const r3 = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      const ids = [r3, r2, r1].map((r) => r.body.data[0].id as string)
      const all = yield* call("GET", "/api/v1/settlements", { token: t.token })
      expectStatus(all, 200)
      expect(all.body.data.map((s: any) => s.id)).toEqual(ids)
      expect(all.body.data.map((s: any) => s.accountRef)).toEqual(["page-3", "page-2", "page-1"])
      expect(all.body.hasMore).toBe(false)
      const p1 = yield* call("GET", "/api/v1/settlements?take=2", { token: t.token })
      expect(p1.body.data.map((s: any) => s.id)).toEqual(ids.slice(0, 2))
      expect(p1.body.hasMore).toBe(true)
      const p2 = yield* call("GET", `/api/v1/settlements?take=2&startingAfter=${ids[1]}`, { token: t.token })
      expect(p2.body.data.map((s: any) => s.id)).toEqual(ids.slice(2))
      expect(p2.body.hasMore).toBe(false)
      expectProblem(yield* call("GET", "/api/v1/settlements?startingAfter=set_nope", { token: t.token }), 400, "unknown_starting_after")
      expectProblem(yield* call("GET", "/api/v1/settlements?take=0", { token: t.token }), 400, "validation_failed")
      const member = yield* dashboardUser(t, "Member")
      expect((yield* call("GET", "/api/v1/settlements", { token: member.token })).body.data.map((s: any) => s.id)).toEqual(ids)
      const other = yield* testTenant
      expect((yield* call("GET", "/api/v1/settlements", { token: other.token })).body).toEqual({ data: [], hasMore: false })
      expectProblem(yield* call("GET", `/api/v1/settlements?startingAfter=${ids[0]}`, { token: other.token }), 400, "unknown_starting_after")
      expect((yield* call("GET", "/api/v1/settlements", { token: t.ownerToken })).body).toEqual({ data: [], hasMore: false })
      for (const s of all.body.data) yield* waitForTransfer(t.token, s.legs[0].merchantTxRef)
      yield* assertLedgerInvariant
    }))
})
