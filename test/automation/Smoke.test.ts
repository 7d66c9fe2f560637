import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, balanceOf, fund, testTenant } from "../money/support.js"
import { createFlow, createRule, runsOf, waitForAutomation } from "./support.js"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("automation smoke", (it) => {
  it.effect("an Overpaid Hold rule and a notify flow fire once for an overpayment", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const rule = yield* createRule(t.token, { trigger: "overpaid", action: "HOLD", thresholdKobo: 1_000 })
      const flow = yield* createFlow(t.testOwnerToken, { name: "tell me", trigger: "Deposit", actions: ["notify", "flag"] })
      const { references } = yield* fund(t, "sm-1", [15_000], { expected: 10_000 })
      yield* waitForAutomation(t.tenantId)
      const runs = yield* runsOf(t.tenantId)
      console.log(JSON.stringify(runs, null, 1))
      expect(runs.map((r) => r.sourceId)).toEqual([rule.id, flow.id])
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000 })
      const flowRuns = yield* call("GET", "/api/v1/flows/runs", { token: t.testOwnerToken })
      expectStatus(flowRuns, 200)
      console.log(JSON.stringify(flowRuns.body))
      const txn = yield* call("GET", `/api/v1/transactions/${references[0]}`, { token: t.token })
      console.log(JSON.stringify(txn.body))
      const dry = yield* call("POST", "/api/v1/rules/dry-run", { token: t.token, json: { trigger: "AnyDeposit", action: "Notify" } })
      console.log(JSON.stringify(dry.body))
      yield* assertLedgerInvariant
    }))
})
