import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Billing } from "../../services/billing/Billing.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"

layer(makeTestApp(), { timeout: 60_000, excludeTestServices: true })("billing smoke", (it) => {
  it.effect("schedule, sandbox clock, tick", () =>
    Effect.gen(function* () {
      const billing = yield* Billing
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "b-1", "Chiamaka Obi")
      const s = yield* call("POST", "/api/v1/billing/schedules", { token: t.token, json: { accountRef: "b-1", interval: "monthly", amountKobo: 10_000, dueOffsetDays: 5, reference: "sch-1" } })
      expectStatus(s, 201)
      console.log(JSON.stringify(s.body))
      const va = yield* call("GET", "/api/v1/virtual-accounts/b-1", { token: t.token })
      console.log(JSON.stringify(va.body))
      yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 40 * 86400 } })
      yield* billing.tick()
      const p = yield* call("GET", `/api/v1/billing/schedules/${s.body.id}/periods`, { token: t.token })
      console.log(JSON.stringify(p.body))
      yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 15_000, senderName: "OBI CHIAMAKA" })
      yield* waitForTransactions(t.tenantId, 1)
      yield* billing.tick()
      const p2 = yield* call("GET", `/api/v1/billing/schedules/${s.body.id}/periods`, { token: t.token })
      console.log(JSON.stringify(p2.body))
      const c = yield* call("POST", `/api/v1/billing/schedules/${s.body.id}/cancel`, { token: t.token })
      console.log(JSON.stringify(c.body))
      const va2 = yield* call("GET", "/api/v1/virtual-accounts/b-1", { token: t.token })
      console.log(JSON.stringify(va2.body))
      expect(p2.body.data.length).toBe(2)
      yield* assertLedgerInvariant
    }))
})
