import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { callWithHeaders } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, providerCalls, testTenant } from "./support.js"

// The receiver's handling of the bank's signed reports on transfers we sent (transfer.success|failed|reversed), body as
// services/transfers/TransferEvent.ts, signed as every sandbox webhook. The sandbox bank's own reporter and the
// completer's status checks are pushed out of the way (their delays an hour), so only the test's webhooks move transfers.

const QUIET = { sandboxReportDelayMs: 3_600_000, statusCheckAfterMs: 3_600_000 }
const PATHS = ["/webhooks/sandbox", "/api/v1/webhooks/sandbox"] as const

interface Outcome {
  readonly event: "transfer.success" | "transfer.failed" | "transfer.reversed" | string
  readonly reference?: string
  readonly sessionId: string
  readonly amountKobo?: unknown
  readonly accountNumber?: string
  readonly reason?: string | null
}

const bodyOf = (t: MoneyTenant, o: Outcome): Record<string, unknown> => ({
  event: o.event,
  merchantId: t.merchantId,
  sessionId: o.sessionId,
  ...(o.reference === undefined ? {} : { reference: o.reference }),
  accountNumber: o.accountNumber ?? DIRECTORY.bolanle.accountNumber,
  amountKobo: o.amountKobo ?? 10_000,
  paidAt: new Date().toISOString(),
  reason: o.reason ?? null
})

/** Posts the outcome signed with the tenant's webhook secret (or `secret`, or `signature` as given). */
const report = (t: MoneyTenant, o: Outcome, path: string = PATHS[0], sign: { secret?: string; signature?: string | null } = {}) =>
  Effect.gen(function* () {
    const body = bodyOf(t, o)
    const signature = sign.signature === undefined ? signSandboxEvent(sign.secret ?? t.webhookSecret, body) : sign.signature
    return yield* callWithHeaders("POST", path, JSON.stringify(body), signature === null ? {} : { "x-sandbox-signature": signature })
  })

const expectResult = (r: { status: number; body: any }, result: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expect(r.body.result, JSON.stringify(r.body)).toBe(result)
}

const transferOf = (t: MoneyTenant, ref: string) =>
  Effect.map(call("GET", `/api/v1/transfers/${ref}`, { token: t.token }), (r) => {
    expectStatus(r, 200)
    return r.body
  })

/** A payout the bank took (Processing); the test reports its outcome. */
const payout = (t: MoneyTenant, merchantTxRef: string, amountKobo = 10_000) =>
  Effect.gen(function* () {
    const r = yield* call("POST", "/api/v1/transfers/bank", {
      token: t.token, json: { merchantTxRef, amountKobo, accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: DIRECTORY.bolanle.bankCode }
    })
    expectStatus(r, 201)
    expect(r.body.status).toBe("Processing")
    return { ref: merchantTxRef, providerReference: r.body.providerReference as string }
  })

const eventCount = (t: MoneyTenant, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = ${type}`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

const ledgerOf = (t: MoneyTenant) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number; s: number }>`SELECT count(*)::int AS n, COALESCE(sum(abs(amount_kobo)), 0)::bigint AS s FROM ledger_entries WHERE tenant_id = ${t.tenantId}`).pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

const poisonWith = (needle: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ reason: string; source: string }>`SELECT reason, source FROM poison_messages WHERE payload LIKE ${`%${needle}%`}`).pipe(Effect.orDie)

layer(makeTestApp({ moneyOut: QUIET }), { timeout: 120_000, excludeTestServices: true })("transfer outcome webhooks", (it) => {
  it.effect("a bad, missing or foreign signature is 401 and changes nothing, on both paths", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      yield* fund(t, "tw-sig", [100_000])
      const p = yield* payout(t, "tw-sig-1")
      const success = { event: "transfer.success", reference: p.ref, sessionId: p.providerReference }
      for (const path of PATHS) {
        expectProblem({ ...(yield* report(t, success, path, { secret: "not the secret" })), headers: {} }, 401, "invalid_signature")
        expectProblem({ ...(yield* report(t, success, path, { signature: null })), headers: {} }, 401, "invalid_signature")
        expectProblem({ ...(yield* report(t, success, path, { signature: "zz" })), headers: {} }, 401, "invalid_signature")
        // Another tenant's secret does not sign for this merchant.
        expectProblem({ ...(yield* report(t, success, path, { secret: other.webhookSecret })), headers: {} }, 401, "invalid_signature")
        // Signed over other values (the amount changed after signing).
        const body = bodyOf(t, success)
        const tampered = yield* callWithHeaders("POST", path, JSON.stringify({ ...body, amountKobo: 1 }), { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, body) })
        expectProblem({ ...tampered, headers: {} }, 401, "invalid_signature")
      }
      expect((yield* transferOf(t, p.ref)).status).toBe("Processing")
      expect(yield* eventCount(t, "transfer.successful")).toBe(0)
      yield* assertLedgerInvariant
    }))

  it.effect("an unknown reference, or another tenant's, is 200 ignored; nothing changes", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      yield* fund(t, "tw-unknown", [100_000])
      const p = yield* payout(t, "tw-unknown-1")
      const before = yield* ledgerOf(t)
      for (const path of PATHS) {
        for (const event of ["transfer.success", "transfer.failed", "transfer.reversed"]) {
          expectResult(yield* report(t, { event, reference: "never-sent", sessionId: "sbx_trf_none" }, path), "ignored")
          // The other tenant signs (validly, for itself) a report naming this tenant's transfer: not its transfer.
          expectResult(yield* report(other, { event, reference: p.ref, sessionId: p.providerReference }, path), "ignored")
        }
      }
      expect((yield* transferOf(t, p.ref)).status).toBe("Processing")
      expect(yield* ledgerOf(t)).toEqual(before)
      yield* assertLedgerInvariant
    }))

  it.effect("success is processed once; a repeat is duplicate; a later failed is ignored and changes nothing; a reversal still applies", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "tw-ok", [100_000])
      const p = yield* payout(t, "tw-ok-1", 30_000)
      const o = (event: string) => ({ event, reference: p.ref, sessionId: p.providerReference, amountKobo: 30_000 })
      // A report whose amount is not the transfer's (a misrouted report) is ignored and changes nothing.
      expectResult(yield* report(t, { ...o("transfer.success"), amountKobo: 30_001 }, PATHS[0]), "ignored")
      expect((yield* transferOf(t, p.ref)).status).toBe("Processing")
      const first = yield* report(t, o("transfer.success"), PATHS[0])
      expectResult(first, "processed")
      expect(first.body.reference).toBe(p.providerReference)
      const done = yield* transferOf(t, p.ref)
      expect(done).toMatchObject({ status: "Successful", providerReference: p.providerReference, failureReason: null })
      expect(done.completedAt).not.toBeNull()
      expect(yield* eventCount(t, "transfer.successful")).toBe(1)
      const afterSuccess = { ledger: yield* ledgerOf(t), balance: yield* balanceOf(t.token) }
      expect(afterSuccess.balance).toMatchObject({ availableKobo: 70_000, inTransitKobo: 0, paidOutTodayKobo: 30_000 })

      for (const path of PATHS) expectResult(yield* report(t, o("transfer.success"), path), "duplicate")
      for (const path of PATHS) expectResult(yield* report(t, o("transfer.failed"), path), "ignored")
      expect(yield* transferOf(t, p.ref)).toEqual(done)
      expect(yield* ledgerOf(t)).toEqual(afterSuccess.ledger)
      expect(yield* balanceOf(t.token)).toEqual(afterSuccess.balance)
      expect(yield* eventCount(t, "transfer.successful")).toBe(1)
      expect(yield* eventCount(t, "transfer.failed")).toBe(0)
      yield* assertLedgerInvariant

      // The bank returns the money later: Reversed, the money back in the available balance (the day's cap stays used).
      expectResult(yield* report(t, { ...o("transfer.reversed"), reason: "returned by beneficiary bank" }, PATHS[1]), "processed")
      expect(yield* transferOf(t, p.ref)).toMatchObject({ status: "Reversed", failureReason: "returned by beneficiary bank" })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 100_000, inTransitKobo: 0 })
      const afterReversal = yield* ledgerOf(t)
      expectResult(yield* report(t, o("transfer.reversed"), PATHS[0]), "duplicate")
      expectResult(yield* report(t, o("transfer.success"), PATHS[1]), "duplicate")
      expectResult(yield* report(t, o("transfer.failed"), PATHS[0]), "ignored")
      expect((yield* transferOf(t, p.ref)).status).toBe("Reversed")
      expect(yield* ledgerOf(t)).toEqual(afterReversal)
      expect(yield* eventCount(t, "transfer.reversed")).toBe(1)
      expect(yield* providerCalls(p.ref)).toBe(1)
      yield* assertLedgerInvariant
    }))

  it.effect("failed on a sent transfer gives the money and the cap back, once; a late success after it is ignored (nothing is paid)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "tw-fail", [100_000])
      const p = yield* payout(t, "tw-fail-1", 40_000)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 60_000, inTransitKobo: 40_000, paidOutTodayKobo: 40_000 })
      const o = (event: string) => ({ event, reference: p.ref, sessionId: p.providerReference, amountKobo: 40_000, reason: "account closed" })
      expectResult(yield* report(t, o("transfer.failed"), PATHS[1]), "processed")
      expect(yield* transferOf(t, p.ref)).toMatchObject({ status: "Failed", failureReason: "account closed" })
      const afterFail = { ledger: yield* ledgerOf(t), balance: yield* balanceOf(t.token) }
      expect(afterFail.balance).toMatchObject({ availableKobo: 100_000, inTransitKobo: 0, paidOutTodayKobo: 0 })
      expectResult(yield* report(t, o("transfer.failed"), PATHS[0]), "duplicate")
      expectResult(yield* report(t, o("transfer.success"), PATHS[0]), "ignored")
      expectResult(yield* report(t, o("transfer.reversed"), PATHS[1]), "ignored")
      expect((yield* transferOf(t, p.ref)).status).toBe("Failed")
      expect(yield* ledgerOf(t)).toEqual(afterFail.ledger)
      expect(yield* balanceOf(t.token)).toEqual(afterFail.balance)
      expect(yield* eventCount(t, "transfer.failed")).toBe(1)
      expect(yield* eventCount(t, "transfer.successful")).toBe(0)
      yield* assertLedgerInvariant
    }))

  it.effect("a reversal straight from Processing (paid, then returned) posts both steps once", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "tw-rev", [100_000])
      const p = yield* payout(t, "tw-rev-1", 25_000)
      const o = (event: string) => ({ event, reference: p.ref, sessionId: p.providerReference, amountKobo: 25_000 })
      expectResult(yield* report(t, o("transfer.reversed")), "processed")
      expect((yield* transferOf(t, p.ref)).status).toBe("Reversed")
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 100_000, inTransitKobo: 0 })
      const sql = yield* SqlClient.SqlClient
      const journals = yield* sql<{ journalId: string }>`SELECT DISTINCT journal_id FROM ledger_entries WHERE tenant_id = ${t.tenantId} AND journal_id LIKE 'pay:%' ORDER BY journal_id`
      expect(journals.map((j) => j.journalId)).toEqual([`pay:${p.ref}`, `pay:${p.ref}:paid`, `pay:${p.ref}:reversed`])
      expectResult(yield* report(t, o("transfer.reversed"), PATHS[1]), "duplicate")
      yield* assertLedgerInvariant
    }))

  it.effect("a refund's transfer.failed by webhook holds its money again under the deposit's hold", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references: [deposit] } = yield* fund(t, "tw-rfd", [15_000], { expected: 10_000 })
      const sent = yield* call("POST", `/api/v1/transactions/${deposit}/refund`, { token: t.testOwnerToken })
      expect(sent.body).toMatchObject({ status: "Sent", amountKobo: 5_000, transferStatus: "Processing" })
      const transfer = yield* transferOf(t, `rfd_${deposit}`)
      expectResult(yield* report(t, { event: "transfer.failed", reference: `rfd_${deposit}`, sessionId: transfer.providerReference, amountKobo: 5_000, accountNumber: DIRECTORY.adaeze.accountNumber }, PATHS[1]), "processed")
      expect((yield* transferOf(t, `rfd_${deposit}`)).status).toBe("Failed")
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000, availableKobo: 10_000, inTransitKobo: 0 })
      expect((yield* call("GET", "/api/v1/virtual-accounts/tw-rfd", { token: t.token })).body).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })
      expectResult(yield* report(t, { event: "transfer.failed", reference: `rfd_${deposit}`, sessionId: transfer.providerReference, amountKobo: 5_000, accountNumber: DIRECTORY.adaeze.accountNumber }, PATHS[0]), "duplicate")
      expect((yield* balanceOf(t.token)).heldKobo).toBe(5_000)
      yield* assertLedgerInvariant
    }))

  it.effect("a signed but malformed outcome (no reference, bad amount, bad account) is 200 ignored and recorded in poison_messages", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "tw-poison", [100_000])
      const p = yield* payout(t, "tw-poison-1")
      const before = yield* ledgerOf(t)
      for (const path of PATHS) {
        const marker = `sbx_poison_${crypto.randomBytes(4).toString("hex")}`
        const noReference = yield* report(t, { event: "transfer.success", sessionId: `${marker}_a` }, path)
        expectResult(noReference, "ignored")
        expect(noReference.body.reference).toBe(`${marker}_a`)
        expectResult(yield* report(t, { event: "transfer.success", reference: p.ref, sessionId: `${marker}_b`, amountKobo: 100.5 }, path), "ignored")
        expectResult(yield* report(t, { event: "transfer.failed", reference: "", sessionId: `${marker}_c` }, path), "ignored")
        for (const suffix of ["a", "b", "c"]) {
          const rows = yield* poisonWith(`${marker}_${suffix}`)
          expect(rows, `${path} ${suffix}`).toHaveLength(1)
          expect(rows[0]).toMatchObject({ source: "receiver", reason: "signed transfer outcome failed validation" })
        }
      }
      expect((yield* transferOf(t, p.ref)).status).toBe("Processing")
      expect(yield* ledgerOf(t)).toEqual(before)
      yield* assertLedgerInvariant
    }))
})

// The same receiver behind the HttpApi handler (the service's fast path off): the answers are the same.
layer(makeTestApp({ moneyOut: QUIET, fastPath: false }), { timeout: 120_000, excludeTestServices: true })("transfer outcome webhooks (HttpApi handler)", (it) => {
  it.effect("401, processed, duplicate, ignored and poison, on both paths", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* fund(t, "tw-api", [100_000])
      const p = yield* payout(t, "tw-api-1")
      const o = (event: string) => ({ event, reference: p.ref, sessionId: p.providerReference })
      for (const path of PATHS) expectProblem({ ...(yield* report(t, o("transfer.success"), path, { secret: "wrong" })), headers: {} }, 401, "invalid_signature")
      expectResult(yield* report(t, o("transfer.success"), PATHS[1]), "processed")
      expectResult(yield* report(t, o("transfer.success"), PATHS[0]), "duplicate")
      expectResult(yield* report(t, o("transfer.failed"), PATHS[1]), "ignored")
      expectResult(yield* report(t, { event: "transfer.success", reference: "nope", sessionId: "sbx_none" }, PATHS[0]), "ignored")
      const marker = `sbx_poison_${crypto.randomBytes(4).toString("hex")}`
      expectResult(yield* report(t, { event: "transfer.reversed", sessionId: marker }, PATHS[1]), "ignored")
      expect(yield* poisonWith(marker)).toHaveLength(1)
      expect((yield* transferOf(t, p.ref)).status).toBe("Successful")
      yield* assertLedgerInvariant
    }))
})
