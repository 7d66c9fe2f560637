import type { OperationExamples } from "../../src/contract/OperationExample.js"

/** Copilot: what the OpenAPI document shows as each operation's request and responses (src/contract/OperationExample.ts). */
export const COPILOT_EXAMPLES: OperationExamples = {
  "copilot.ask": { request: {"prompt":"How much did we collect yesterday?"}, responses: { 200: {"answer":"You collected ₦250,000.00 yesterday across 3 deposits.","intent":"collected_total","figures":{},"references":[{"kind":"kobo","id":"3f0c2a9e-5b7d-4c1e-9a8f-2d6b1e4c7a90"}],"rephrased":true} } },
}
