import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { claimStatement } from "../../services/outbox/Claim.js"
import { explain, planShape } from "../support/QueryPlan.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * A consumer's claim reads what it claims, not the outbox: the pending rows are walked in key order and each event is
 * one probe of the outbox's primary key, so the LIMIT bounds the work whatever the outbox's size (services/outbox/
 * Claim.ts `claimStatement`). Before, with the pending rows' statistics large, the planner hashed the whole outbox
 * on every claim. Checked with EXPLAIN ANALYZE on a large outbox and a large backlog, after ANALYZE, with the
 * planner's settings as they are; and the claim still skips an account held back by a retry and claims past it.
 */

const OUTBOX_ROWS = 40_000
const PENDING = 3_000
const CONSUMER = "claim-plan"

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("a consumer's claim", (it) => {
  it.effect("probes the outbox by key for each row it claims, and never scans it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Events of 500 accounts; the newest PENDING of them wait for the consumer. The first account's oldest pending
      // event failed and waits to retry: its later events must stay behind, the other accounts' go.
      const [first] = yield* sql<{ id: number }>`
        WITH i AS (INSERT INTO outbox (event_id, tenant_id, mode, event_type, subject_key, envelope)
          SELECT 'evt_claim_' || g, 'ten_claim', 'test', 'deposit.reconciled', 'va_' || (g % 500), '{"n":1}'::json
          FROM generate_series(1, ${OUTBOX_ROWS}) g RETURNING id)
        SELECT min(id)::int8 AS id FROM i`
      const firstPending = first!.id + OUTBOX_ROWS - PENDING
      yield* sql`INSERT INTO outbox_pending (consumer, outbox_id) SELECT ${CONSUMER}, g FROM generate_series(${firstPending}::int8, ${first!.id + OUTBOX_ROWS - 1}::int8) g`
      const [held] = yield* sql<{ outboxId: number; subjectKey: string }>`
        SELECT p.outbox_id, o.subject_key FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
        WHERE p.consumer = ${CONSUMER} ORDER BY p.outbox_id LIMIT 1`
      yield* sql`UPDATE outbox_pending SET attempts = 1, next_attempt_at = now() + interval '1 hour'
        WHERE consumer = ${CONSUMER} AND outbox_id = ${held!.outboxId}`
      yield* sql`ANALYZE outbox`
      yield* sql`ANALYZE outbox_pending`

      const limit = 500
      const statement = claimStatement(sql, CONSUMER, new Date(), limit, sql`, o.envelope::text AS envelope_json`)
      const plan = yield* explain(statement, { analyze: true })
      const shape = planShape(plan)
      expect(plan.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "outbox"), shape).toBe(false)
      // The events are read through the outbox's key, about one probe per claimed row (not per pending row).
      const probes = plan.filter((n) => n["Index Name"] === "outbox_pkey" && n["Relation Name"] === "outbox")
        .reduce((sum, n) => sum + (n["Actual Loops"] ?? 0), 0)
      expect(probes, shape).toBeGreaterThanOrEqual(limit)
      expect(probes, shape).toBeLessThan(limit * 1.2)

      const claimed = yield* statement
      expect(claimed).toHaveLength(limit)
      expect(claimed.some((e) => e.subjectKey === held!.subjectKey)).toBe(false)
      const ids = claimed.map((e) => e.outboxId)
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
      expect(ids[0]).toBe(held!.outboxId + 1)
      expect(JSON.parse(claimed[0]!.envelopeJson)).toEqual({ n: 1 })
    }))
})
