import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, DIRECTORY, fund, testTenant, waitForTransfer } from "../money/support.js"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("settlement smoke", (it) => {
  it.effect("manual run with a sub-merchant and a split", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const sm = yield* call("POST", "/api/v1/sub-merchants", { token: t.token, json: { name: "Bolanle Adeyemi", reference: "sm-1" } })
      expectStatus(sm, 201)
      const payout = yield* call("PUT", `/api/v1/sub-merchants/${sm.body.id}/payout`, { token: t.token, json: { bankName: "Zenith", bankCode: "057", accountNumber: DIRECTORY.bolanle.accountNumber, platformFeeBps: 250 } })
      expectStatus(payout, 200)
      const settings = yield* call("PUT", "/api/v1/settings/settlement", { token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises", autoSettle: true } })
      expectStatus(settings, 200)
      const splits = yield* call("PUT", "/api/v1/settings/splits", { token: t.token, json: { splits: [{ subMerchantRef: "sm-1", bps: 2000, priority: 1 }, { flatKobo: 100, priority: 2 }] } })
      expectStatus(splits, 200)
      yield* fund(t, "acc-1", [10_001], { expected: 10_001 })
      const smAcc = yield* call("POST", "/api/v1/virtual-accounts", { token: t.token, json: { accountRef: "acc-2", name: "X", subMerchantRef: "sm-1" } })
      expectStatus(smAcc, 201)
      const run = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
      expectStatus(run, 200)
      console.log(JSON.stringify(run.body, null, 1))
      for (const s of run.body.data) for (const l of s.legs) yield* waitForTransfer(t.token, l.merchantTxRef)
      const list = yield* call("GET", "/api/v1/settlements", { token: t.token })
      console.log(JSON.stringify(list.body, null, 1))
      const bal = yield* call("GET", `/api/v1/sub-merchants/${sm.body.id}/balance`, { token: t.token })
      console.log(JSON.stringify(bal.body))
      expect(list.body.data[0].status).toBe("Paid")
      yield* assertLedgerInvariant
    }))
})
