import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { FLOW_TRIGGERS, type FlowConfig, planFirings, RULE_TRIGGERS, type RuleConfig } from "../../src/domain/Automation.js"
import type { Mode } from "../../src/domain/Mode.js"
import { BUILT_IN } from "../../services/Capabilities.js"
import { Outbox } from "../../services/outbox/Outbox.js"
import { interestJoin } from "../../services/outbox/Registry.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { createAccount, testTenant } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"

/**
 * Pending rows only for the consumers an event concerns (issue 33): webhooks when the tenant has an active endpoint in
 * the mode, automation when it has a money rule or an enabled payment flow, billing when the account has a live
 * schedule; the relay always (insights reads deposits by commit horizon: services/insights/InsightsCursor.ts). No
 * workers run here, so the rows stay as staged. The reconciler stages through the same `Outbox.prepare` SQL as
 * `Outbox.stage` (services/deposits/HotPath.ts).
 */

/** What the automation consumer's interest reads of a deposit event (a risky one unless told; no account unless told). */
interface Facts {
  readonly riskScore: number
  readonly amountKobo: number
  readonly status: "Completed" | "PendingReview"
  /** The account as the deposit left it. */
  readonly account?: { readonly expectedAmountKobo: number | null; readonly overpayment: number; readonly deficit: number } | null
}
const RISKY: Facts = { riskScore: 80, amountKobo: 10_000, status: "Completed" }

const deposit = (tenantId: string, mode: Mode, accountRef: string, facts: Facts = RISKY) => {
  const { account = null, ...transaction } = facts
  return Effect.flatMap(Outbox, (outbox) =>
    outbox.stage([{
      tenantId, mode, subjectKey: accountRef, type: "transaction.reviewed",
      data: { transaction: { reference: `ref-${accountRef}`, ...transaction }, account } as never
    }, {
      tenantId, mode, subjectKey: accountRef, type: "deposit.reconciled",
      data: { transaction: { reference: `ref-${accountRef}`, ...transaction }, account, risk: { score: facts.riskScore, reasons: [] } } as never
    }]))
}

/** The consumers with a pending row for each staged event, by event type. */
const consumersOf = (events: ReadonlyArray<{ readonly id: string; readonly type: string }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(events, (e) =>
      sql<{ consumer: string }>`SELECT p.consumer FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id WHERE o.event_id = ${e.id} ORDER BY 1`.pipe(
        Effect.map((rows) => [e.type, rows.map((r) => r.consumer)] as const)
      ))).pipe(Effect.map((pairs) => Object.fromEntries(pairs)), Effect.orDie)

const ALWAYS = ["relay"]

layer(makeTestApp({ workers: false }), { timeout: 60_000, excludeTestServices: true })("pending rows by interest", (it) => {
  it.effect("a tenant with nothing configured costs only the relay; each configuration adds its consumer, for its tenant, mode and account", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      yield* createAccount(t.token, "int-a", "Ada Obi")
      yield* createAccount(t.token, "int-b", "Bola Ade")

      const nothing = yield* consumersOf(yield* deposit(t.tenantId, "test", "int-a"))
      expect(nothing).toEqual({ "transaction.reviewed": ALWAYS, "deposit.reconciled": ALWAYS })

      // An endpoint: every public event of the tenant's test mode goes to the webhook stager.
      expectStatus(yield* call("POST", "/api/v1/webhook-endpoints", { token: t.token, json: { url: "http://127.0.0.1:9/hook" } }), 201)
      expect(yield* consumersOf(yield* deposit(t.tenantId, "test", "int-a"))).toEqual({
        "transaction.reviewed": ["relay", "webhooks"], "deposit.reconciled": ["relay", "webhooks"]
      })

      // A money rule: deposits go to the planner (review decisions are not its).
      expectStatus(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "HighRisk", action: "ReviewFlag", minRiskScore: 60 } }), 201)
      expect(yield* consumersOf(yield* deposit(t.tenantId, "test", "int-a"))).toEqual({
        "transaction.reviewed": ["relay", "webhooks"], "deposit.reconciled": ["automation", "relay", "webhooks"]
      })

      // A live schedule on int-a: its deposits and review decisions go to billing; int-b's do not.
      const schedule = yield* call("POST", "/api/v1/billing/schedules", {
        token: t.token, json: { accountRef: "int-a", interval: "Weekly", amountKobo: 7_000, dueOffsetDays: 0, reference: "int-a-weekly" }
      })
      expectStatus(schedule, 201)
      expect(yield* consumersOf(yield* deposit(t.tenantId, "test", "int-a"))).toEqual({
        "transaction.reviewed": ["billing", "relay", "webhooks"], "deposit.reconciled": ["automation", "billing", "relay", "webhooks"]
      })
      expect(yield* consumersOf(yield* deposit(t.tenantId, "test", "int-b"))).toEqual({
        "transaction.reviewed": ["relay", "webhooks"], "deposit.reconciled": ["automation", "relay", "webhooks"]
      })

      // Cancelled, the schedule stops counting; the other mode and the other tenant never counted.
      const cancelled = yield* call("POST", `/api/v1/billing/schedules/${schedule.body.id}/cancel`, { token: t.token })
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
      expect((yield* consumersOf(yield* deposit(t.tenantId, "test", "int-a")))["deposit.reconciled"]).toEqual(["automation", "relay", "webhooks"])
      expect(yield* consumersOf(yield* deposit(t.tenantId, "live", "int-a"))).toEqual({ "transaction.reviewed": ALWAYS, "deposit.reconciled": ALWAYS })
      expect(yield* consumersOf(yield* deposit(other.tenantId, "test", "int-a"))).toEqual({ "transaction.reviewed": ALWAYS, "deposit.reconciled": ALWAYS })
    }))

  it("no consumer's condition parses an event's envelope: a deposit's figures come as the staging statement's facts", () => {
    // The envelope is json text: every `#>>` on it parsed the whole of it, in the reconciler's transaction (issue 33).
    const join = interestJoin(BUILT_IN)
    expect(join).toContain("x.risk_score")
    expect(join).not.toContain("envelope")
  })

  it.effect("a payment flow counts only while enabled", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const flow = yield* call("POST", "/api/v1/flows", { token: t.testOwnerToken, json: { name: "risky", trigger: "high-risk", actions: ["notify"], minRiskScore: 60 } })
      expectStatus(flow, 201)
      expect((yield* consumersOf(yield* deposit(t.tenantId, "test", "f-a")))["deposit.reconciled"]).toEqual(["automation", "relay"])
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE payment_flows SET enabled = false WHERE tenant_id = ${t.tenantId}`.pipe(Effect.orDie)
      expect((yield* consumersOf(yield* deposit(t.tenantId, "test", "f-a")))["deposit.reconciled"]).toEqual(ALWAYS)
    }))

  it.effect("the planner gets only the deposits a rule or flow might fire: each gate the event can answer, checked at staging", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const automationFor = (t: { tenantId: string }, facts: Facts) =>
        Effect.map(deposit(t.tenantId, "test", "g-a", facts).pipe(Effect.flatMap(consumersOf)), (c) => c["deposit.reconciled"]!.includes("automation"))
      const calm: Facts = { riskScore: 10, amountKobo: 10_000, status: "Completed" }

      // A HighRisk rule at 60: from a score of 60 up, not below.
      const t = yield* testTenant
      expectStatus(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "HighRisk", action: "ReviewFlag", minRiskScore: 60 } }), 201)
      expect(yield* automationFor(t, calm)).toBe(false)
      expect(yield* automationFor(t, { ...calm, riskScore: 59 })).toBe(false)
      expect(yield* automationFor(t, { ...calm, riskScore: 60 })).toBe(true)
      // An Overpaid rule: a credited deposit that left its account with an expected amount overpaid; not one without an
      // account, without an expected amount, awaiting review, or that left nothing over.
      const o = yield* testTenant
      expectStatus(yield* call("POST", "/api/v1/rules", { token: o.token, json: { trigger: "Overpaid", action: "Notify" } }), 201)
      const over = { expectedAmountKobo: 5_000, overpayment: 500, deficit: 0 }
      expect(yield* automationFor(o, calm)).toBe(false)
      expect(yield* automationFor(o, { ...calm, account: { ...over, overpayment: 0 } })).toBe(false)
      expect(yield* automationFor(o, { ...calm, account: { ...over, expectedAmountKobo: null } })).toBe(false)
      expect(yield* automationFor(o, { ...calm, status: "PendingReview", account: over })).toBe(false)
      expect(yield* automationFor(o, { ...calm, account: over })).toBe(true)
      // An Underpaid rule beside it: also a credited deposit that left a deficit.
      expectStatus(yield* call("POST", "/api/v1/rules", { token: o.token, json: { trigger: "Underpaid", action: "Notify" } }), 201)
      expect(yield* automationFor(o, { ...calm, account: { expectedAmountKobo: 5_000, overpayment: 0, deficit: 0 } })).toBe(false)
      expect(yield* automationFor(o, { ...calm, account: { expectedAmountKobo: 5_000, overpayment: 0, deficit: 100 } })).toBe(true)
      // AnyDeposit: every deposit (the planner decides).
      expectStatus(yield* call("POST", "/api/v1/rules", { token: t.token, json: { trigger: "AnyDeposit", action: "Notify" } }), 201)
      expect(yield* automationFor(t, calm)).toBe(true)

      // Flows: a high-risk flow without a score fires only for a deposit held for review; a minimum amount gates every flow.
      const f = yield* testTenant
      expectStatus(yield* call("POST", "/api/v1/flows", { token: f.testOwnerToken, json: { name: "held", trigger: "high-risk", actions: ["notify"] } }), 201)
      expect(yield* automationFor(f, calm)).toBe(false)
      expect(yield* automationFor(f, { ...calm, status: "PendingReview" })).toBe(true)
      yield* sql`UPDATE payment_flows SET trigger = 'deposit', min_amount_kobo = 50000 WHERE tenant_id = ${f.tenantId}`.pipe(Effect.orDie)
      expect(yield* automationFor(f, calm)).toBe(false)
      expect(yield* automationFor(f, { ...calm, amountKobo: 50_000 })).toBe(true)
      // A flow's own minimum risk score gates it whatever its trigger.
      yield* sql`UPDATE payment_flows SET min_amount_kobo = NULL, min_risk_score = 30 WHERE tenant_id = ${f.tenantId}`.pipe(Effect.orDie)
      expect(yield* automationFor(f, calm)).toBe(false)
      expect(yield* automationFor(f, { ...calm, riskScore: 30 })).toBe(true)
      // A fully-paid flow: the deposit that left nothing owed, not all of it surplus.
      yield* sql`UPDATE payment_flows SET trigger = 'fully-paid', min_risk_score = NULL WHERE tenant_id = ${f.tenantId}`.pipe(Effect.orDie)
      expect(yield* automationFor(f, { ...calm, account: { expectedAmountKobo: 5_000, overpayment: 0, deficit: 100 } })).toBe(false)
      expect(yield* automationFor(f, { ...calm, account: { expectedAmountKobo: 5_000, overpayment: 10_000, deficit: 0 } })).toBe(false)
      expect(yield* automationFor(f, { ...calm, account: { expectedAmountKobo: 5_000, overpayment: 200, deficit: 0 } })).toBe(true)
    }))

  it.effect("whatever the rules, flows and deposit, one that planFirings would fire always gets a planner row (random configurations)", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      // Scores and amounts often on the gates' edges (a gate is "at least"), else anywhere.
      const score = fc.oneof(fc.constantFrom(0, 29, 30, 59, 60, 100), fc.integer({ min: 0, max: 100 }))
      const amount = fc.oneof(fc.constantFrom(1, 9_999, 10_000, 50_000), fc.integer({ min: 1, max: 100_000 }))
      const rule = fc.record({
        trigger: fc.constantFrom(...RULE_TRIGGERS), thresholdKobo: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null }),
        minRiskScore: fc.option(score, { nil: null })
      }).map((r) => (r.trigger === "HighRisk" && r.minRiskScore === null ? { ...r, minRiskScore: 50 } : r))
      const flow = fc.record({
        trigger: fc.constantFrom(...FLOW_TRIGGERS), minAmountKobo: fc.option(amount, { nil: null }),
        minRiskScore: fc.option(score, { nil: null }), enabled: fc.boolean()
      })
      // An account with an expected amount is either owed something or overpaid by something (or neither), never both;
      // one without has neither. Overpayments often on the deposit's amount (the fully-paid edge).
      const facts = fc.record({
        riskScore: score, amountKobo: amount, credited: fc.boolean(),
        expected: fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: null }),
        balance: fc.oneof(fc.constantFrom(-1, 0, 1, 9_999, 10_000, 50_000), fc.integer({ min: -100_000, max: 100_000 }))
      }).map(({ balance, ...d }) => ({
        ...d, overpayment: d.expected === null ? 0 : Math.max(0, balance), deficit: d.expected === null ? 0 : Math.max(0, -balance)
      }))
      const cases = fc.sample(fc.record({ rules: fc.array(rule, { maxLength: 2 }), flows: fc.array(flow, { maxLength: 2 }), deposits: fc.array(facts, { minLength: 1, maxLength: 6 }) }), { numRuns: 150, seed: 33 })
      let fired = 0
      let spared = 0
      for (const [k, c] of cases.entries()) {
        yield* sql`DELETE FROM money_rules WHERE tenant_id = ${t.tenantId}`.pipe(Effect.orDie)
        yield* sql`DELETE FROM payment_flows WHERE tenant_id = ${t.tenantId}`.pipe(Effect.orDie)
        const now = new Date()
        const rules: Array<RuleConfig> = c.rules.map((r, i) => ({ id: `mr_${k}_${i}`, action: "Notify", priority: i, createdAt: now, ...r }))
        const flows: Array<FlowConfig> = c.flows.map((f, i) => ({ id: `pf_${k}_${i}`, name: `f${i}`, actions: ["notify"], priority: i, createdAt: now, ...f }))
        for (const r of rules) {
          yield* sql`INSERT INTO money_rules (id, tenant_id, mode, trigger, action, threshold_kobo, min_risk_score, priority, created_by)
            VALUES (${r.id}, ${t.tenantId}, 'test', ${r.trigger}, ${r.action}, ${r.thresholdKobo}, ${r.minRiskScore}, ${r.priority}, 'test')`.pipe(Effect.orDie)
        }
        for (const f of flows) {
          yield* sql`INSERT INTO payment_flows (id, tenant_id, mode, name, trigger, actions, min_amount_kobo, min_risk_score, priority, enabled, created_by)
            VALUES (${f.id}, ${t.tenantId}, 'test', ${f.name}, ${f.trigger}, ${["notify"]}::text[], ${f.minAmountKobo}, ${f.minRiskScore}, ${f.priority}, ${f.enabled}, 'test')`.pipe(Effect.orDie)
        }
        for (const d of c.deposits) {
          const status = d.credited ? "Completed" : "PendingReview"
          const plan = planFirings(rules, flows, {
            reference: "r", accountRef: "p-a", amountKobo: d.amountKobo, riskScore: d.riskScore, credited: d.credited,
            expectedAmountKobo: d.expected, surplusKobo: d.credited && d.expected !== null ? Math.min(d.amountKobo, d.overpayment) : 0,
            deficitAfterKobo: d.expected === null ? 0 : d.deficit
          })
          const account = d.expected === null ? null : { expectedAmountKobo: d.expected, overpayment: d.overpayment, deficit: d.deficit }
          const interested = (yield* consumersOf(yield* deposit(t.tenantId, "test", "p-a", { riskScore: d.riskScore, amountKobo: d.amountKobo, status, account })))["deposit.reconciled"]!
            .includes("automation")
          if (!interested) spared++
          if (plan.length > 0) {
            fired++
            expect(interested, `fires ${plan.map((p) => p.sourceName).join(", ")} for ${JSON.stringify(d)} with ${JSON.stringify(c)}`).toBe(true)
          }
        }
      }
      // The sample exercises firing at all (not only configurations that never fire), and the conditions spare some.
      expect(fired).toBeGreaterThan(10)
      expect(spared).toBeGreaterThan(10)
    }))
})
