import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { matchNames } from "../../src/domain/NameMatch.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, providerCalls, testTenant, waitForTransfer } from "./support.js"

// Refunds go to the payer (issue 31, part 6): a refund to the captured source (no destination in the body) whose name
// enquiry clearly does not match the deposit's payer name is refused, 400 refund_destination_unverified, with both
// names and nothing sent. "Clearly" is the name matcher's (src/domain/NameMatch.ts) with the threshold payouts use: a
// WEAK band (score under 0.7) is refused, PARTIAL (0.7 and over) and STRONG pass. A destination named in the body is
// not checked against the payer (its accountName, if given, still is against the bank's name).
//
// Every deposit here comes from ADAEZE OKAFOR's GTBank account (the sandbox directory's 0123456785), under the payer
// name the bank's notification gave.

const CAPTURED = DIRECTORY.adaeze

/** Bands of the payer names below against the bank's name for the captured account, as the matcher has them. */
const NAMES = {
  exact: "Okafor Adaeze", // STRONG 1.0: order and case aside, the same name
  initial: "A. OKAFOR", // PARTIAL 0.8867: an initial for the first name
  atThreshold: "OKAFOR A N", // PARTIAL 0.7: exactly at the threshold
  justUnder: "OKAFOR A B C", // WEAK 0.672: just under it
  other: "EMEKA EZE" // WEAK 0: someone else
} as const

const refund = (t: MoneyTenant, reference: string, json?: Record<string, unknown>) =>
  call("POST", `/api/v1/transactions/${reference}/refund`, json === undefined ? { token: t.testOwnerToken } : { token: t.testOwnerToken, json })

/** An overpaid deposit (10,000 due, 15,000 paid: 5,000 of surplus) from the captured account, under `payerName`. */
const overpaid = (t: MoneyTenant, accountRef: string, payerName: string) =>
  Effect.map(fund(t, accountRef, [15_000], { expected: 10_000, payer: { accountNumber: CAPTURED.accountNumber, bankCode: CAPTURED.bankCode, name: payerName } }),
    (f) => f.references[0]!)

const refundTransfers = (t: MoneyTenant) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ merchantTxRef: string }>`SELECT merchant_tx_ref FROM transfers WHERE tenant_id = ${t.tenantId} AND source = 'refund' ORDER BY created_at`
  ).pipe(Effect.map((rows) => rows.map((r) => r.merchantTxRef)), Effect.orDie)

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("refunds go to the payer", (it) => {
  it("the names below sit where the test needs them in the matcher's bands", () => {
    const band = (payer: string) => matchNames(payer, CAPTURED.accountName)
    expect(band(NAMES.exact)).toEqual({ score: 1, band: "STRONG" })
    expect(band(NAMES.initial).band).toBe("PARTIAL")
    expect(band(NAMES.atThreshold)).toEqual({ score: 0.7, band: "PARTIAL" })
    expect(band(NAMES.justUnder).band).toBe("WEAK")
    expect(band(NAMES.justUnder).score).toBeGreaterThan(0.65)
    expect(band(NAMES.other)).toEqual({ score: 0, band: "WEAK" })
  })

  it.effect("under the threshold: a captured account whose bank name is not the payer's is refused, 400 with both names, nothing sent", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      for (const [ref, payerName] of [["rp-other", NAMES.other], ["rp-under", NAMES.justUnder]] as const) {
        const deposit = yield* overpaid(t, ref, payerName)
        const refused = yield* refund(t, deposit)
        expectProblem(refused, 400, "refund_destination_unverified")
        expect(refused.body).toMatchObject({ payerName, accountName: CAPTURED.accountName })
        expect(refused.body.message).toContain(payerName)
        expect(refused.body.message).toContain(CAPTURED.accountName)
        expect(yield* providerCalls(`rfd_${deposit}`)).toBe(0)
        // The caller's accountName agrees with the bank, but names no destination: the captured one is still not the payer's.
        expectProblem(yield* refund(t, deposit, { accountName: CAPTURED.accountName }), 400, "refund_destination_unverified")
        // Nothing moved: the account is still overpaid by the whole surplus.
        expect((yield* call("GET", `/api/v1/virtual-accounts/${ref}`, { token: t.token })).body).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })
      }
      expect(yield* refundTransfers(t)).toEqual([])
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 30_000, inTransitKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("at and over the threshold: the payer's own account (a close name, an initial, the threshold itself) is refunded", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      for (const [ref, payerName] of [["rp-exact", NAMES.exact], ["rp-initial", NAMES.initial], ["rp-at", NAMES.atThreshold]] as const) {
        const deposit = yield* overpaid(t, ref, payerName)
        const sent = yield* refund(t, deposit)
        expectStatus(sent, 200)
        expect(sent.body).toMatchObject({ status: "Sent", amountKobo: 5_000, destination: CAPTURED, merchantTxRef: `rfd_${deposit}` })
        expect((yield* waitForTransfer(t.token, `rfd_${deposit}`)).status).toBe("Successful")
        expect(yield* providerCalls(`rfd_${deposit}`)).toBe(1)
      }
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 30_000, inTransitKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("a destination named in the body is not checked against the payer; its accountName still is against the bank", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const deposit = yield* overpaid(t, "rp-named", NAMES.other)
      expectProblem(yield* refund(t, deposit), 400, "refund_destination_unverified")
      // The body's accountName must still match the bank's name for the account it names.
      expectProblem(yield* refund(t, deposit, { accountNumber: CAPTURED.accountNumber, bankCode: CAPTURED.bankCode, accountName: NAMES.other }), 422, "account_name_mismatch")
      expect(yield* providerCalls(`rfd_${deposit}`)).toBe(0)
      // Named (the same account, checked by the caller): sent.
      const sent = yield* refund(t, deposit, { accountNumber: CAPTURED.accountNumber, bankCode: CAPTURED.bankCode })
      expectStatus(sent, 200)
      expect(sent.body).toMatchObject({ status: "Sent", amountKobo: 5_000, destination: CAPTURED })
      // Another named account, nothing to do with the payer's name: sent too.
      const other = yield* overpaid(t, "rp-named-2", NAMES.other)
      const toTunde = yield* refund(t, other, { accountNumber: DIRECTORY.tunde.accountNumber, bankCode: DIRECTORY.tunde.bankCode })
      expectStatus(toTunde, 200)
      expect(toTunde.body).toMatchObject({ status: "Sent", destination: DIRECTORY.tunde })
      for (const ref of [deposit, other]) expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
      expect(yield* refundTransfers(t)).toHaveLength(2)
      yield* assertLedgerInvariant
    }))
})
