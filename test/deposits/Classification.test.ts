import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, callWithHeaders, createAccount, eventBody, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"

const PROBLEM = "application/problem+json"

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("deposit classification over the real pipeline", (it) => {
  const account = (token: string, ref: string) => call("GET", `/api/v1/virtual-accounts/${ref}`, { token }).pipe(Effect.map((r) => r.body))
  const txn = (token: string, ref: string) => call("GET", `/api/v1/transactions/${ref}`, { token }).pipe(Effect.map((r) => r.body))

  it.effect("Underpaid, Exact, then Overpaid moves FullyPaid to Overpaid; a Reversal moves it back to PartiallyPaid", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "school-fees", "John Adeyemi", 150_000)
      const a = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 100_000 })
      expect(a.status).toBe(200)
      expect(a.body).toEqual({ result: "processed", reference: a.sessionId })
      yield* waitForTransactions(t.tenantId, 1)
      expect((yield* txn(t.token, a.sessionId)).reconciliationStatus).toBe("Underpaid")
      expect(yield* account(t.token, "school-fees")).toMatchObject({ amountPaidKobo: 100_000, deficit: 50_000, overpayment: 0, paymentState: "PartiallyPaid" })

      const b = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 50_000, senderName: "JOHN ADEYEMI" })
      yield* waitForTransactions(t.tenantId, 2)
      expect((yield* txn(t.token, b.sessionId)).reconciliationStatus).toBe("Exact")
      expect(yield* account(t.token, "school-fees")).toMatchObject({ amountPaidKobo: 150_000, deficit: 0, paymentState: "FullyPaid" })

      const c = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 20_000, senderName: "ADEYEMI J" })
      yield* waitForTransactions(t.tenantId, 3)
      expect((yield* txn(t.token, c.sessionId)).reconciliationStatus).toBe("Overpaid")
      expect(yield* account(t.token, "school-fees")).toMatchObject({ amountPaidKobo: 170_000, overpayment: 20_000, paymentState: "Overpaid" })

      const r = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: va.nuban, amountKobo: 50_000, reversedSessionId: b.sessionId })
      yield* waitForTransactions(t.tenantId, 4)
      const reversal = yield* txn(t.token, r.sessionId)
      expect(reversal).toMatchObject({ reconciliationStatus: "Reversal", status: "Completed", reversedReference: b.sessionId })
      expect((yield* txn(t.token, b.sessionId)).status).toBe("Reversed")
      expect(yield* account(t.token, "school-fees")).toMatchObject({ amountPaidKobo: 120_000, deficit: 30_000, paymentState: "PartiallyPaid" })
      yield* assertLedgerInvariant
    }))

  it.effect("an open account is Credited; a repeat of payer and amount within 24 h is Duplicate and still credited", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "wallet", "Chioma Okafor")
      const a = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 25_000, senderName: "OKAFOR CHIOMA", senderAccountNumber: "0010246780" })
      const b = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 25_000, senderName: "OKAFOR CHIOMA", senderAccountNumber: "0010246780" })
      yield* waitForTransactions(t.tenantId, 2)
      expect((yield* txn(t.token, a.sessionId)).reconciliationStatus).toBe("Credited")
      expect((yield* txn(t.token, b.sessionId)).reconciliationStatus).toBe("Duplicate")
      expect(yield* account(t.token, "wallet")).toMatchObject({ amountPaidKobo: 50_000, paymentState: "Open", deficit: 0, overpayment: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("an unknown NUBAN is recorded Unmatched with a null account, PendingReview, and answered unmatched", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const r = yield* sendSigned(t, { accountNumber: "0000014579", amountKobo: 9_900 })
      expect(r.body).toEqual({ result: "unmatched", reference: r.sessionId })
      yield* waitForTransactions(t.tenantId, 1)
      expect(yield* txn(t.token, r.sessionId)).toMatchObject({ accountRef: null, status: "PendingReview", reconciliationStatus: "Unmatched", nuban: "0000014579" })
      const sql = yield* SqlClient.SqlClient
      const [suspense] = yield* sql<{ s: number }>`SELECT sum(amount_kobo)::bigint AS s FROM ledger_entries WHERE tenant_id = ${t.tenantId} AND account = 'suspense:unmatched'`
      expect(suspense!.s).toBe(-9_900)
      yield* assertLedgerInvariant
    }))

  it.effect("a repeated provider reference answers duplicate and is ignored; other events are ignored", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "dup", "Musa Ibrahim", 10_000)
      const a = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 10_000, senderName: "IBRAHIM MUSA" })
      const again = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 10_000, senderName: "IBRAHIM MUSA", sessionId: a.sessionId })
      expect(again.body).toEqual({ result: "duplicate", reference: a.sessionId })
      const other = yield* sendSigned(t, { event: "transfer.outbound", accountNumber: va.nuban, amountKobo: 10_000 }, "/api/v1/webhooks/sandbox")
      expect(other.body.result).toBe("ignored")
      yield* waitForTransactions(t.tenantId, 1)
      expect((yield* account(t.token, "dup")).amountPaidKobo).toBe(10_000)
      yield* assertLedgerInvariant
    }))

  it.effect("a bad or missing signature is 401 problem+json and records nothing", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "sig", "Musa Ibrahim", 10_000)
      const body = eventBody(t, { accountNumber: va.nuban, amountKobo: 10_000 })
      const missing = yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(body), {})
      const wrong = yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(body), { "x-sandbox-signature": "ab".repeat(32) })
      const tampered = yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify({ ...body, amountKobo: 99_999 }), {
        "x-sandbox-signature": (yield* Effect.sync(() => require_sign(t.webhookSecret, body)))
      })
      for (const r of [missing, wrong, tampered]) {
        expect(r.status).toBe(401)
        expect(r.contentType).toContain(PROBLEM)
        expect(r.body.code).toBe("invalid_signature")
      }
      const garbage = yield* callWithHeaders("POST", "/webhooks/sandbox", "{not json", { "x-sandbox-signature": "00" })
      expect(garbage.status).toBe(400)
      expect(garbage.contentType).toContain(PROBLEM)
      const sql = yield* SqlClient.SqlClient
      const [n] = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM inbound_events WHERE tenant_id = ${t.tenantId}`
      expect(n!.n).toBe(0)
    }))

  it.effect("risk at or over the threshold holds an exact payment for review; approve credits it, reject does not", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const va = yield* createAccount(t.token, "risky", "Seyi Olufemi", 40_000)
      // A business payer (total name mismatch, 60 points) paying fast: the fourth inflow in 10 minutes adds velocity (20).
      const refs: Array<string> = []
      // Distinct amounts, so none of them is a Duplicate (same payer and amount within 24 h).
      const amounts = [9_000, 11_000, 12_000, 8_000]
      for (let i = 0; i < 4; i++) {
        refs.push((yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: amounts[i]!, senderName: "CASAFINA CREDIT-EASY LOAN" })).sessionId)
        yield* waitForTransactions(t.tenantId, i + 1)
      }
      const held = yield* txn(t.token, refs[3]!)
      expect(held).toMatchObject({ status: "PendingReview", reconciliationStatus: "Exact" })
      expect(held.riskScore).toBeGreaterThanOrEqual(70)
      expect(held.riskReasons.map((r: { code: string }) => r.code)).toEqual(["name_mismatch", "velocity"])
      expect((yield* txn(t.token, refs[0]!)).status).toBe("Completed")
      expect(yield* account(t.token, "risky")).toMatchObject({ amountPaidKobo: 32_000, paymentState: "PartiallyPaid" })
      const queue = yield* call("GET", "/api/v1/transactions?status=PendingReview", { token: t.token })
      expect(queue.body.data.map((x: { reference: string }) => x.reference)).toEqual([refs[3]])
      yield* assertLedgerInvariant

      const byKey = yield* call("POST", `/api/v1/transactions/${refs[3]}/review`, { token: t.token, json: { decision: "approve" } })
      expect(byKey.status).toBe(403)
      expect(byKey.body.code).toBe("wrong_plane")
      const approved = yield* call("POST", `/api/v1/transactions/${refs[3]}/review`, { token: t.testOwnerToken, json: { decision: "approve", note: "known aggregator" } })
      expect(approved.status).toBe(200)
      expect(approved.body).toMatchObject({ status: "Completed", review: { decision: "approve", note: "known aggregator" } })
      expect(yield* account(t.token, "risky")).toMatchObject({ amountPaidKobo: 40_000, paymentState: "FullyPaid" })
      const twice = yield* call("POST", `/api/v1/transactions/${refs[3]}/review`, { token: t.testOwnerToken, json: { decision: "reject" } })
      expect(twice.status).toBe(409)
      expect(twice.body.code).toBe("not_pending_review")
      const sql = yield* SqlClient.SqlClient
      const audit = yield* sql<{ action: string }>`SELECT action FROM audit_log WHERE tenant_id = ${t.tenantId} AND subject = ${refs[3]!}`
      expect(audit.map((a) => a.action)).toEqual(["transaction.review.approve"])

      const next = (yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 5_000, senderName: "CASAFINA CREDIT-EASY LOAN" })).sessionId
      yield* waitForTransactions(t.tenantId, 5)
      expect((yield* txn(t.token, next)).status).toBe("PendingReview")
      const rejected = yield* call("POST", `/api/v1/transactions/${next}/review`, { token: t.testOwnerToken, json: { decision: "reject" } })
      expect(rejected.body.status).toBe("Rejected")
      expect((yield* account(t.token, "risky")).amountPaidKobo).toBe(40_000)
      yield* assertLedgerInvariant
    }))

  it.effect("the simulator runs the same pipeline for a test key, is not idempotent, and is 403 for a live key", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "sim", "Ngozi Eze", 30_000)
      for (const amountKobo of [10_000, 10_000]) {
        const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef: "sim", amountKobo, senderName: "EZE NGOZI" } })
        expect(r.status).toBe(200)
        expect(r.body.result).toBe("processed")
      }
      yield* waitForTransactions(t.tenantId, 2)
      expect((yield* account(t.token, "sim")).amountPaidKobo).toBe(20_000)
      const rev = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef: "sim", amountKobo: 5_000, reversal: true } })
      expect(rev.body.result).toBe("processed")
      yield* waitForTransactions(t.tenantId, 3)
      expect((yield* account(t.token, "sim")).amountPaidKobo).toBe(15_000)
      const float = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef: "sim", amountKobo: 100.5 } })
      expect(float.status).toBe(400)

      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE tenants SET onboarding_status = 'Approved' WHERE id = ${t.tenantId}`
      const key = yield* call("POST", "/api/v1/dashboard/api-keys", { token: t.ownerToken, json: { mode: "live" } })
      const live = yield* call("POST", "/api/v1/auth/token", { json: { clientId: key.body.clientId, clientSecret: key.body.clientSecret } })
      const refused = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: live.body.accessToken, json: { accountRef: "sim", amountKobo: 1_000 } })
      expect(refused.status).toBe(403)
      expect(refused.contentType).toContain(PROBLEM)
      expect(refused.body.code).toBe("live_key_not_allowed")

      const del = yield* call("DELETE", "/api/v1/virtual-accounts/sim", { token: t.token })
      expect(del.status).toBe(409)
      expect(del.body.code).toBe("account_has_activity")
      yield* assertLedgerInvariant
    }))

  it.effect("transactions list filters, summary from either plane, 404 for an unknown or foreign reference", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const other = yield* testTenant
      const va = yield* createAccount(t.token, "list-a", "Bola Ahmed", 10_000)
      const a = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 4_000, senderName: "AHMED BOLA" })
      yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 6_000, senderName: "AHMED BOLA" })
      yield* waitForTransactions(t.tenantId, 2)
      const under = yield* call("GET", "/api/v1/transactions?reconciliation=Underpaid&accountRef=list-a&take=10", { token: t.token })
      expect(under.body.data.map((x: { reference: string }) => x.reference)).toEqual([a.sessionId])
      const bad = yield* call("GET", "/api/v1/transactions?status=Nope", { token: t.token })
      expect(bad.status).toBe(400)
      const summary = yield* call("GET", "/api/v1/transactions/summary", { token: t.token })
      expect(summary.body).toMatchObject({ total: { count: 2, amountKobo: 10_000 }, successful: { count: 2, amountKobo: 10_000 }, failed: { count: 0 } })
      const fromDashboard = yield* call("GET", "/api/v1/transactions/summary", { token: t.testOwnerToken })
      expect(fromDashboard.body.total.count).toBe(2)
      const foreign = yield* call("GET", `/api/v1/transactions/${a.sessionId}`, { token: other.token })
      expect(foreign.status).toBe(404)
      expect(foreign.contentType).toContain(PROBLEM)
      const liveMode = yield* call("GET", `/api/v1/transactions/${a.sessionId}`, { token: t.ownerToken })
      expect(liveMode.status).toBe(404)
    }))
})

import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
const require_sign = (secret: string, body: Record<string, unknown>) => signSandboxEvent(secret, body)
