import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import type { Flow, Rule, RunStep } from "../../src/contract/Automation.js"
import type { DepositFacts, FlowAction, FlowConfig, FlowTrigger, RuleAction, RuleConfig, RuleTrigger } from "../../src/domain/Automation.js"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { direct } from "../../src/db/Direct.js"

export interface RuleRow extends RuleConfig {
  readonly tenantId: string
  readonly mode: Mode
}
export interface FlowRow extends FlowConfig {
  readonly tenantId: string
  readonly mode: Mode
  readonly updatedAt: Date
}

export const toRule = (r: RuleConfig): Rule => ({
  id: r.id, trigger: r.trigger, action: r.action, thresholdKobo: r.thresholdKobo, minRiskScore: r.minRiskScore, priority: r.priority,
  createdAt: r.createdAt.toISOString()
})

export const toFlow = (f: FlowRow): Flow => ({
  id: f.id, name: f.name, trigger: f.trigger, actions: f.actions, minAmountKobo: f.minAmountKobo, minRiskScore: f.minRiskScore,
  priority: f.priority, enabled: f.enabled, createdAt: f.createdAt.toISOString(), updatedAt: f.updatedAt.toISOString()
})

/** A fired rule or flow, as the planner writes it and the actor reads it. */
export interface RunRow {
  readonly id: string
  readonly tenantId: string
  readonly mode: Mode
  readonly source: "rule" | "flow"
  readonly sourceId: string
  readonly sourceName: string
  readonly trigger: string
  readonly transactionReference: string
  readonly accountRef: string
  readonly config: { readonly actions: ReadonlyArray<FlowAction>; readonly holdKobo: number; readonly why: string }
  readonly facts: DepositFacts
  readonly firedAt: Date
  readonly steps: ReadonlyArray<RunStep> | null
  readonly completedAt: Date | null
}

export interface NewRun {
  readonly id: string
  readonly tenantId: string
  readonly mode: Mode
  readonly source: "rule" | "flow"
  readonly sourceId: string
  readonly sourceName: string
  readonly trigger: string
  readonly transactionReference: string
  readonly accountRef: string
  readonly config: RunRow["config"]
  readonly facts: DepositFacts
  readonly firedAt: Date
}

/** A recent deposit as a dry run replays it: its facts as stored (the deficit against the account's expected amount now). */
export interface RecentDeposit extends DepositFacts {
  readonly reconciledAt: Date
}

const RULE_COLUMNS = "id, tenant_id, mode, trigger, action, threshold_kobo, min_risk_score, priority, created_at"
const FLOW_COLUMNS = "id, tenant_id, mode, name, trigger, actions, min_amount_kobo, min_risk_score, priority, enabled, created_at, updated_at"
const RUN_COLUMNS = `id, tenant_id, mode, source, source_id, source_name, trigger, transaction_reference, account_ref, config, facts, fired_at,
  steps, completed_at`

/** The SQL of money rules, payment flows and their runs: one function per statement. */
export class AutomationStore extends Effect.Service<AutomationStore>()("services/automation/AutomationStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ruleCols = sql.literal(RULE_COLUMNS)
    const flowCols = sql.literal(FLOW_COLUMNS)
    const runCols = sql.literal(RUN_COLUMNS)

    // ---- rules

    /** A page of rules or flows in the order they run: ascending priority, then creation (the key is the id). */
    const pageInRunOrder = <Row extends object>(table: "money_rules" | "payment_flows", cols: Statement.Fragment, scope: Scope, page: PageRequest) =>
      Effect.gen(function* () {
        const after = yield* cursorId(page, "id", (id) => sql<{ id: string }>`
          SELECT id FROM ${sql(table)} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`)
        return yield* sql<Row>`SELECT ${cols} FROM ${sql(table)} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
          ${after === undefined ? sql`` : sql`AND (priority, created_at, id) > (SELECT priority, created_at, id FROM ${sql(table)} WHERE id = ${after})`}
          ORDER BY priority, created_at, id LIMIT ${limitOf(page)}`.pipe(Effect.orDie)
      })

    const listRules = (scope: Scope, page: PageRequest) => pageInRunOrder<RuleRow>("money_rules", ruleCols, scope, page)

    const count = (table: "money_rules" | "payment_flows", scope: Scope) =>
      sql<{ n: number }>`SELECT count(*)::int8 AS n FROM ${sql(table)} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(
        Effect.map((rows) => rows[0]?.n ?? 0), Effect.orDie)
    const countRules = (scope: Scope) => count("money_rules", scope)

    const insertRule = (scope: Scope, r: { id: string; trigger: RuleTrigger; action: RuleAction; thresholdKobo: number | null; minRiskScore: number | null; priority: number }, actor: string) =>
      sql<RuleRow>`INSERT INTO money_rules (id, tenant_id, mode, trigger, action, threshold_kobo, min_risk_score, priority, created_by)
        VALUES (${r.id}, ${scope.tenantId}, ${scope.mode}, ${r.trigger}, ${r.action}, ${r.thresholdKobo}, ${r.minRiskScore}, ${r.priority}, ${actor})
        RETURNING ${ruleCols}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const remove = (table: "money_rules" | "payment_flows", scope: Scope, id: string) =>
      sql<{ id: string }>`DELETE FROM ${sql(table)} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0), Effect.orDie)
    const deleteRule = (scope: Scope, id: string) => remove("money_rules", scope, id)

    // ---- flows

    const listFlows = (scope: Scope, page: PageRequest) => pageInRunOrder<FlowRow>("payment_flows", flowCols, scope, page)

    const countFlows = (scope: Scope) => count("payment_flows", scope)

    const findFlow = (scope: Scope, id: string) =>
      sql<FlowRow>`SELECT ${flowCols} FROM payment_flows WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0]), Effect.orDie)

    type FlowValues = { name: string; trigger: FlowTrigger; actions: ReadonlyArray<FlowAction>; minAmountKobo: number | null; minRiskScore: number | null; priority: number }

    const insertFlow = (scope: Scope, f: FlowValues & { id: string; enabled: boolean }, actor: string) =>
      sql<FlowRow>`INSERT INTO payment_flows (id, tenant_id, mode, name, trigger, actions, min_amount_kobo, min_risk_score, priority, enabled, created_by)
        VALUES (${f.id}, ${scope.tenantId}, ${scope.mode}, ${f.name}, ${f.trigger}, ${f.actions}::text[], ${f.minAmountKobo}, ${f.minRiskScore},
          ${f.priority}, ${f.enabled}, ${actor})
        RETURNING ${flowCols}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    /** Replaces the configuration; `enabled` only when given. Undefined when there is no such flow. */
    const replaceFlow = (scope: Scope, id: string, f: FlowValues & { enabled: boolean | undefined }) =>
      sql<FlowRow>`UPDATE payment_flows SET name = ${f.name}, trigger = ${f.trigger}, actions = ${f.actions}::text[],
          min_amount_kobo = ${f.minAmountKobo}, min_risk_score = ${f.minRiskScore}, priority = ${f.priority},
          enabled = ${f.enabled === undefined ? sql`enabled` : sql`${f.enabled}`}, updated_at = now()
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}
        RETURNING ${flowCols}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const setEnabled = (scope: Scope, id: string, enabled: boolean) =>
      sql<FlowRow>`UPDATE payment_flows SET enabled = ${enabled}, updated_at = CASE WHEN enabled = ${enabled} THEN updated_at ELSE now() END
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}
        RETURNING ${flowCols}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const deleteFlow = (scope: Scope, id: string) => remove("payment_flows", scope, id)

    // ---- what the planner reads: every rule and enabled flow of the batch's tenants and modes, in one statement each

    const configsOf = (scopes: ReadonlyArray<Scope>) =>
      Effect.gen(function* () {
        if (scopes.length === 0) return { rules: [] as ReadonlyArray<RuleRow>, flows: [] as ReadonlyArray<FlowRow> }
        const tenants = scopes.map((s) => s.tenantId)
        const modes = scopes.map((s) => s.mode)
        const [rules, flows] = yield* Effect.all([
          direct(sql<RuleRow>`SELECT ${ruleCols} FROM money_rules
            WHERE (tenant_id, mode) IN (SELECT * FROM unnest(${tenants}::text[], ${modes}::text[]))`),
          direct(sql<FlowRow>`SELECT ${flowCols} FROM payment_flows
            WHERE enabled AND (tenant_id, mode) IN (SELECT * FROM unnest(${tenants}::text[], ${modes}::text[]))`)
        ])
        return { rules, flows }
      }).pipe(Effect.orDie)

    // ---- runs

    /**
     * Writes the runs that are new; the ones a redelivery or replay already fired are left as they are. Answers the new
     * runs' ids only: returning whole rows sent each run's config and facts back to be parsed again (issue 33, the heavy
     * workload: about 13,000 runs in a bench run).
     */
    const insertRuns = (runs: ReadonlyArray<NewRun>) =>
      runs.length === 0
        ? Effect.succeed([] as ReadonlyArray<{ readonly id: string }>)
        : direct(sql<{ readonly id: string }>`INSERT INTO automation_runs (id, tenant_id, mode, source, source_id, source_name, trigger, transaction_reference, account_ref,
              config, facts, fired_at)
            SELECT r.id, r.tenant_id, r.mode, r.source, r.source_id, r.source_name, r.trigger, r.transaction_reference, r.account_ref,
              r.config, r.facts, r.fired_at
            FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(runs.map((r) => ({
              id: r.id, tenant_id: r.tenantId, mode: r.mode, source: r.source, source_id: r.sourceId, source_name: r.sourceName, trigger: r.trigger,
              transaction_reference: r.transactionReference, account_ref: r.accountRef, config: r.config, facts: r.facts, fired_at: r.firedAt.toISOString()
            })))}::jsonb) AS (id text, tenant_id text, mode text, source text, source_id text, source_name text, trigger text,
              transaction_reference text, account_ref text, config jsonb, facts jsonb, fired_at timestamptz))
              WITH ORDINALITY AS r(id, tenant_id, mode, source, source_id, source_name, trigger, transaction_reference, account_ref, config, facts, fired_at, ord)
            ORDER BY r.ord

            ON CONFLICT ON CONSTRAINT automation_runs_once DO NOTHING
            RETURNING id`).pipe(Effect.orDie)

    /** The runs not yet completed among `ids`, locked (the actor's transaction completes them). */
    const openRuns = (ids: ReadonlyArray<string>) =>
      direct(sql<RunRow>`SELECT ${runCols} FROM automation_runs WHERE id = ANY(${ids}::text[]) AND completed_at IS NULL FOR UPDATE`).pipe(Effect.orDie)

    /** Completes runs (each with its steps and their outcomes) in one statement; a run completed before is left as it is. */
    const completeRuns = (done: ReadonlyArray<{ readonly id: string; readonly steps: ReadonlyArray<RunStep> }>) =>
      done.length === 0 ? Effect.void : direct(sql`UPDATE automation_runs r SET steps = u.steps, completed_at = now()
        FROM json_to_recordset(${JSON.stringify(done)}::json) AS u(id text, steps jsonb)
        WHERE r.id = u.id AND r.completed_at IS NULL`).pipe(Effect.asVoid, Effect.orDie)

    /** Completed flow runs, newest first. */
    const listFlowRuns = (scope: Scope, page: PageRequest) =>
      Effect.gen(function* () {
        const after = yield* cursorId(page, "id", (id) => sql<{ id: string }>`
          SELECT id FROM automation_runs WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND source = 'flow' AND id = ${id}
            AND completed_at IS NOT NULL`)
        return yield* sql<RunRow>`SELECT ${runCols} FROM automation_runs
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND source = 'flow' AND completed_at IS NOT NULL
          ${after === undefined ? sql`` : sql`AND (fired_at, seq) < (SELECT fired_at, seq FROM automation_runs WHERE id = ${after})`}
          ORDER BY fired_at DESC, seq DESC LIMIT ${limitOf(page)}`.pipe(Effect.orDie)
      })

    // ---- dry runs

    /** The tenant's last `take` deposits into its accounts (newest first), as the planner would have seen them. */
    const recentDeposits = (scope: Scope, take: number) =>
      sql<RecentDeposit>`
        SELECT t.reference, t.account_ref, t.amount_kobo, t.risk_score, t.status = 'Completed' AS credited, va.expected_amount_kobo,
          t.surplus_kobo,
          CASE WHEN va.expected_amount_kobo IS NULL THEN 0 ELSE GREATEST(va.expected_amount_kobo - COALESCE(t.amount_paid_after_kobo, va.amount_paid_kobo), 0) END
            AS deficit_after_kobo,
          t.reconciled_at
        FROM transactions t JOIN virtual_accounts va ON va.id = t.virtual_account_id
        WHERE t.tenant_id = ${scope.tenantId} AND t.mode = ${scope.mode} AND t.kind = 'inflow' AND t.status IN ('Completed', 'PendingReview')
        ORDER BY t.reconciled_at DESC, t.id DESC LIMIT ${take}`.pipe(Effect.orDie)

    return {
      listRules, countRules, insertRule, deleteRule,
      listFlows, countFlows, findFlow, insertFlow, replaceFlow, setEnabled, deleteFlow,
      configsOf, insertRuns, openRuns, completeRuns, listFlowRuns, recentDeposits
    } as const
  })
}) {}
