import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The signing secret is stored sealed (SecretBox, AES-256-GCM): deliveries must read it back to sign.
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      url text NOT NULL,
      secret_sealed text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz,
      CHECK (active = (deactivated_at IS NULL))
    )`
  yield* sql`CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, mode, created_at) WHERE active`
  // One row per (event, endpoint). payload is the exact body, fixed at staging, so every retry signs identical bytes.
  // round_failures counts failures since the delivery was staged or last replayed: it indexes the retry schedule.
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      event_id text NOT NULL,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
      tenant_id text NOT NULL REFERENCES tenants (id),
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      event_type text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL DEFAULT 'Pending' CHECK (status IN ('Pending', 'Succeeded', 'Failed', 'DeadLettered')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      round_failures integer NOT NULL DEFAULT 0 CHECK (round_failures >= 0),
      last_status_code integer,
      last_error text,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      UNIQUE (event_id, endpoint_id),
      CHECK ((status IN ('Pending', 'Failed')) = (next_attempt_at IS NOT NULL)),
      CHECK ((status = 'Succeeded') = (delivered_at IS NOT NULL))
    )`
  // The dispatcher's claim walks each active endpoint's due deliveries in due order.
  yield* sql`
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, seq)
    WHERE status IN ('Pending', 'Failed')`
  yield* sql`CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (tenant_id, mode, created_at DESC, seq DESC)`
  yield* sql`
    CREATE INDEX webhook_deliveries_status_idx ON webhook_deliveries (tenant_id, mode, status, created_at DESC, seq DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_dead_idx ON webhook_deliveries (created_at DESC, seq DESC) WHERE status = 'DeadLettered'`
})
