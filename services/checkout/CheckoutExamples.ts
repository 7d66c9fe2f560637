import { type OperationExamples, problem } from "../../src/contract/OperationExample.js"

/** Checkout: what the OpenAPI document shows as each operation's request and responses (src/contract/OperationExample.ts). */
export const CHECKOUT_EXAMPLES: OperationExamples = {
  "checkout.createSession": { request: {"accountRef":"cust-0042","ttlSeconds":1}, responses: { 201: {"token":"chk_9f2c4e7a1b","expiresAt":"2026-12-21T10:15:00.000Z","snapshotUrl":"/api/v1/checkout/chk_9f2c4e7a1b","streamUrl":"/api/v1/checkout/chk_9f2c4e7a1b/stream","hostedUrl":"https://pay.adaezestores.ng/checkout/chk_9f2c4e7a1b"}, 404: problem("checkout_session_not_found", "No checkout session with this token, or it has expired.") } },
  "checkoutPublic.snapshot": { responses: { 200: {"status":"partially_paid","amountDueKobo":2500000,"amountPaidKobo":1000000,"remainingKobo":1500000,"nuban":"9912345678","bankName":"Wema Bank","expiresAt":"2026-12-21T10:15:00.000Z","updatedAt":"2026-11-21T10:15:00.000Z"}, 404: problem("checkout_session_not_found", "No checkout session with this token, or it has expired.") } },
  "checkoutPublic.snapshotShort": { responses: { 200: {"status":"partially_paid","amountDueKobo":2500000,"amountPaidKobo":1000000,"remainingKobo":1500000,"nuban":"9912345678","bankName":"Wema Bank","expiresAt":"2026-12-21T10:15:00.000Z","updatedAt":"2026-11-21T10:15:00.000Z"}, 404: problem("checkout_session_not_found", "No checkout session with this token, or it has expired.") } },
  "checkoutPublic.stream": { responses: { 200: "event: snapshot\ndata: {\"status\":\"partially_paid\",\"amountDueKobo\":2500000,\"amountPaidKobo\":1000000,\"remainingKobo\":1500000}\n\n", 404: problem("checkout_session_not_found", "No checkout session with this token, or it has expired.") } },
}
