import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../../contract/Problems.js"

export const Healthy = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Healthy" })

export const Ready = Schema.Struct({
  status: Schema.Literal("ready"),
  database: Schema.Literal("ok"),
  /** Which deposit bus this process uses; for `jetstream`, NATS is connected and the topology ensured. */
  bus: Schema.Literal("jetstream", "in-process")
}).annotations({ identifier: "Ready" })

/**
 * Probes for an orchestrator; public (no auth), outside /api/v1. `/healthz`: the process is up and serving HTTP (a
 * liveness probe: restart it when this fails). `/readyz`: the database answers and NATS is connected (or the
 * in-process bus is used); otherwise 503 problem+json naming what is unreachable (a readiness probe: route traffic
 * elsewhere meanwhile; the process recovers on its own and needs no restart).
 */
export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz")`/healthz`.addSuccess(Healthy))
  .add(HttpApiEndpoint.get("readyz")`/readyz`.addSuccess(Ready).addError(ServiceUnavailable))
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes.")
{}
