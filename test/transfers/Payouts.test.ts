import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, providerCalls, testTenant, waitForTransfer } from "./support.js"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("payouts", (it) => {
  it.effect("a payout: name enquiry, claim, provider, outcome by the sandbox bank's webhook; balance and ledger follow", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "payout-1", [1_000_000])
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 1_000_000, paidOutTodayKobo: 0, dailyPayoutCapKobo: 500_000_000 })
      const lookup = yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: "057" } })
      expectStatus(lookup, 200)
      expect(lookup.body).toEqual({ accountNumber: "2000000015", bankCode: "057", bankName: "Zenith Bank", accountName: "BOLANLE ADEYEMI" })
      const created = yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "po-1", amountKobo: 250_000, accountNumber: "2000000015", bankCode: "057", narration: "supplier" }
      })
      expectStatus(created, 201)
      expect(created.body).toMatchObject({ merchantTxRef: "po-1", amountKobo: 250_000, accountName: "BOLANLE ADEYEMI", status: "Processing", source: "api", mode: "test" })
      const done = yield* waitForTransfer(t.token, "po-1")
      expect(done.status).toBe("Successful")
      expect(yield* providerCalls("po-1")).toBe(1)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 750_000, paidOutTodayKobo: 250_000, payoutCapRemainingKobo: 500_000_000 - 250_000, inTransitKobo: 0 })
      const again = yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "po-1", amountKobo: 250_000, accountNumber: "2000000015", bankCode: "057", narration: "supplier" }
      })
      expectStatus(again, 200)
      expect(again.body.status).toBe("Successful")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "po-1", amountKobo: 250_001, accountNumber: "2000000015", bankCode: "057", narration: "supplier" }
      }), 409, "reference_reused")
      expect(yield* providerCalls("po-1")).toBe(1)
      yield* assertLedgerInvariant
    }))

  it.effect("a failed transfer gives the money back; a reversed one too; a slow one is finished by the completer's status check", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "payout-2", [900_000])
      for (const [ref, to] of [["po-fail", DIRECTORY.fail], ["po-rev", DIRECTORY.reverse], ["po-slow", DIRECTORY.slow]] as const) {
        expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: ref, amountKobo: 100_000, accountNumber: to.accountNumber, bankCode: to.bankCode } }), 201)
      }
      expect((yield* waitForTransfer(t.token, "po-fail")).status).toBe("Failed")
      expect((yield* waitForTransfer(t.token, "po-rev", ["Reversed"])).status).toBe("Reversed")
      expect((yield* waitForTransfer(t.token, "po-slow")).status).toBe("Successful")
      const b = yield* balanceOf(t.token)
      expect(b).toMatchObject({ availableKobo: 800_000, inTransitKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("errors: bad NUBAN, unknown account, name mismatch, insufficient balance, reserved reference, floats", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "payout-3", [50_000])
      expectProblem(yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: "0690000034", bankCode: "044" } }), 400, "invalid_bank_account")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: "0010246780", bankCode: "999" } }), 400, "invalid_bank_account")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank/lookup", { token: t.token, json: { accountNumber: "0000014579", bankCode: "011" } }), 404, "bank_account_not_found")
      const base = { amountKobo: 10_000, accountNumber: DIRECTORY.adaeze.accountNumber, bankCode: "058" }
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-1", accountName: "MUSA IBRAHIM" } }), 422, "account_name_mismatch")
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-2", accountName: "Adaeze Okafor" } }), 201)
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-3", amountKobo: 40_001 } }), 422, "insufficient_balance")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-4", accountNumber: "0000014579", bankCode: "011" } }), 422, "recipient_not_found")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "rfd_x" } }), 400, "reserved_reference")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-5", amountKobo: 100.5 } }), 400, "validation_failed")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { ...base, merchantTxRef: "e-6", amountKobo: "100" } }), 400, "validation_failed")
      expectProblem(yield* call("GET", "/api/v1/transfers/nope", { token: t.token }), 404, "transfer_not_found")
      const list = yield* call("GET", "/api/v1/transfers", { token: t.token })
      expect(list.body.data.map((x: any) => x.merchantTxRef)).toEqual(["e-2"])
      yield* assertLedgerInvariant
    }))

  it.effect("a late reversal of held money takes it out of escrow: the hold is emptied, a release frees nothing, so it cannot be paid out again", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const a = yield* fund(t, "net-a", [100_000])
      yield* fund(t, "net-b", [50_000])
      const deposit = a.references[0]!
      expectStatus(yield* call("POST", `/api/v1/settlements/${deposit}/hold`, { token: t.token }), 200)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 50_000, receivableKobo: 0, heldKobo: 100_000 })
      // The bank reverses the held deposit: all of it comes out of its hold; nothing is owed, net-b's money stays free.
      const reversal = yield* sendSigned(t, { accountNumber: a.account.nuban, amountKobo: 100_000, event: "transfer.reversal", reversedSessionId: deposit })
      expect(reversal.status).toBe(200)
      yield* waitForTransactions(t.tenantId, 3)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 50_000, receivableKobo: 0, heldKobo: 0 })
      // The hold ended with nothing left in it: releasing it frees nothing.
      const released = yield* call("POST", `/api/v1/settlements/${deposit}/release`, { token: t.token })
      expectStatus(released, 200)
      expect(released.body).toMatchObject({ status: "Released", heldKobo: 0 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 50_000, receivableKobo: 0, heldKobo: 0 })
      const to = { accountNumber: DIRECTORY.ibrahim.accountNumber, bankCode: DIRECTORY.ibrahim.bankCode }
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: "net-2", amountKobo: 50_001, ...to } }), 422, "insufficient_balance")
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: "net-3", amountKobo: 50_000, ...to } }), 201)
      expect((yield* waitForTransfer(t.token, "net-3")).status).toBe("Successful")
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, receivableKobo: 0 })
      yield* assertLedgerInvariant
    }))
})
