import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newId } from "../../src/domain/Ids.js"
import { AutomationStore, type NewRun } from "../../services/automation/AutomationStore.js"
import { makeTestApp } from "../support/TestApp.js"
import { updatesIn } from "../support/UpdateCounts.js"
import { testTenant } from "../support/Pipeline.js"

/**
 * The actor completes a run moments after the planner wrote it (`completeRuns`: its steps and completed_at). That update
 * can be HOT (no new index entries, the new version beside the old one) only if no index of automation_runs names a
 * column it writes and the page has room: migration 0027 (issue 33). Before it, the flows' list index named
 * `completed_at` in its predicate, and no completion was ever HOT.
 */
const RUNS = 60

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("a run's completion", (it) => {
  it.effect("writes no column any index of automation_runs names, and is HOT for (almost) every run written together", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* AutomationStore
      const indexes = yield* sql<{ def: string }>`SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'automation_runs'::regclass`
      expect(indexes.length).toBeGreaterThan(0)
      for (const { def } of indexes) expect(def).not.toMatch(/completed_at|steps/)
      const [table] = yield* sql<{ options: Array<string> | null }>`SELECT reloptions AS options FROM pg_class WHERE oid = 'automation_runs'::regclass`
      expect(table?.options).toContain("fillfactor=50")

      const t = yield* testTenant
      const firedAt = new Date()
      const runs: Array<NewRun> = Array.from({ length: RUNS }, (_, i) => ({
        id: newId("run"), tenantId: t.tenantId, mode: "test", source: i % 2 === 0 ? "rule" : "flow", sourceId: `src_${i % 2}`, sourceName: "hot",
        trigger: "Overpaid", transactionReference: `ref_hot_${i}`, accountRef: `acct-${i % 7}`,
        config: { actions: ["hold"], holdKobo: 1_000 + i, why: "overpaid by 10.00 NGN" },
        facts: { reference: `ref_hot_${i}`, accountRef: `acct-${i % 7}`, amountKobo: 50_000, riskScore: 0, credited: true, expectedAmountKobo: 40_000, surplusKobo: 10_000, deficitAfterKobo: 0 },
        firedAt
      }))
      // Written and completed in one transaction, so no pruning makes room: the room is the fill factor's alone. The
      // counts are this transaction's own, so nothing else on the server counts.
      const hot = yield* updatesIn(sql, "automation_runs", Effect.gen(function* () {
        expect(yield* store.insertRuns(runs)).toHaveLength(RUNS)
        yield* store.completeRuns(runs.map((r) => ({ id: r.id, steps: [{ action: "hold" as const, outcome: "held 10.00 NGN in escrow" }] })))
      }))
      expect(hot.updated).toBe(RUNS)
      expect(hot.hot).toBeGreaterThanOrEqual(RUNS * 0.8)
      const open = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM automation_runs WHERE id = ANY(${runs.map((r) => r.id)}::text[]) AND completed_at IS NULL`
      expect(open[0]!.n).toBe(0)
    }))
})
