import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { runnerOptionsOf, TEST_AUTOMATION } from "../../services/automation/AutomationSettings.js"
import { plannerConsumer } from "../../services/automation/Planner.js"
import { ConsumerDeadLetters } from "../../services/outbox/DeadLetters.js"
import { Outbox } from "../../services/outbox/Outbox.js"
import { makeConsumerRunner } from "../../services/outbox/Runner.js"
import type { DataOf } from "../../src/contract/Events.js"
import { sampleEvent } from "../support/EventSamples.js"
import { testTenant } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"

/**
 * The planner decodes only what rules and flows read of a deposit (`decodeReconciledFacts`, issue 33), and still
 * dead-letters at once, without retries, an event whose data does not decode; the others fire.
 */
layer(makeTestApp({ workers: false }), { timeout: 60_000, excludeTestServices: true })("the planner's decoding", (it) => {
  it.effect("a deposit whose facts do not decode is dead-lettered at once with the reason; the next deposit fires the rule", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const { tenantId } = yield* testTenant
      yield* sql`INSERT INTO money_rules (id, tenant_id, mode, trigger, action, priority, created_by)
        VALUES (${`mr_${crypto.randomBytes(6).toString("hex")}`}, ${tenantId}, 'test', 'AnyDeposit', 'Notify', 0, 'test')`
      // Bypassing the typed stage: a deposit whose amount is a string, pending for the planner.
      const badId = `evt_bad_${crypto.randomBytes(6).toString("hex")}`
      const good = sampleEvent("deposit.reconciled") as { type: "deposit.reconciled"; data: DataOf<"deposit.reconciled"> }
      const data = { ...good.data, transaction: { ...good.data.transaction, reference: "bad-ref", amountKobo: "150000" } }
      const envelope = { id: badId, type: "deposit.reconciled", createdAt: new Date().toISOString(), mode: "test", data }
      const [bad] = yield* sql<{ id: number }>`
        INSERT INTO outbox (event_id, tenant_id, mode, event_type, subject_key, envelope)
        VALUES (${badId}, ${tenantId}, 'test', 'deposit.reconciled', 'acct-1', ${JSON.stringify(envelope)}::json) RETURNING id`
      yield* sql`INSERT INTO outbox_pending (consumer, outbox_id) VALUES ('automation', ${bad!.id})`
      yield* outbox.stage([{ tenantId, mode: "test", subjectKey: "acct-1", ...good }])

      const runner = yield* makeConsumerRunner(plannerConsumer, runnerOptionsOf(TEST_AUTOMATION))
      // The batch fails on the bad event, then one by one: it is dead-lettered, and the good one on the same account
      // waits for the next pass (a failed event holds back its account's later events within a pass).
      expect(yield* runner.pass).toEqual({ claimed: 2, handled: 0, failed: 1 })
      expect(yield* runner.pass).toEqual({ claimed: 1, handled: 1, failed: 0 })

      const runs = yield* sql<{ transactionReference: string; source: string }>`
        SELECT transaction_reference, source FROM automation_runs WHERE tenant_id = ${tenantId}`
      expect(runs).toEqual([{ transactionReference: good.data.transaction.reference, source: "rule" }])
      const deadLetters = yield* ConsumerDeadLetters.pipe(Effect.provide(ConsumerDeadLetters.Default))
      const [dead] = yield* deadLetters.list({ consumer: "automation" })
      expect(dead).toMatchObject({ eventId: badId, eventType: "deposit.reconciled", attempts: 1 })
      expect(dead!.lastError).toMatch(/^deposit\.reconciled event does not decode: /)
      expect(dead!.lastError).toMatch(/\["amountKobo"\]/)
    }))
})
