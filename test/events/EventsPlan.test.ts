import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EventsStore, type PageQuery } from "../../services/events/EventsStore.js"
import { explain } from "../support/QueryPlan.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * The events list reads through the partial index of migrations/0021 (outbox_public_events_idx): the planner proves
 * the predicate from the query's own text (public types only), and the 30-day window and the page key bound the index
 * range rather than filtering a tenant's whole history. Checked with EXPLAIN on an outbox of many tenants, most of its
 * rows outside the window, some internal, after ANALYZE, with the planner's settings as they are.
 */

const TENANTS = 200
const PER_TENANT = 300

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("the events list's plan", (it) => {
  it.effect("uses outbox_public_events_idx with the tenant, the mode and the window (and the page key) as its range", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* EventsStore
      // Most rows older than 30 days (nothing prunes the outbox), a fifth internal; both modes.
      yield* sql`INSERT INTO outbox (event_id, tenant_id, mode, event_type, subject_key, envelope, created_at)
        SELECT 'evt_plan_' || g, 'ten_plan_' || (g % ${TENANTS}), CASE WHEN g % 7 = 0 THEN 'live' ELSE 'test' END,
          CASE WHEN g % 5 = 0 THEN 'internal.insights.account' ELSE 'deposit.reconciled' END, 'x', '{}'::json,
          now() - (g % 120) * interval '1 day'
        FROM generate_series(1, ${TENANTS * PER_TENANT}) g`
      yield* sql`ANALYZE outbox`
      const scope = { tenantId: "ten_plan_3", mode: "test" as const }
      const [after] = yield* store.rowIdOf(scope, "evt_plan_1203")
      expect(after).toBeDefined()

      const planOf = (q: PageQuery) => explain(store.pageStatement(scope, q))
      for (const q of [{ limit: 51 }, { limit: 51, type: "deposit.reconciled" as const }, { limit: 51, after: after!.id }]) {
        const plan = yield* planOf(q)
        const scan = plan.find((n) => n["Index Name"] === "outbox_public_events_idx")
        expect(scan, `${JSON.stringify(q)}: ${JSON.stringify(plan.map((n) => [n["Node Type"], n["Index Name"]]))}`).toBeDefined()
        expect(scan!["Index Cond"]).toMatch(/tenant_id = .*mode = .*created_at > \(now\(\) - '30 days'::interval\)/)
        if (q.after !== undefined) expect(scan!["Index Cond"]).toMatch(/created_at <= /)
      }
    }))
})
