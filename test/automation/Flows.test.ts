import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, expectStatus, inviteAndLogin } from "../support/ApiHelpers.js"
import { createAccount } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, testTenant, type MoneyTenant } from "../transfers/support.js"
import { createFlow, createRule, runsOf, waitForAutomation } from "./support.js"

/** A deposit through the sandbox simulator (the same reconciliation as a live webhook); waits for it and its automation. */
const simulate = (t: MoneyTenant, accountRef: string, amountKobo: number, senderName = "Adaeze Okafor") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const before = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`)[0]!.n
    const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef, amountKobo, senderName } })
    expectStatus(r, 200)
    // The simulator answers once the deposit is received; its transaction follows from the reconciler.
    const [row] = yield* waitFor(
      "the simulated deposit reconciled",
      sql<{ reference: string }>`SELECT reference FROM transactions WHERE tenant_id = ${t.tenantId} ORDER BY id LIMIT 1 OFFSET ${before}`,
      { until: (rows) => rows.length === 1, timeoutMs: 20_000, intervalMs: 20 }
    )
    yield* waitForAutomation(t.tenantId)
    return row!.reference
  })

const flowRunsOf = (token: string) => Effect.map(call("GET", "/api/v1/flows/runs", { token }), (r) => r.body.data as Array<any>)

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("payment flows", (it) => {
  it.effect("CRUD on the dashboard plane: wire spellings in any case, PUT replaces, enabled toggles, 404s, roles and planes", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const owner = t.testOwnerToken
      expectProblem(yield* call("POST", "/api/v1/flows", { token: t.token, json: { name: "x", trigger: "deposit", actions: ["notify"] } }), 403, "wrong_plane")
      expectProblem(yield* call("GET", "/api/v1/flows", { token: t.token }), 403, "wrong_plane")
      const bad = yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "paid", actions: ["notify"] } })
      expectProblem(bad, 400, "validation_failed")
      expect(bad.body.message).toContain("deposit, overpaid, underpaid, fully-paid, high-risk")
      const badAction = yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "deposit", actions: ["notify", "refund"] } })
      expectProblem(badAction, 400, "validation_failed")
      expect(badAction.body.message).toContain("hold, release, notify, flag")
      expectProblem(yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "deposit", actions: [] } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/flows", { token: owner, json: { name: " ", trigger: "deposit", actions: ["notify"] } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "deposit", actions: ["notify"], minAmountKobo: 1.5 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "deposit", actions: ["notify"], minRiskScore: -1 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "x", trigger: "deposit", actions: ["notify"], colour: "red" } }), 400, "unknown_field")

      const created = yield* call("POST", "/api/v1/flows", { token: owner, json: { name: "Big payers", trigger: "DEPOSIT", actions: ["Hold", "NOTIFY"], minAmountKobo: 100_000, priority: 5 } })
      expectStatus(created, 201)
      expect(created.body).toMatchObject({ name: "Big payers", trigger: "deposit", actions: ["hold", "notify"], minAmountKobo: 100_000, minRiskScore: null, priority: 5, enabled: true })
      const id = created.body.id as string
      expect((yield* call("GET", `/api/v1/flows/${id}`, { token: owner })).body).toEqual(created.body)
      const replaced = yield* call("PUT", `/api/v1/flows/${id}`, { token: owner, json: { name: "Risky", trigger: "high-risk", actions: ["flag"], minRiskScore: 50 } })
      expectStatus(replaced, 200)
      expect(replaced.body).toMatchObject({ id, name: "Risky", trigger: "high-risk", actions: ["flag"], minAmountKobo: null, minRiskScore: 50, priority: 100, enabled: true })
      const off = yield* call("POST", `/api/v1/flows/${id}/enabled`, { token: owner, json: { enabled: false } })
      expect(off.body).toMatchObject({ id, enabled: false })
      expectProblem(yield* call("POST", `/api/v1/flows/${id}/enabled`, { token: owner, json: { enabled: "no" } }), 400, "validation_failed")
      expect((yield* call("GET", "/api/v1/flows", { token: owner })).body).toMatchObject({ data: [{ id, enabled: false }], hasMore: false })

      // A Member reads, but neither changes nor deletes; another tenant sees nothing.
      const member = yield* inviteAndLogin(t.ownerToken, "Member", id.slice(-6))
      const memberTest = yield* call("POST", "/api/v1/dashboard/login", { json: { email: member.email, password: member.password, mode: "test" } })
      const m = memberTest.body.accessToken as string
      expectStatus(yield* call("GET", `/api/v1/flows/${id}`, { token: m }), 200)
      expectStatus(yield* call("GET", "/api/v1/flows/runs", { token: m }), 200)
      expectProblem(yield* call("PUT", `/api/v1/flows/${id}`, { token: m, json: { name: "x", trigger: "deposit", actions: ["notify"] } }), 403, "insufficient_role")
      expectProblem(yield* call("DELETE", `/api/v1/flows/${id}`, { token: m }), 403, "insufficient_role")
      // The live mode is another world.
      expectProblem(yield* call("GET", `/api/v1/flows/${id}`, { token: t.ownerToken }), 404, "flow_not_found")
      const other = yield* testTenant
      expectProblem(yield* call("GET", `/api/v1/flows/${id}`, { token: other.testOwnerToken }), 404, "flow_not_found")
      expectProblem(yield* call("PUT", `/api/v1/flows/${id}`, { token: other.testOwnerToken, json: { name: "x", trigger: "deposit", actions: ["notify"] } }), 404, "flow_not_found")

      expectStatus(yield* call("DELETE", `/api/v1/flows/${id}`, { token: owner }), 204)
      expectProblem(yield* call("DELETE", `/api/v1/flows/${id}`, { token: owner }), 404, "flow_not_found")
      expectProblem(yield* call("POST", `/api/v1/flows/${id}/enabled`, { token: owner, json: { enabled: true } }), 404, "flow_not_found")
      expectProblem(yield* call("POST", `/api/v1/flows/${id}/dry-run`, { token: owner }), 404, "flow_not_found")
    }))

  it.effect("simulated deposits fire flows as live ones: gates, priority after the rules, disabled flows silent, PUT for the next deposit only, runs newest first", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const owner = t.testOwnerToken
      yield* createAccount(t.token, "fl-1", "Adaeze Okafor", 100_000)
      const rule = yield* createRule(t.token, { trigger: "AnyDeposit", action: "Notify", priority: 1_000 })
      const second = yield* createFlow(owner, { name: "second", trigger: "deposit", actions: ["notify"], priority: 20 })
      const first = yield* createFlow(owner, { name: "first", trigger: "underpaid", actions: ["hold", "notify"], priority: 10 })
      const gated = yield* createFlow(owner, { name: "big only", trigger: "deposit", actions: ["notify"], minAmountKobo: 30_001 })
      const atGate = yield* createFlow(owner, { name: "at gate", trigger: "deposit", actions: ["notify"], minAmountKobo: 30_000 })
      const off = yield* createFlow(owner, { name: "off", trigger: "deposit", actions: ["notify"], enabled: false })

      const d1 = yield* simulate(t, "fl-1", 30_000)
      const fired1 = (yield* runsOf(t.tenantId)).filter((r) => r.transactionReference === d1).map((r) => r.sourceId)
      // Rules first (whatever their priority), then flows in ascending priority; a gate under its line and a disabled flow do not fire.
      expect(fired1).toEqual([rule.id, first.id, second.id, atGate.id])
      expect(fired1).not.toContain(gated.id)
      expect(fired1).not.toContain(off.id)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 30_000 })
      const runs = yield* flowRunsOf(owner)
      expect(runs.map((r) => r.flowId)).toEqual([atGate.id, second.id, first.id])
      expect(runs[2]).toMatchObject({
        flowName: "first", transactionReference: d1, accountRef: "fl-1",
        steps: [{ action: "hold", outcome: "held 300.00 NGN in escrow" }, { action: "notify", outcome: expect.stringMatching(/^sent flow\.notify \(event evt_/) }]
      })

      // PUT: the deposit after it sees the new configuration; the run before keeps what ran.
      expectStatus(yield* call("PUT", `/api/v1/flows/${second.id}`, { token: owner, json: { name: "second v2", trigger: "fully-paid", actions: ["release", "notify"], priority: 20 } }), 200)
      expectStatus(yield* call("POST", `/api/v1/flows/${off.id}/enabled`, { token: owner, json: { enabled: true } }), 200)
      const d2 = yield* simulate(t, "fl-1", 70_000)
      const fired2 = (yield* runsOf(t.tenantId)).filter((r) => r.transactionReference === d2)
      expect(fired2.map((r) => r.sourceId)).toEqual([rule.id, second.id, gated.id, atGate.id, off.id])
      // fully-paid released what the underpaid flow held.
      expect(fired2[1]!.steps![0]).toEqual({ action: "release", outcome: "released 300.00 NGN held on 1 deposit" })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 100_000 })
      const all = yield* flowRunsOf(owner)
      expect(all.find((r) => r.transactionReference === d1 && r.flowId === second.id)).toMatchObject({ flowName: "second" })
      expect(all.find((r) => r.transactionReference === d2 && r.flowId === second.id)).toMatchObject({ flowName: "second v2" })
      expect(all[0]!.transactionReference).toBe(d2)
      const page = yield* call("GET", "/api/v1/flows/runs?take=2", { token: owner })
      expect(page.body.hasMore).toBe(true)
      const rest = yield* call("GET", `/api/v1/flows/runs?take=50&startingAfter=${page.body.data[1].id}`, { token: owner })
      expect([...page.body.data, ...rest.body.data].map((r: any) => r.id)).toEqual(all.map((r) => r.id))

      // Events: one flow.notify per notify step, carrying the flow and the transaction.
      const sql = yield* SqlClient.SqlClient
      const notes = yield* sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'flow.notify' ORDER BY id`
      expect(notes).toHaveLength(7)
      expect(notes.map((n) => (typeof n.data === "string" ? JSON.parse(n.data) : n.data))[0]).toMatchObject({ flowId: first.id, trigger: "underpaid", transaction: { reference: d1 } })
      yield* assertLedgerInvariant
    }))

  it.effect("high-risk without a score fires on deposits held for review; hold on one awaiting review holds nothing; overpaid holds the surplus", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const owner = t.testOwnerToken
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE tenants SET risk_threshold = 50 WHERE id = ${t.tenantId}`
      yield* createAccount(t.token, "fl-2", "Adaeze Okafor", 10_000)
      const risky = yield* createFlow(owner, { name: "risky", trigger: "high-risk", actions: ["hold", "flag"] })
      const over = yield* createFlow(owner, { name: "over", trigger: "overpaid", actions: ["hold"] })
      const held = yield* simulate(t, "fl-2", 4_000, "Bolanle Adeyemi")
      expect((yield* call("GET", `/api/v1/transactions/${held}`, { token: t.token })).body).toMatchObject({ status: "PendingReview", flagged: false })
      const runs = yield* runsOf(t.tenantId)
      expect(runs.map((r) => r.sourceId)).toEqual([risky.id])
      expect(runs[0]!.steps).toEqual([
        { action: "hold", outcome: "held nothing: the deposit awaits review, so its money is not in the account yet" },
        { action: "flag", outcome: "flagged nothing: the deposit already awaits review" }
      ])
      const clean = yield* simulate(t, "fl-2", 15_000)
      expect((yield* runsOf(t.tenantId)).filter((r) => r.transactionReference === clean).map((r) => r.sourceId)).toEqual([over.id])
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000, availableKobo: 10_000, pendingReviewKobo: 4_000 })

      // Dry run: a disabled flow too, over the last deposits, nothing written.
      expectStatus(yield* call("POST", `/api/v1/flows/${over.id}/enabled`, { token: owner, json: { enabled: false } }), 200)
      const before = (yield* runsOf(t.tenantId)).length
      const dry = yield* call("POST", `/api/v1/flows/${over.id}/dry-run`, { token: owner, json: { take: 10 } })
      expectStatus(dry, 200)
      expect(dry.body.data).toEqual([
        { transactionReference: clean, accountRef: "fl-2", amountKobo: 15_000, fired: true, steps: [{ action: "hold", outcome: "would hold up to 50.00 NGN in escrow (what of it is still free)" }] },
        { transactionReference: held, accountRef: "fl-2", amountKobo: 4_000, fired: false, steps: [] }
      ])
      expectStatus(yield* call("POST", `/api/v1/flows/${risky.id}/dry-run`, { token: owner }), 200)
      expectProblem(yield* call("POST", `/api/v1/flows/${risky.id}/dry-run`, { token: owner, json: { take: 0 } }), 400, "validation_failed")
      expect((yield* runsOf(t.tenantId)).length).toBe(before)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000 })
      yield* assertLedgerInvariant
    }))
})
