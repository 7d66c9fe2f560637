import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, testTenant } from "../transfers/support.js"
import { createRule, runsOf, waitForAutomation } from "./support.js"

/** The tenant's webhook events of a type, oldest first (from the outbox). */
const eventsOf = (tenantId: string, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${tenantId} AND event_type = ${type} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))), Effect.orDie)

/** One deposit from a payer into an existing account; waits for it and for the rules and flows it fires. */
const deposit = (t: MoneyTenant, nuban: string, amountKobo: number, senderName = "ADAEZE OKAFOR") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const sent = yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName, senderAccountNumber: DIRECTORY.adaeze.accountNumber })
    expect(sent.status).toBe(200)
    yield* waitFor(`deposit ${sent.sessionId} reconciled`, sql`SELECT 1 FROM transactions WHERE reference = ${sent.sessionId}`, { until: (r) => r.length === 1 })
    yield* waitForAutomation(t.tenantId)
    return sent.sessionId
  })

const firedBy = (tenantId: string, reference: string) =>
  Effect.map(runsOf(tenantId), (runs) => runs.filter((r) => r.transactionReference === reference).map((r) => r.sourceId))

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("money rules", (it) => {
  it.effect("validation: enums in any case with the allowed values listed, gates, kobo, limits, planes", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const bad = yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "Sometimes", action: "Hold" } })
      expectProblem(bad, 400, "validation_failed")
      expect(bad.body.message).toContain("Overpaid, Underpaid, HighRisk, AnyDeposit")
      const badAction = yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "AnyDeposit", action: "Refund" } })
      expectProblem(badAction, 400, "validation_failed")
      expect(badAction.body.message).toContain("Hold, Notify, ReviewFlag")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "Overpaid", action: "Hold", thresholdKobo: 10.5 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "Overpaid", action: "Hold", thresholdKobo: "100" } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "HighRisk", action: "Hold", minRiskScore: 101 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "HighRisk", action: "Hold" } }), 400, "gate_required")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "AnyDeposit", action: "Hold", thresholdKobo: 5 } }), 400, "gate_not_applicable")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "Overpaid", action: "Hold", minRiskScore: 5 } }), 400, "gate_not_applicable")
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "AnyDeposit", action: "Notify", threshold: 5 } }), 400, "unknown_field")
      const ok = yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "  highrisk ", action: "reviewflag", minRiskScore: 0, priority: 7 } })
      expectStatus(ok, 201)
      expect(ok.body).toMatchObject({ trigger: "HighRisk", action: "ReviewFlag", minRiskScore: 0, thresholdKobo: null, priority: 7 })
      const list = yield* call("GET", "/api/v1/rules", { token: t.testOwnerToken })
      expect(list.body).toMatchObject({ data: [{ id: ok.body.id }], hasMore: false })
      // A Member may read but not change; another tenant sees nothing of it.
      const other = yield* testTenant
      expect((yield* call("GET", "/api/v1/rules", { token: other.token })).body.data).toEqual([])
      expectProblem(yield* call("DELETE", `/api/v1/rules/${ok.body.id}`, { token: other.token }), 404, "rule_not_found")
      expectStatus(yield* call("DELETE", `/api/v1/rules/${ok.body.id}`, { token: t.token }), 204)
      expectProblem(yield* call("DELETE", `/api/v1/rules/${ok.body.id}`, { token: t.token }), 404, "rule_not_found")
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 100; i++) yield* sql`INSERT INTO money_rules (id, tenant_id, mode, trigger, action, priority, created_by) VALUES (${`rule_x${i}`}, ${t.tenantId}, 'test', 'AnyDeposit', 'Notify', 1, 'test')`
      expectProblem(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "AnyDeposit", action: "Notify" } }), 409, "limit_reached")
      const page = yield* call("GET", "/api/v1/rules?take=60", { token: t.token })
      expect(page.body.data).toHaveLength(60)
      expect(page.body.hasMore).toBe(true)
      const next = yield* call("GET", `/api/v1/rules?take=60&startingAfter=${page.body.data[59].id}`, { token: t.token })
      expect(next.body.data).toHaveLength(40)
      expect(next.body.hasMore).toBe(false)
    }))

  it.effect("Overpaid gate at, under and over the surplus; Hold escrows the surplus", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const at = yield* createRule(t.token, { trigger: "Overpaid", action: "Notify", thresholdKobo: 5_000 })
      const under = yield* createRule(t.token, { trigger: "Overpaid", action: "Notify", thresholdKobo: 4_999 })
      const over = yield* createRule(t.token, { trigger: "Overpaid", action: "Notify", thresholdKobo: 5_001 })
      const hold = yield* createRule(t.token, { trigger: "Overpaid", action: "Hold" })
      const { account } = yield* fund(t, "op-1", [], { expected: 10_000 })
      const exact = yield* deposit(t, account.nuban, 10_000)
      expect(yield* firedBy(t.tenantId, exact)).toEqual([])
      const surplus = yield* deposit(t, account.nuban, 5_000)
      expect((yield* firedBy(t.tenantId, surplus)).sort()).toEqual([at.id, under.id, hold.id].sort())
      expect(yield* firedBy(t.tenantId, surplus)).not.toContain(over.id)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000, availableKobo: 10_000 })
      const notes = yield* eventsOf(t.tenantId, "rule.notify")
      expect(notes).toHaveLength(2)
      expect(notes[0]).toMatchObject({ trigger: "Overpaid", transaction: { reference: surplus, reconciliationStatus: "Overpaid" } })
      // The classification is the reconciler's, untouched.
      expect((yield* call("GET", `/api/v1/transactions/${surplus}`, { token: t.token })).body).toMatchObject({ status: "Completed", reconciliationStatus: "Overpaid", flagged: false })
      yield* assertLedgerInvariant
    }))

  it.effect("Underpaid gate on the deficit after the deposit; Hold escrows the deposit", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const at = yield* createRule(t.token, { trigger: "Underpaid", action: "Hold", thresholdKobo: 6_000 })
      const under = yield* createRule(t.token, { trigger: "Underpaid", action: "Notify", thresholdKobo: 5_999 })
      const over = yield* createRule(t.token, { trigger: "Underpaid", action: "Notify", thresholdKobo: 6_001 })
      const { account } = yield* fund(t, "up-1", [], { expected: 10_000 })
      const first = yield* deposit(t, account.nuban, 4_000)
      expect((yield* firedBy(t.tenantId, first)).sort()).toEqual([at.id, under.id].sort())
      expect(yield* firedBy(t.tenantId, first)).not.toContain(over.id)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 4_000, availableKobo: 0 })
      // Paying the rest leaves no deficit: no Underpaid rule fires.
      const rest = yield* deposit(t, account.nuban, 6_000)
      expect(yield* firedBy(t.tenantId, rest)).toEqual([])
      const runs = yield* runsOf(t.tenantId)
      expect(runs.find((r) => r.sourceId === at.id)!.steps).toEqual([{ action: "hold", outcome: "held 40.00 NGN in escrow" }])
      yield* assertLedgerInvariant
    }))

  it.effect("HighRisk gate at, under and over the score; ReviewFlag flags without moving money; AnyDeposit always; priority order", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const account = yield* createAccount(t.token, "hr-1", "Adaeze Okafor")
      const probe = yield* deposit(t, account.nuban, 1_000, "BOLANLE ADEYEMI")
      const score = (yield* call("GET", `/api/v1/transactions/${probe}`, { token: t.token })).body.riskScore as number
      expect(score).toBeGreaterThan(1)
      expect(score).toBeLessThan(70)
      const any2 = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Notify", priority: 20 })
      const flag = yield* createRule(t.token, { trigger: "HighRisk", action: "ReviewFlag", minRiskScore: score, priority: 10 })
      const under = yield* createRule(t.token, { trigger: "HighRisk", action: "Notify", minRiskScore: score - 1, priority: 30 })
      const over = yield* createRule(t.token, { trigger: "HighRisk", action: "Notify", minRiskScore: score + 1, priority: 5 })
      const any1 = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Notify", priority: 0 })
      const risky = yield* deposit(t, account.nuban, 2_000, "BOLANLE ADEYEMI")
      const riskyScore = (yield* call("GET", `/api/v1/transactions/${risky}`, { token: t.token })).body.riskScore as number
      expect(riskyScore).toBe(score)
      // In ascending priority, and only those whose gate is met.
      expect(yield* firedBy(t.tenantId, risky)).toEqual([any1.id, flag.id, any2.id, under.id])
      expect(yield* firedBy(t.tenantId, risky)).not.toContain(over.id)
      const txn = (yield* call("GET", `/api/v1/transactions/${risky}`, { token: t.token })).body
      expect(txn).toMatchObject({ status: "Completed", flagged: true, reconciliationStatus: "Credited" })
      expect(txn.flagReasons[0]).toContain(`risk score ${score}`)
      const queue = yield* call("GET", "/api/v1/transactions?flagged=TRUE", { token: t.token })
      expect(queue.body.data.map((x: any) => x.reference)).toEqual([risky])
      expect(yield* eventsOf(t.tenantId, "transaction.flagged")).toHaveLength(1)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 3_000, heldKobo: 0 })
      // A trusted payer: only AnyDeposit fires.
      const clean = yield* deposit(t, account.nuban, 500)
      expect(yield* firedBy(t.tenantId, clean)).toEqual([any1.id, any2.id])

      // A reviewer approves the flagged deposit: the flag is cleared, the money stays.
      expectProblem(yield* call("POST", `/api/v1/transactions/${clean}/review`, { token: t.testOwnerToken, json: { decision: "approve" } }), 409, "not_pending_review")
      const approved = yield* call("POST", `/api/v1/transactions/${risky}/review`, { token: t.testOwnerToken, json: { decision: "approve", note: "known payer" } })
      expectStatus(approved, 200)
      expect(approved.body).toMatchObject({ status: "Completed", flagged: false, review: { decision: "approve" } })
      expect((yield* call("GET", "/api/v1/transactions?flagged=true", { token: t.token })).body.data).toEqual([])
      yield* assertLedgerInvariant
    }))

  it.effect("a reviewer's reject of a flagged deposit takes its credit (and its hold) back to suspense:rejected", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createRule(t.token, { trigger: "AnyDeposit", action: "ReviewFlag", priority: 1 })
      yield* createRule(t.token, { trigger: "AnyDeposit", action: "Hold", priority: 2 })
      const account = yield* createAccount(t.token, "rj-1", "Adaeze Okafor", 10_000)
      const ref = yield* deposit(t, account.nuban, 4_000)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 4_000 })
      const rejected = yield* call("POST", `/api/v1/transactions/${ref}/review`, { token: t.testOwnerToken, json: { decision: "REJECT" } })
      expectStatus(rejected, 200)
      expect(rejected.body).toMatchObject({ status: "Rejected", flagged: false, review: { decision: "reject" } })
      expect((yield* call("GET", "/api/v1/virtual-accounts/rj-1", { token: t.token })).body).toMatchObject({ amountPaidKobo: 0 })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 0 })
      expectProblem(yield* call("POST", `/api/v1/transactions/${ref}/review`, { token: t.testOwnerToken, json: { decision: "approve" } }), 409, "not_pending_review")
      yield* assertLedgerInvariant
    }))

  it.effect("dry run: what a rule would do to recent deposits, with no effect", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "dr-1", [10_000, 3_000], { expected: 10_000 })
      const dry = yield* call("POST", "/api/v1/rules/dry-run", { token: t.token, json: { trigger: "Overpaid", action: "Hold", take: 5 } })
      expectStatus(dry, 200)
      // A rule's step names its action as the rule does (`Hold`); a flow's stay lower-case (Flows.test.ts).
      expect(dry.body.data).toEqual([
        { transactionReference: references[1], accountRef: "dr-1", amountKobo: 3_000, fired: true, steps: [{ action: "Hold", outcome: "would hold up to 30.00 NGN in escrow (what of it is still free)" }] },
        { transactionReference: references[0], accountRef: "dr-1", amountKobo: 10_000, fired: false, steps: [] }
      ])
      // Whatever case the request used, the step says the rule's own spelling, for every action.
      for (const [asked, spelt] of [["reviewflag", "ReviewFlag"], ["NOTIFY", "Notify"], ["hold", "Hold"]] as const) {
        const any = yield* call("POST", "/api/v1/rules/dry-run", { token: t.token, json: { trigger: "AnyDeposit", action: asked, take: 1 } })
        expectStatus(any, 200)
        expect(any.body.data.map((r: { steps: ReadonlyArray<{ action: string }> }) => r.steps.map((s) => s.action)), asked).toEqual([[spelt]])
      }
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0 })
      expect(yield* runsOf(t.tenantId)).toEqual([])
      expectProblem(yield* call("POST", "/api/v1/rules/dry-run", { token: t.token, json: { trigger: "Overpaid", action: "Hold", take: 501 } }), 400, "validation_failed")
    }))
})
