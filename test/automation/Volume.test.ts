import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type DepositFacts, type FlowConfig, flowFires, type RuleConfig, ruleFires } from "../../src/domain/Automation.js"
import { createAccount } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, testTenant } from "../transfers/support.js"
import { createFlow, createRule, runsOf, waitForAutomation } from "./support.js"

/** mulberry32: a small seeded generator, so the 1,000 deposits are the same on every run. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
}

const ACCOUNTS = 100
const DEPOSITS = 1_000
const OVERPAID_THRESHOLD = 2_500
const UNDERPAID_MIN_AMOUNT = 5_000
const RISK_GATE = 40

// 100 distinct customer names (first × last), so a payer who pays only their own account never counts as a reused name.
const FIRST = ["ADAEZE", "CHINEDU", "FOLAKE", "IBRAHIM", "NGOZI", "OLUMIDE", "AMINA", "EMEKA", "YETUNDE", "KELECHI"]
const LAST = ["OKAFOR", "ADEBAYO", "BELLO", "NWOSU", "EZE", "OGUNDIPE", "ABUBAKAR", "OKONKWO", "ADEYEMI", "IHEJIRIKA"]
// Names unlike any customer's: a total mismatch scores 60 risk points, and a payer name reused across accounts more.
const STRANGERS = ["ZAINAB QUADRI", "GODSPOWER TAMUNO", "CASAFINA CREDIT EASY"]

/** "1,234.56 NGN" -> 123456 kobo. */
const koboOf = (naira: string) => {
  const [whole, fraction] = naira.replace(/,/g, "").split(".")
  return Number(whole) * 100 + Number(fraction)
}

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("money rules and flows at volume", (it) => {
  it.effect("1,000 simulated deposits over 100 accounts, three rules and two flows: escrow is what they held, to the kobo", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = yield* testTenant
      const random = seeded(17)

      // 100 accounts: 80 expecting 100.00 to 500.00 NGN (to the kobo), 20 open.
      const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
        ref: `vol-${String(i).padStart(3, "0")}`,
        name: `${FIRST[i % 10]} ${LAST[Math.floor(i / 10)]}`,
        expected: i % 5 === 4 ? null : 10_000 + Math.floor(random() * 40_001)
      }))
      yield* Effect.forEach(accounts, (a) => createAccount(t.token, a.ref, a.name, a.expected ?? undefined), { concurrency: 16, discard: true })

      const overpaidHold = yield* createRule(t.token, { trigger: "Overpaid", action: "Hold", thresholdKobo: OVERPAID_THRESHOLD, priority: 10 })
      const underpaidNotify = yield* createRule(t.token, { trigger: "Underpaid", action: "Notify", priority: 20 })
      const riskFlag = yield* createRule(t.token, { trigger: "HighRisk", action: "ReviewFlag", minRiskScore: RISK_GATE, priority: 30 })
      const underpaidFlow = yield* createFlow(t.testOwnerToken, { name: "underpaid", trigger: "underpaid", actions: ["hold", "notify"], minAmountKobo: UNDERPAID_MIN_AMOUNT, priority: 10 })
      const fullyPaidFlow = yield* createFlow(t.testOwnerToken, { name: "fully-paid", trigger: "fully-paid", actions: ["release", "notify"], priority: 20 })

      // 1,000 deposits: each account once (shuffled), then 900 over accounts at random. Against an expected amount: the
      // whole of it, a slice of it, or more than it; into an open account anything; a few payers unlike the customer.
      const order = accounts.map((_, i) => i)
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1))
        ;[order[i], order[j]] = [order[j]!, order[i]!]
      }
      const deposits = Array.from({ length: DEPOSITS }, (_, n) => {
        const a = accounts[n < ACCOUNTS ? order[n]! : Math.floor(random() * ACCOUNTS)]!
        const r = random()
        const amountKobo = a.expected === null
          ? 100 + Math.floor(random() * 99_901)
          : r < 0.15 ? a.expected
          : r < 0.75 ? 100 + Math.floor(random() * (a.expected * 0.6))
          : a.expected + 1 + Math.floor(random() * a.expected)
        const s = random()
        const senderName = s < 0.8 ? a.name : STRANGERS[Math.floor(random() * STRANGERS.length)]!
        return { accountRef: a.ref, amountKobo, senderName }
      })

      const started = Date.now()
      const sent = yield* Effect.forEach(deposits, (d) =>
        call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: d }).pipe(
          Effect.map((r) => {
            expect(r.status, JSON.stringify(r.body)).toBe(200)
            expect(r.body.result).toBe("processed")
            return r.body.reference as string
          })), { concurrency: 16 })
      expect(new Set(sent).size).toBe(DEPOSITS)

      // Every deposit reconciled, then every rule and flow it fired applied.
      yield* waitFor(
        `${DEPOSITS} deposits reconciled`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`.pipe(Effect.map((r) => r[0]!.n)),
        { until: (n) => n === DEPOSITS, timeoutMs: 150_000, intervalMs: 100 }
      )
      // 90 s: a loaded full-suite run once left 68 of them after 20 s (alone the heavy path applies ~225 holds/s).
      yield* waitForAutomation(t.tenantId, 90_000)
      const elapsed = Date.now() - started

      // The mix really has every case: exact, underpaid, overpaid, fully paid by a part payment, open, held for review.
      const txns = yield* sql<{
        reference: string; accountRef: string; virtualAccountId: string; amountKobo: number; riskScore: number; status: string
        reconciliationStatus: string; surplusKobo: number; expectedAmountKobo: number | null; amountPaidAfterKobo: number
      }>`
        SELECT t.reference, t.account_ref, t.virtual_account_id, t.amount_kobo::int8 AS amount_kobo, t.risk_score, t.status,
          t.reconciliation_status, t.surplus_kobo::int8 AS surplus_kobo, va.expected_amount_kobo::int8 AS expected_amount_kobo,
          t.amount_paid_after_kobo::int8 AS amount_paid_after_kobo
        FROM transactions t JOIN virtual_accounts va ON va.id = t.virtual_account_id
        WHERE t.tenant_id = ${t.tenantId}`.pipe(Effect.orDie)
      expect(txns).toHaveLength(DEPOSITS)
      expect(new Set(txns.map((x) => x.reference))).toEqual(new Set(sent))
      const statuses = new Set(txns.map((x) => x.reconciliationStatus))
      for (const s of ["Exact", "Underpaid", "Overpaid", "Credited"]) expect(statuses).toContain(s)
      const credited = txns.filter((x) => x.status === "Completed")
      expect(credited.length).toBeGreaterThan(DEPOSITS / 2)
      expect(txns.some((x) => x.status === "PendingReview")).toBe(true)
      const fullyPaidBy = credited.filter((x) => x.expectedAmountKobo !== null && x.amountPaidAfterKobo >= x.expectedAmountKobo && x.surplusKobo < x.amountKobo)
      expect(fullyPaidBy.some((x) => x.reconciliationStatus === "Overpaid")).toBe(true)
      expect(fullyPaidBy.some((x) => x.reconciliationStatus === "Exact")).toBe(true)

      // Every run completed; nothing dead-lettered.
      const runs = yield* runsOf(t.tenantId)
      expect(runs.filter((r) => r.steps === null)).toEqual([])
      const dead = yield* sql`
        SELECT d.consumer, d.last_error FROM consumer_dead_letters d JOIN outbox o ON o.id = d.outbox_id
        WHERE o.tenant_id = ${t.tenantId} AND d.consumer IN ('automation', 'automation-actions')`.pipe(Effect.orDie)
      expect(dead).toEqual([])

      // Each deposit fired exactly what the pure decisions say of it, as the reconciler left the account for it.
      const rules: Array<RuleConfig> = [
        { id: overpaidHold.id, trigger: "Overpaid", action: "Hold", thresholdKobo: OVERPAID_THRESHOLD, minRiskScore: null, priority: 10, createdAt: new Date(0) },
        { id: underpaidNotify.id, trigger: "Underpaid", action: "Notify", thresholdKobo: null, minRiskScore: null, priority: 20, createdAt: new Date(0) },
        { id: riskFlag.id, trigger: "HighRisk", action: "ReviewFlag", thresholdKobo: null, minRiskScore: RISK_GATE, priority: 30, createdAt: new Date(0) }
      ]
      const flows: Array<FlowConfig> = [
        { id: underpaidFlow.id, name: "underpaid", trigger: "underpaid", actions: ["hold", "notify"], minAmountKobo: UNDERPAID_MIN_AMOUNT, minRiskScore: null, priority: 10, enabled: true, createdAt: new Date(0) },
        { id: fullyPaidFlow.id, name: "fully-paid", trigger: "fully-paid", actions: ["release", "notify"], minAmountKobo: null, minRiskScore: null, priority: 20, enabled: true, createdAt: new Date(0) }
      ]
      const firedOf = new Map<string, Array<string>>()
      for (const r of runs) firedOf.set(r.transactionReference, [...(firedOf.get(r.transactionReference) ?? []), r.sourceId])
      const mismatched = txns.flatMap((x) => {
        const facts: DepositFacts = {
          reference: x.reference, accountRef: x.accountRef, amountKobo: x.amountKobo, riskScore: x.riskScore,
          credited: x.status === "Completed", expectedAmountKobo: x.expectedAmountKobo,
          surplusKobo: x.status === "Completed" ? x.surplusKobo : 0,
          deficitAfterKobo: x.expectedAmountKobo === null ? 0 : Math.max(x.expectedAmountKobo - x.amountPaidAfterKobo, 0)
        }
        const want = [...rules.filter((r) => ruleFires(r, facts)), ...flows.filter((f) => flowFires(f, facts))].map((s) => s.id).sort()
        const got = [...(firedOf.get(x.reference) ?? [])].sort()
        return JSON.stringify(want) === JSON.stringify(got) ? [] : [{ facts, want, got }]
      })
      expect(mismatched).toEqual([])
      // In particular: every credited deposit with a surplus at or over the threshold has exactly one Overpaid run, no other has one.
      const overpaidRuns = runs.filter((r) => r.sourceId === overpaidHold.id)
      const overpaidDeposits = credited.filter((x) => x.surplusKobo >= OVERPAID_THRESHOLD).map((x) => x.reference).sort()
      expect(overpaidDeposits.length).toBeGreaterThan(50)
      expect(overpaidRuns.map((r) => r.transactionReference).sort()).toEqual(overpaidDeposits)
      for (const id of [underpaidNotify.id, riskFlag.id, underpaidFlow.id, fullyPaidFlow.id]) {
        expect(runs.filter((r) => r.sourceId === id).length, id).toBeGreaterThan(5)
      }

      // Escrow per account (its ledger balance, and its guarded balance row) is the sum of its active holds, to the kobo.
      const perAccount = yield* sql<{ accountRef: string; escrow: number; guarded: number | null; held: number }>`
        SELECT va.account_ref,
          -COALESCE((SELECT sum(e.amount_kobo) FROM ledger_entries e WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode
            AND e.account = 'escrow:' || va.id), 0)::int8 AS escrow,
          (SELECT b.balance_kobo FROM ledger_balances b WHERE b.tenant_id = va.tenant_id AND b.mode = va.mode AND b.account = 'escrow:' || va.id)::int8 AS guarded,
          COALESCE((SELECT sum(h.held_kobo) FROM holds h WHERE h.tenant_id = va.tenant_id AND h.mode = va.mode
            AND h.virtual_account_id = va.id AND h.status = 'Held'), 0)::int8 AS held
        FROM virtual_accounts va WHERE va.tenant_id = ${t.tenantId} AND va.mode = 'test' ORDER BY va.account_ref`.pipe(Effect.orDie)
      expect(perAccount).toHaveLength(ACCOUNTS)
      expect(perAccount.filter((a) => a.escrow !== a.held || (a.guarded ?? 0) !== a.escrow)).toEqual([])
      const totalEscrow = perAccount.reduce((s, a) => s + a.escrow, 0)

      // Every hold was placed and released by a rule or flow; the total escrow is what they placed minus what they released,
      // by the audit log and by the runs' own words.
      const holders = yield* sql<{ createdBy: string }>`SELECT DISTINCT created_by FROM holds WHERE tenant_id = ${t.tenantId}`.pipe(Effect.orDie)
      expect(holders.map((h) => h.createdBy).sort()).toEqual([`flow:${underpaidFlow.id}`, `rule:${overpaidHold.id}`].sort())
      const audit = yield* sql<{ action: string; automated: boolean; kobo: number; n: number }>`
        SELECT action, (actor LIKE 'rule:%' OR actor LIKE 'flow:%') AS automated, sum((details->>'amountKobo')::int8)::int8 AS kobo, count(*)::int AS n
        FROM audit_log WHERE tenant_id = ${t.tenantId} AND action IN ('hold.placed', 'hold.released') GROUP BY 1, 2`.pipe(Effect.orDie)
      expect(audit.every((a) => a.automated)).toBe(true)
      const placed = audit.find((a) => a.action === "hold.placed")?.kobo ?? 0
      const released = audit.find((a) => a.action === "hold.released")?.kobo ?? 0
      expect(placed).toBeGreaterThan(0)
      expect(released).toBeGreaterThan(0)
      expect(totalEscrow).toBe(placed - released)

      let stepsHeld = 0
      let stepsReleased = 0
      for (const r of runs) {
        for (const s of r.steps!) {
          const held = /^held ([\d,]+\.\d{2}) NGN in escrow/.exec(s.outcome)
          const rel = /^released ([\d,]+\.\d{2}) NGN held on/.exec(s.outcome)
          if (s.action === "hold" && held) stepsHeld += koboOf(held[1]!)
          else if (s.action === "release" && rel) stepsReleased += koboOf(rel[1]!)
          else expect(s.outcome, `${s.action}: ${s.outcome}`).toMatch(/^(held nothing|released nothing|sent (rule|flow)\.notify|flagged)/)
        }
      }
      expect(stepsHeld).toBe(placed)
      expect(stepsReleased).toBe(released)
      expect((yield* balanceOf(t.token)).heldKobo).toBe(totalEscrow)

      console.log(`volume: ${DEPOSITS} deposits, ${runs.length} runs, reconciled and applied in ${elapsed} ms; escrow ${totalEscrow} kobo (placed ${placed}, released ${released})`)
      yield* assertLedgerInvariant
    }), 180_000) // 17 s alone; past the 60 s default once, with the three projects running side by side
})
