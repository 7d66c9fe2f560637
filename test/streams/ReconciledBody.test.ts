import { describe, expect, it } from "@effect/vitest"
import { reconciledBody } from "../../streams/ReconciledBus.js"

describe("the RECONCILED message body", () => {
  it("is the committed envelope with the tenant id added, built from its JSON text without re-serialising", () => {
    const envelope = { id: "evt_1", type: "deposit.reconciled", createdAt: "2026-11-21T10:00:00.000Z", mode: "test", data: { amountKobo: 500_000, note: "a \"quoted\" , {brace}" } }
    for (const text of [JSON.stringify(envelope), JSON.stringify(envelope, null, 2), `  ${JSON.stringify(envelope)}`]) {
      const body = reconciledBody({ tenantId: "ten_\"odd\"", mode: "test", eventId: "evt_1", eventType: "deposit.reconciled", subjectKey: "acct-1", envelopeJson: text })
      expect(JSON.parse(body)).toEqual({ ...envelope, tenantId: "ten_\"odd\"" })
    }
  })
})
