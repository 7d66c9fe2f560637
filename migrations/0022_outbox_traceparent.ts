import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `outbox.traceparent`: the W3C trace context of the span that staged an event (the reconciler's batch, an API request),
 * so a consumer's span can join that trace (docs/operations.md, "Traces"). Written only while tracing is on
 * (OTEL_EXPORTER_OTLP_ENDPOINT); null otherwise, and a nullable column without a default costs nothing to add.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE outbox ADD COLUMN traceparent text`
})
