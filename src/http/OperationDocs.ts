/**
 * What the OpenAPI document says about each operation beyond its schemas: a summary, a description, and who may
 * call it (plane and role). Keyed by operationId (`group.endpoint`); test/api/OpenApi.test.ts fails when an
 * operation has none. (A public operation may instead carry OpenApi.Summary and OpenApi.Description annotations.) An operation that answers 501 gets "Not built yet (501)" in its summary automatically.
 */

import { CAPABILITIES } from "../../services/Capabilities.js"
import type { Capability } from "../../services/Capability.js"
import { doc, type OperationDoc } from "../contract/OperationDoc.js"
import type { OperationExamples } from "../contract/OperationExample.js"

export { describe, PUBLIC_ACCESS } from "../contract/OperationDoc.js"

/** Every capability's operation docs (its manifest's `docs`), and the edge's own (health). */
export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  ...Object.assign({}, ...CAPABILITIES.map((c: Capability) => c.docs ?? {})),
  "health.healthz": doc("Liveness probe", "public", "200 while the process serves HTTP. A failing liveness probe is a reason to restart the process."),
  "health.readyz": doc("Readiness probe", "public", "200 when the database answers and NATS is connected (or the in-process bus is used); otherwise 503 problem+json naming what is unreachable (`database_unavailable` or `bus_unavailable`). Route traffic elsewhere meanwhile: the process recovers on its own."),
}

/** Every capability's operation examples (its manifest's `examples`, from `<Name>Examples.ts`), and the edge's own. */
export const OPERATION_EXAMPLES: OperationExamples = {
  ...Object.assign({}, ...CAPABILITIES.map((c: Capability) => c.examples ?? {})),
  "health.healthz": { responses: { 200: { status: "ok" } } },
  "health.readyz": { responses: { 200: { status: "ready", database: "ok", bus: "jetstream" } } }
}
