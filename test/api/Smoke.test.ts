import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { apiToken, call, makeTestApp, signup } from "../support/TestApp.js"

layer(makeTestApp(), { timeout: 60_000, excludeTestServices: true })("smoke", (it) => {
  it.effect("signup, key, token, virtual account", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const { token } = yield* apiToken(ownerToken, "test")
      const r = yield* call("POST", "/api/v1/virtual-accounts", { token, json: { accountRef: "c1", name: "John Adeyemi", expectedAmountKobo: 150000 } })
      expect(r.status).toBe(201)
      expect(r.body.paymentState).toBe("AwaitingPayment")
    }))
})
