import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { call } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

/** Polls until every fired rule and flow of the tenant has been applied (or dead-lettered), bounded (20 s unless given). */
export const waitForAutomation = (tenantId: string, timeoutMs = 20_000) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      "no automation event left pending",
      sql<{ n: number }>`
        SELECT (SELECT count(*) FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
                WHERE o.tenant_id = ${tenantId} AND p.consumer IN ('automation', 'automation-actions'))::int AS n`.pipe(Effect.map((r) => r[0]!.n)),
      { until: (n) => n === 0, timeoutMs }
    )).pipe(Effect.asVoid)

/** The tenant's runs (rules and flows), oldest first, with their steps. */
export const runsOf = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ source: string; sourceId: string; transactionReference: string; steps: ReadonlyArray<{ action: string; outcome: string }> | null }>`
      SELECT source, source_id, transaction_reference, steps FROM automation_runs WHERE tenant_id = ${tenantId} ORDER BY seq`).pipe(Effect.orDie)

export const createRule = (token: string, json: Record<string, unknown>) =>
  Effect.flatMap(call("POST", "/api/v1/rules", { token, json }), (r) =>
    r.status === 201 ? Effect.succeed(r.body as { id: string }) : Effect.die(new Error(`rule: ${r.status} ${JSON.stringify(r.body)}`)))

export const createFlow = (token: string, json: Record<string, unknown>) =>
  Effect.flatMap(call("POST", "/api/v1/flows", { token, json }), (r) =>
    r.status === 201 ? Effect.succeed(r.body as { id: string }) : Effect.die(new Error(`flow: ${r.status} ${JSON.stringify(r.body)}`)))
