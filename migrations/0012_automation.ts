import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Money rules and payment flows (src/domain/Automation.ts has the decisions; services/automation/ applies them):
 * - `money_rules` and `payment_flows`: each tenant's configuration per mode; the wire spellings are CHECKs.
 * - `automation_runs`: one row per rule or flow a deposit fired, unique per (rule or flow, deposit), so a redelivered
 *   or replayed deposit fires nothing twice. The planner writes it with the configuration as it stood (`config`) and
 *   the deposit's facts, in the order they run (`seq`); the actor completes it with a human-readable outcome per action (`steps`). A flow's completed
 *   rows are its runs (`GET /flows/runs`).
 * - `transactions.flagged` / `flag_reasons`: a review flag (ReviewFlag, flag) on a credited deposit; money unchanged.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE money_rules (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      trigger text NOT NULL CHECK (trigger IN ('Overpaid', 'Underpaid', 'HighRisk', 'AnyDeposit')),
      action text NOT NULL CHECK (action IN ('Hold', 'Notify', 'ReviewFlag')),
      threshold_kobo bigint CHECK (threshold_kobo >= 0),
      min_risk_score integer CHECK (min_risk_score BETWEEN 0 AND 100),
      priority integer NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (trigger <> 'HighRisk' OR min_risk_score IS NOT NULL)
    )`
  yield* sql`CREATE INDEX money_rules_tenant_idx ON money_rules (tenant_id, mode, priority, created_at, id)`
  yield* sql`
    CREATE TABLE payment_flows (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      name text NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('deposit', 'overpaid', 'underpaid', 'fully-paid', 'high-risk')),
      actions text[] NOT NULL CHECK (cardinality(actions) BETWEEN 1 AND 10 AND actions <@ ARRAY['hold', 'release', 'notify', 'flag']),
      min_amount_kobo bigint CHECK (min_amount_kobo >= 0),
      min_risk_score integer CHECK (min_risk_score BETWEEN 0 AND 100),
      priority integer NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX payment_flows_tenant_idx ON payment_flows (tenant_id, mode, priority, created_at, id)`
  yield* sql`
    CREATE TABLE automation_runs (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      source text NOT NULL CHECK (source IN ('rule', 'flow')),
      source_id text NOT NULL,
      source_name text NOT NULL,
      trigger text NOT NULL,
      transaction_reference text NOT NULL,
      account_ref text NOT NULL,
      config jsonb NOT NULL,
      facts jsonb NOT NULL,
      fired_at timestamptz NOT NULL,
      steps jsonb,
      completed_at timestamptz,
      CONSTRAINT automation_runs_once UNIQUE (tenant_id, mode, source, source_id, transaction_reference)
    )`
  yield* sql`CREATE INDEX automation_runs_flow_idx ON automation_runs (tenant_id, mode, fired_at DESC, seq DESC) WHERE source = 'flow' AND completed_at IS NOT NULL`
  yield* sql`ALTER TABLE transactions ADD COLUMN flagged boolean NOT NULL DEFAULT false, ADD COLUMN flag_reasons text[] NOT NULL DEFAULT '{}'`
  yield* sql`CREATE INDEX transactions_flagged_idx ON transactions (tenant_id, mode, reconciled_at DESC, id DESC) WHERE flagged`
})
