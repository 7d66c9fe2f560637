import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, providerCalls, testTenant, waitForTransfer } from "./support.js"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("holds and refunds", (it) => {
  it.effect("overpaid: hold the deposit, refund the surplus (held money first), the hold ends Refunded, figures follow", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "hr-1", [15_000], { expected: 10_000 })
      const ref = references[0]!
      const held = yield* call("POST", `/api/v1/settlements/${ref}/hold`, { token: t.token, json: { reason: "overpaid" } })
      expectStatus(held, 200)
      expect(held.body).toMatchObject({ reference: ref, accountRef: "hr-1", heldKobo: 15_000, status: "Held", reason: "overpaid" })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, heldKobo: 15_000 })
      // Idempotent: the active hold answers as it is.
      expect((yield* call("POST", `/api/v1/settlements/${ref}/hold`, { token: t.token })).body).toMatchObject({ heldKobo: 15_000, status: "Held" })

      const refund = yield* call("POST", `/api/v1/transactions/${ref}/refund`, { token: t.testOwnerToken })
      expectStatus(refund, 200)
      expect(refund.body).toMatchObject({
        reference: ref, status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}`,
        destination: { accountNumber: DIRECTORY.adaeze.accountNumber, bankCode: "058", accountName: "ADAEZE OKAFOR" }
      })
      const again = yield* call("POST", `/api/v1/transactions/${ref}/refund`, { token: t.testOwnerToken })
      expectStatus(again, 200)
      expect(again.body).toMatchObject({ status: "AlreadySent", amountKobo: 5_000 })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      const account = yield* call("GET", "/api/v1/virtual-accounts/hr-1", { token: t.token })
      expect(account.body).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0, paymentState: "FullyPaid" })
      const hold = yield* call("POST", `/api/v1/settlements/${ref}/release`, { token: t.token })
      expectProblem(hold, 409, "hold_not_active")
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 10_000, heldKobo: 0 })
      expectProblem(yield* call("POST", `/api/v1/transactions/${ref}/refund`, { token: t.token }), 403, "wrong_plane")
      yield* assertLedgerInvariant
    }))

  it.effect("release gives the money back; no surplus; nothing available after a payout took it; destination missing", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "hr-2", [10_000, 4_000], { expected: 10_000, payer: { accountNumber: "", bankCode: "", name: "ADAEZE OKAFOR" } })
      const [exact, over] = references as [string, string]
      expectStatus(yield* call("POST", `/api/v1/settlements/${exact}/hold`, { token: t.token, json: { amountKobo: 3_000 } }), 200)
      const released = yield* call("POST", `/api/v1/settlements/${exact}/release`, { token: t.token })
      expect(released.body).toMatchObject({ status: "Released", heldKobo: 3_000 })
      expect(released.body.releasedAt).not.toBeNull()
      expectProblem(yield* call("POST", `/api/v1/transactions/${exact}/refund`, { token: t.testOwnerToken }), 400, "no_refundable_surplus")
      expectProblem(yield* call("POST", `/api/v1/transactions/${over}/refund`, { token: t.testOwnerToken }), 400, "destination_missing")
      // A payout takes everything: the surplus is no longer here.
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: "all", amountKobo: 14_000, ...DIRECTORY.ibrahim, accountName: undefined } }), 201)
      expectProblem(yield* call("POST", `/api/v1/transactions/${over}/refund`, { token: t.testOwnerToken, json: { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011" } }), 400, "nothing_available")
      expectProblem(yield* call("POST", `/api/v1/settlements/${over}/hold`, { token: t.token }), 400, "nothing_available")
      expectProblem(yield* call("POST", "/api/v1/settlements/nope/hold", { token: t.token }), 404, "transaction_not_found")
      expectProblem(yield* call("POST", `/api/v1/settlements/${over}/release`, { token: t.token }), 404, "hold_not_found")
      yield* assertLedgerInvariant
    }))
})
