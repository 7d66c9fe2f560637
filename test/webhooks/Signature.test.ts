import { describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { newSigningSecret, signedHeaders } from "../../services/webhooks/Signature.js"

describe("Standard Webhooks signing", () => {
  it("matches the published Standard Webhooks test vector", () => {
    const headers = signedHeaders("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    })
  })

  it("a fresh secret is whsec_ + base64 of 32 random bytes, and standardwebhooks verifies what we sign", () => {
    const secret = newSigningSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
    expect(newSigningSecret()).not.toBe(secret)
    const body = JSON.stringify({ id: "evt_1", type: "deposit.reconciled", createdAt: "2026-11-21T10:00:00.000Z", mode: "test", data: { note: "₦ naïve" } })
    const headers = signedHeaders(secret, "evt_1", Date.now() / 1000, body)
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret).verify(body + " ", { ...headers })).toThrow()
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow()
  })

  it("refuses secrets of the wrong shape", () => {
    expect(() => signedHeaders("sk_live_abc", "evt_1", 1, "{}")).toThrow("unknown format")
    expect(() => signedHeaders("whsec_c2hvcnQ=", "evt_1", 1, "{}")).toThrow("too short")
  })
})
