import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as crypto from "node:crypto"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { MoneyOutHooks } from "../../services/transfers/MoneyOutHooks.js"
import { Refunds } from "../../services/transfers/Refunds.js"
import { expectProblem, expectStatus, inviteAndLogin, login } from "../support/ApiHelpers.js"
import { sendSigned } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, providerCalls, testTenant, waitForTransfer } from "./support.js"

// The interface's refund rules 1 to 7 (POST /api/v1/transactions/{reference}/refund), each in a test of its own, against
// the real service: HTTP, Postgres, the sandbox bank and its signed outcome webhooks.

const refund = (token: string, reference: string, json?: Record<string, unknown>) =>
  call("POST", `/api/v1/transactions/${reference}/refund`, json === undefined ? { token } : { token, json })

const accountOf = (t: MoneyTenant, accountRef: string) => Effect.map(call("GET", `/api/v1/virtual-accounts/${accountRef}`, { token: t.token }), (r) => r.body)

/** The deposit's hold row, as the database has it (there is no GET for holds). */
const holdOf = (t: MoneyTenant, reference: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string; heldKobo: number; seq: number }>`SELECT status, held_kobo, seq FROM holds WHERE tenant_id = ${t.tenantId} AND reference = ${reference}`
  ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

/** The tenant's refund transfers in the database (whatever their state). */
const refundTransfers = (t: MoneyTenant) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ merchantTxRef: string; amountKobo: number; status: string }>`SELECT merchant_tx_ref, amount_kobo, status FROM transfers
      WHERE tenant_id = ${t.tenantId} AND source = 'refund' ORDER BY created_at`
  ).pipe(Effect.orDie)

/** The tenant's outbox events of a type, with their data. */
const eventsOf = (t: MoneyTenant, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = ${type} ORDER BY id`
  ).pipe(Effect.map((rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))), Effect.orDie)

const payout = (t: MoneyTenant, merchantTxRef: string, amountKobo: number) =>
  call("POST", "/api/v1/transfers/bank", {
    token: t.token, json: { merchantTxRef, amountKobo, accountNumber: DIRECTORY.ibrahim.accountNumber, bankCode: DIRECTORY.ibrahim.bankCode }
  })

/** A dashboard user of the role, signed in to test mode (inviteAndLogin signs in to live mode). */
const testModeUser = (t: MoneyTenant, role: "Admin" | "Member") =>
  Effect.gen(function* () {
    const invited = yield* inviteAndLogin(t.ownerToken, role, crypto.randomBytes(4).toString("hex"))
    const session = yield* login(invited.email, invited.password, "test")
    expectStatus(session, 200)
    return { liveToken: invited.token, token: session.body.accessToken as string }
  })

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("refund rules", (it) => {
  it.effect("rule 1: only a dashboard Owner or Admin may refund; a Member is 403 insufficient_role, an API key 403 wrong_plane", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // Expected 10,000: the first deposit has 2,000 of surplus, the second is all surplus (3,000).
      const { references } = yield* fund(t, "r1", [12_000, 3_000], { expected: 10_000 })
      const [first, second] = references as [string, string]
      const member = yield* testModeUser(t, "Member")
      expectProblem(yield* refund(member.token, first), 403, "insufficient_role")
      expectProblem(yield* refund(member.liveToken, first), 403, "insufficient_role")
      expectProblem(yield* refund(t.token, first), 403, "wrong_plane")
      expectProblem(yield* refund(t.token, first, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011" }), 403, "wrong_plane")
      // Refused callers sent nothing and changed nothing.
      expect(yield* refundTransfers(t)).toEqual([])
      expect(yield* providerCalls(`rfd_${first}`)).toBe(0)
      expect(yield* accountOf(t, "r1")).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })

      const admin = yield* testModeUser(t, "Admin")
      const byAdmin = yield* refund(admin.token, first)
      expectStatus(byAdmin, 200)
      expect(byAdmin.body).toMatchObject({ reference: first, status: "Sent", amountKobo: 2_000, merchantTxRef: `rfd_${first}` })
      const byOwner = yield* refund(t.testOwnerToken, second)
      expectStatus(byOwner, 200)
      expect(byOwner.body).toMatchObject({ reference: second, status: "Sent", amountKobo: 3_000, merchantTxRef: `rfd_${second}` })
      expect((yield* waitForTransfer(t.token, `rfd_${first}`)).status).toBe("Successful")
      expect((yield* waitForTransfer(t.token, `rfd_${second}`)).status).toBe("Successful")
      expect(yield* accountOf(t, "r1")).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0, paymentState: "FullyPaid" })
      // The audit trail names who asked.
      const sql = yield* SqlClient.SqlClient
      const audit = yield* sql<{ actor: string; subject: string }>`SELECT actor, subject FROM audit_log WHERE tenant_id = ${t.tenantId} AND action = 'refund.claimed' ORDER BY subject`
      expect(audit.map((a) => a.actor.startsWith("user:"))).toEqual([true, true])
      yield* assertLedgerInvariant
    }))

  it.effect("rule 2: a refund sends only what is still here: a payout took part of the free money, the refund sends the rest", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "r2a", [15_000], { expected: 10_000 })
      const ref = references[0]!
      expectStatus(yield* payout(t, "r2a-po", 12_000), 201)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 3_000 })
      const sent = yield* refund(t.testOwnerToken, ref)
      expectStatus(sent, 200)
      // The surplus is 5,000 but only 3,000 of the account's money is still available.
      expect(sent.body).toMatchObject({ status: "Sent", amountKobo: 3_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0 })
      expect(yield* accountOf(t, "r2a")).toMatchObject({ amountPaidKobo: 12_000, overpayment: 2_000 })
      // A second call does not send the remaining 2,000 of surplus: one refund per deposit, and the money is gone.
      const again = yield* refund(t.testOwnerToken, ref)
      expect(again.body).toMatchObject({ status: "AlreadySent", amountKobo: 3_000 })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
      expect((yield* waitForTransfer(t.token, "r2a-po")).status).toBe("Successful")
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      yield* assertLedgerInvariant
    }))

  it.effect("rule 2: a second refund of another overpaid deposit on the account cannot take the money the first took", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // Surpluses 4,000 and 3,000; after a payout of 12,000 only 5,000 of the account's money is left.
      const { references } = yield* fund(t, "r2b", [10_000, 4_000, 3_000], { expected: 10_000 })
      const [, four, three] = references as [string, string, string]
      expectStatus(yield* payout(t, "r2b-po", 12_000), 201)
      const a = yield* refund(t.testOwnerToken, four)
      expect(a.body).toMatchObject({ status: "Sent", amountKobo: 4_000 })
      const b = yield* refund(t.testOwnerToken, three)
      expect(b.body).toMatchObject({ status: "Sent", amountKobo: 1_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0 })
      expectProblem(yield* payout(t, "r2b-po2", 1), 422, "insufficient_balance")
      expect(yield* accountOf(t, "r2b")).toMatchObject({ amountPaidKobo: 12_000 })
      expect((yield* waitForTransfer(t.token, `rfd_${three}`)).status).toBe("Successful")
      // Nothing is left for either: both answer what they sent, nothing more goes out.
      expect((yield* refund(t.testOwnerToken, three)).body).toMatchObject({ status: "AlreadySent", amountKobo: 1_000 })
      expect((yield* refundTransfers(t)).reduce((s, r) => s + r.amountKobo, 0)).toBe(5_000)
      yield* assertLedgerInvariant
    }))

  it.effect("rule 2: two refunds of one account's deposits at once never send more than is left, in total", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "r2c", [10_000, 4_000, 3_000], { expected: 10_000 })
      const [, four, three] = references as [string, string, string]
      expectStatus(yield* payout(t, "r2c-po", 12_000), 201)
      const answers = yield* Effect.all([refund(t.testOwnerToken, four), refund(t.testOwnerToken, three)], { concurrency: "unbounded" })
      for (const r of answers) expectStatus(r, 200)
      const total = answers.reduce((s, r) => s + r.body.amountKobo, 0)
      expect(total).toBe(5_000)
      expect(answers.every((r) => r.body.amountKobo > 0)).toBe(true)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("rule 2: held money stays the held deposit's: a refund of another deposit cannot take it; payouts cannot either", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references } = yield* fund(t, "r2d", [10_000, 4_000, 3_000], { expected: 10_000 })
      const [, four, three] = references as [string, string, string]
      expectStatus(yield* call("POST", `/api/v1/settlements/${four}/hold`, { token: t.token }), 200)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 13_000, heldKobo: 4_000 })
      // Everything free is paid out; the held 4,000 is not available to it.
      expectProblem(yield* payout(t, "r2d-po-over", 13_001), 422, "insufficient_balance")
      expectStatus(yield* payout(t, "r2d-po", 13_000), 201)
      expectProblem(yield* refund(t.testOwnerToken, three), 400, "nothing_available")
      const held = yield* refund(t.testOwnerToken, four)
      expect(held.body).toMatchObject({ status: "Sent", amountKobo: 4_000 })
      expect(yield* holdOf(t, four)).toMatchObject({ status: "Refunded" })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, heldKobo: 0 })
      expectProblem(yield* refund(t.testOwnerToken, three), 400, "nothing_available")
      yield* assertLedgerInvariant
    }))

  it.effect("rule 3: a successful refund ends the deposit's hold: status Refunded, escrow 0, the rest of the hold back to free money", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // A hold smaller than the surplus: 2,000 from escrow, 3,000 from free money.
      const { references: [small] } = yield* fund(t, "r3a", [15_000], { expected: 10_000 })
      const hold = yield* call("POST", `/api/v1/settlements/${small}/hold`, { token: t.token, json: { amountKobo: 2_000, reason: "overpaid" } })
      expect(hold.body).toMatchObject({ status: "Held", heldKobo: 2_000 })
      expect((yield* refund(t.testOwnerToken, small!)).body).toMatchObject({ status: "Sent", amountKobo: 5_000 })
      expect(yield* holdOf(t, small!)).toMatchObject({ status: "Refunded" })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 10_000 })
      expectProblem(yield* call("POST", `/api/v1/settlements/${small}/release`, { token: t.token }), 409, "hold_not_active")

      // A hold of the whole deposit: the surplus goes, the other 10,000 goes back to free money.
      const { references: [whole] } = yield* fund(t, "r3b", [15_000], { expected: 10_000 })
      expect((yield* call("POST", `/api/v1/settlements/${whole}/hold`, { token: t.token })).body).toMatchObject({ heldKobo: 15_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 15_000, availableKobo: 10_000 })
      expect((yield* refund(t.testOwnerToken, whole!)).body).toMatchObject({ status: "Sent", amountKobo: 5_000 })
      expect(yield* holdOf(t, whole!)).toMatchObject({ status: "Refunded" })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 20_000 })
      expect((yield* waitForTransfer(t.token, `rfd_${small}`)).status).toBe("Successful")
      expect((yield* waitForTransfer(t.token, `rfd_${whole}`)).status).toBe("Successful")
      // Still Refunded after the provider's success; the escrow accounts are empty.
      expect(yield* holdOf(t, whole!)).toMatchObject({ status: "Refunded" })
      const sql = yield* SqlClient.SqlClient
      const [escrow] = yield* sql<{ n: number }>`SELECT COALESCE(sum(amount_kobo), 0)::bigint AS n FROM ledger_entries WHERE tenant_id = ${t.tenantId} AND account LIKE 'escrow:%'`
      expect(escrow!.n).toBe(0)
      expect(yield* accountOf(t, "r3b")).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0 })
      yield* assertLedgerInvariant
    }))

  it.effect("rule 4: idempotent per deposit: AlreadySent, one transfer, one provider call, whatever the later bodies say", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references: [ref] } = yield* fund(t, "r4a", [15_000], { expected: 10_000 })
      const first = yield* refund(t.testOwnerToken, ref!)
      expect(first.body).toMatchObject({ status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}` })
      const again = yield* refund(t.testOwnerToken, ref!)
      expectStatus(again, 200)
      expect(again.body).toMatchObject({ status: "AlreadySent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}`, destination: first.body.destination })
      // Another destination on a repeat changes nothing: the deposit's refund was sent.
      const other = yield* refund(t.testOwnerToken, ref!, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011" })
      expect(other.body).toMatchObject({ status: "AlreadySent", destination: first.body.destination })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
      expect((yield* refund(t.testOwnerToken, ref!)).body).toMatchObject({ status: "AlreadySent", transferStatus: "Successful" })
      expect(yield* refundTransfers(t)).toHaveLength(1)
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      expect(yield* eventsOf(t, "refund.sent")).toHaveLength(1)
      yield* assertLedgerInvariant
    }))

  it.effect("rule 4: 10 concurrent refund calls: exactly one Sent, the rest AlreadySent or 409 refund_in_progress; one provider call", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      for (let round = 1; round <= 8; round++) {
        const { references: [ref] } = yield* fund(t, `r4b-${round}`, [15_000], { expected: 10_000 })
        const answers = yield* Effect.all(Array.from({ length: 10 }, () => refund(t.testOwnerToken, ref!)), { concurrency: "unbounded" })
        const sent = answers.filter((a) => a.status === 200 && a.body.status === "Sent")
        expect(sent, JSON.stringify(answers.map((a) => [a.status, a.body.status ?? a.body.code]))).toHaveLength(1)
        for (const a of answers) {
          if (a.status === 200) expect(a.body).toMatchObject({ amountKobo: 5_000, merchantTxRef: `rfd_${ref}` })
          else expectProblem(a, 409, "refund_in_progress")
          if (a.status === 200) expect(["Sent", "AlreadySent"]).toContain(a.body.status)
        }
        expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
        expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      }
      expect(yield* refundTransfers(t)).toHaveLength(8)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 80_000 })
      yield* assertLedgerInvariant
    }))

  it.effect("rule 5: the destination is the payer's captured account, or the body's; the name enquiry runs on it", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // The bank captured the payer's account (ADAEZE OKAFOR at GTBank).
      const { references: [captured] } = yield* fund(t, "r5a", [15_000], { expected: 10_000 })
      const prefilled = yield* refund(t.testOwnerToken, captured!)
      expect(prefilled.body).toMatchObject({ status: "Sent", destination: DIRECTORY.adaeze })
      const sent = yield* waitForTransfer(t.token, `rfd_${captured}`)
      expect(sent).toMatchObject({ source: "refund", accountNumber: DIRECTORY.adaeze.accountNumber, bankCode: "058", accountName: "ADAEZE OKAFOR" })

      // The body overrides the captured account.
      const { references: [overridden] } = yield* fund(t, "r5b", [15_000], { expected: 10_000 })
      const toTunde = yield* refund(t.testOwnerToken, overridden!, { accountNumber: DIRECTORY.tunde.accountNumber, bankCode: DIRECTORY.tunde.bankCode })
      expect(toTunde.body).toMatchObject({ status: "Sent", destination: DIRECTORY.tunde })

      // No captured account: the body must give both accountNumber and bankCode.
      const noPayer = { payer: { accountNumber: "", bankCode: "", name: "ADAEZE OKAFOR" } }
      const { references: [bare] } = yield* fund(t, "r5c", [15_000], { expected: 10_000, ...noPayer })
      expectProblem(yield* refund(t.testOwnerToken, bare!), 400, "destination_missing")
      expectProblem(yield* refund(t.testOwnerToken, bare!, {}), 400, "destination_missing")
      expectProblem(yield* refund(t.testOwnerToken, bare!, { accountNumber: DIRECTORY.ngozi.accountNumber }), 400, "destination_missing")
      expectProblem(yield* refund(t.testOwnerToken, bare!, { bankCode: "011" }), 400, "destination_missing")
      expectProblem(yield* refund(t.testOwnerToken, bare!, { accountName: "NGOZI EZE ENTERPRISES" }), 400, "destination_missing")
      // Only one of the two is missing even with a captured account: still 400.
      const { references: [half] } = yield* fund(t, "r5d", [15_000], { expected: 10_000 })
      expectProblem(yield* refund(t.testOwnerToken, half!, { bankCode: "011" }), 400, "destination_missing")
      // The name enquiry: a name that does not match is 422; an account the bank does not know is 422; a bad NUBAN 400.
      expectProblem(yield* refund(t.testOwnerToken, bare!, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011", accountName: "MUSA IBRAHIM" }), 422, "account_name_mismatch")
      expectProblem(yield* refund(t.testOwnerToken, bare!, { accountNumber: "0000014579", bankCode: "011" }), 422, "recipient_not_found")
      expectProblem(yield* refund(t.testOwnerToken, bare!, { accountNumber: "0690000034", bankCode: "044" }), 400, "invalid_bank_account")
      // None of those sent anything or moved money.
      expect((yield* refundTransfers(t)).map((r) => r.merchantTxRef).sort()).toEqual([`rfd_${captured}`, `rfd_${overridden}`].sort())
      expect(yield* accountOf(t, "r5c")).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })
      // A matching name (any case and order) is accepted.
      const named = yield* refund(t.testOwnerToken, bare!, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011", accountName: "Ngozi Eze Enterprises" })
      expect(named.body).toMatchObject({ status: "Sent", amountKobo: 5_000, destination: DIRECTORY.ngozi })
      yield* assertLedgerInvariant
    }))

  it.effect("rule 6: 400 no_refundable_surplus, nothing_available, destination_missing; nothing is sent for any of them", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      // no_refundable_surplus: paid exactly, underpaid, an open account (nothing is ever surplus), a surplus a reversal took back.
      const { references: [exact] } = yield* fund(t, "r6a", [10_000], { expected: 10_000 })
      const { references: [under] } = yield* fund(t, "r6b", [6_000], { expected: 10_000 })
      const { references: [open] } = yield* fund(t, "r6c", [6_000])
      expectProblem(yield* refund(t.testOwnerToken, exact!), 400, "no_refundable_surplus")
      expectProblem(yield* refund(t.testOwnerToken, under!), 400, "no_refundable_surplus")
      expectProblem(yield* refund(t.testOwnerToken, open!), 400, "no_refundable_surplus")
      const { account, references: [reversedLater] } = yield* fund(t, "r6d", [15_000], { expected: 10_000 })
      const rev = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: account.nuban, amountKobo: 5_000, reversedSessionId: reversedLater! })
      expect(rev.status).toBe(200)
      const sql = yield* SqlClient.SqlClient
      yield* waitFor("the reversal applied (10,000 paid)", accountOf(t, "r6d"), { until: (a) => a.amountPaidKobo === 10_000, timeoutMs: 20_000 })
      expectProblem(yield* refund(t.testOwnerToken, reversedLater!), 400, "no_refundable_surplus")
      // A reversal itself is no deposit with surplus.
      expectProblem(yield* refund(t.testOwnerToken, rev.sessionId), 400, "no_refundable_surplus")

      // nothing_available: the surplus was paid out.
      const { references: [paidOut] } = yield* fund(t, "r6e", [15_000], { expected: 10_000 })
      const before = (yield* balanceOf(t.token)).availableKobo as number
      expectStatus(yield* payout(t, "r6e-po", before), 201)
      const nothing = yield* refund(t.testOwnerToken, paidOut!)
      expectProblem(nothing, 400, "nothing_available")
      expect(nothing.body.message).toMatch(/5000 kobo/)

      // destination_missing: no captured account and none given.
      const { references: [nowhere] } = yield* fund(t, "r6f", [15_000], { expected: 10_000, payer: { accountNumber: "", bankCode: "", name: "X" } })
      expectProblem(yield* refund(t.testOwnerToken, nowhere!), 400, "destination_missing")
      // An unknown reference is 404.
      expectProblem(yield* refund(t.testOwnerToken, "no-such-deposit"), 404, "transaction_not_found")
      expect(yield* refundTransfers(t)).toEqual([])
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sandbox_provider_transfers WHERE reference LIKE 'rfd_%' AND merchant_id = ${t.merchantId}`) as unknown as [{ n: number }]
      expect(n).toBe(0)
      yield* assertLedgerInvariant
    }))

  it.effect("rule 7: 409 refund_in_progress while the deposit's refund is between its claim and the provider's answer", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const refunds = yield* Refunds
      const { references: [ref] } = yield* fund(t, "r7a", [15_000], { expected: 10_000 })
      const reached = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const hooks = {
        at: (step: string, merchantTxRef: string) =>
          step === "beforeProviderCall" && merchantTxRef === `rfd_${ref}` ? Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(go)) : Effect.void
      }
      const inFlight = yield* refunds.refund({ tenantId: t.tenantId, mode: "test" }, ref!, {}, "test:rule7").pipe(
        Effect.provideService(MoneyOutHooks, hooks),
        Effect.fork
      )
      yield* Deferred.await(reached)
      // Claimed (the money is in transit), not yet at the provider.
      expectProblem(yield* refund(t.testOwnerToken, ref!), 409, "refund_in_progress")
      expectProblem(yield* refund(t.testOwnerToken, ref!, { accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011" }), 409, "refund_in_progress")
      expect((yield* call("GET", `/api/v1/transfers/rfd_${ref}`, { token: t.token })).body).toMatchObject({ status: "Pending", source: "refund" })
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(0)
      yield* Deferred.succeed(go, undefined)
      const done = yield* Fiber.join(inFlight)
      expect(done).toMatchObject({ status: "Sent", amountKobo: 5_000 })
      expect((yield* refund(t.testOwnerToken, ref!)).body).toMatchObject({ status: "AlreadySent" })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}`)).status).toBe("Successful")
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      yield* assertLedgerInvariant
    }))

  it.effect("rule 7: a provider that does not answer: 502, then 409 refund_in_progress until the completer sends it; then AlreadySent, paid once", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const faults = yield* SandboxFaults
      const { references: [silent] } = yield* fund(t, "r7b", [15_000], { expected: 10_000 })
      const { references: [accepted] } = yield* fund(t, "r7c", [15_000], { expected: 10_000 })
      yield* faults.set("transfer", "timeout")
      const first = yield* refund(t.testOwnerToken, silent!)
      expectProblem(first, 502, "provider_unavailable")
      expectProblem(yield* refund(t.testOwnerToken, silent!), 409, "refund_in_progress")
      // The bank takes the transfer but its answer never comes: still in progress, and the completer must not send it twice.
      // (The sandbox bank reports its outcome 50 ms after it took the transfer, by webhook, long before our call times out:
      // the claimer then finds the refund Successful. Under heavy load the call may time out first: 502.)
      yield* faults.set("transfer", "acceptThenTimeout")
      const lost = yield* refund(t.testOwnerToken, accepted!)
      if (lost.status === 200) expect(lost.body).toMatchObject({ status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${accepted}` })
      else expectProblem(lost, 502, "provider_unavailable")
      expect(yield* providerCalls(`rfd_${accepted}`)).toBe(1)
      yield* faults.clear
      expect((yield* waitForTransfer(t.token, `rfd_${silent}`)).status).toBe("Successful")
      expect((yield* waitForTransfer(t.token, `rfd_${accepted}`)).status).toBe("Successful")
      for (const ref of [silent!, accepted!]) {
        const again = yield* refund(t.testOwnerToken, ref)
        expectStatus(again, 200)
        expect(again.body).toMatchObject({ status: "AlreadySent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}` })
        expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      }
      // Each refund was sent, once, whichever way its sending became known (our call's answer, the completer, the bank's webhook).
      expect((yield* eventsOf(t, "refund.sent")).map((d) => d.transfer.merchantTxRef).sort()).toEqual([`rfd_${accepted}`, `rfd_${silent}`].sort())
      yield* assertLedgerInvariant
    }).pipe(Effect.ensuring(Effect.flatMap(SandboxFaults, (f) => f.clear))))

  it.effect("a refund whose transfer fails gives the money back, held again under the deposit's hold; a second attempt is allowed (rfd_<ref>_2)", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references: [ref] } = yield* fund(t, "rf", [15_000], { expected: 10_000 })
      const failing = yield* refund(t.testOwnerToken, ref!, { accountNumber: DIRECTORY.fail.accountNumber, bankCode: DIRECTORY.fail.bankCode })
      expectStatus(failing, 200)
      expect(failing.body).toMatchObject({ status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}`, destination: DIRECTORY.fail })
      const failed = yield* waitForTransfer(t.token, `rfd_${ref}`)
      expect(failed.status).toBe("Failed")
      expect(failed.failureReason).toMatch(/declined/)
      // The money is back in the account, in escrow under the deposit's hold.
      expect(yield* holdOf(t, ref!)).toMatchObject({ status: "Held", heldKobo: 5_000 })
      expect(yield* accountOf(t, "rf")).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000, availableKobo: 10_000, inTransitKobo: 0 })
      yield* assertLedgerInvariant
      // Events: the refund was sent, then its transfer failed.
      expect((yield* eventsOf(t, "refund.sent")).map((d) => d.transfer.merchantTxRef)).toEqual([`rfd_${ref}`])
      expect((yield* eventsOf(t, "transfer.failed")).map((d) => d.transfer.merchantTxRef)).toEqual([`rfd_${ref}`])

      // A second attempt, to the payer's account: all of it from escrow; the hold ends Refunded.
      const second = yield* refund(t.testOwnerToken, ref!)
      expectStatus(second, 200)
      expect(second.body).toMatchObject({ status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}_2`, destination: DIRECTORY.adaeze })
      expect(yield* holdOf(t, ref!)).toMatchObject({ status: "Refunded" })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}_2`)).status).toBe("Successful")
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 10_000, inTransitKobo: 0 })
      expect(yield* accountOf(t, "rf")).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0 })
      expect((yield* refund(t.testOwnerToken, ref!)).body).toMatchObject({ status: "AlreadySent", merchantTxRef: `rfd_${ref}_2` })
      expect(yield* providerCalls(`rfd_${ref}`)).toBe(1)
      expect(yield* providerCalls(`rfd_${ref}_2`)).toBe(1)
      expect((yield* eventsOf(t, "refund.sent")).map((d) => d.transfer.merchantTxRef)).toEqual([`rfd_${ref}`, `rfd_${ref}_2`])
      const sentEvent = (yield* eventsOf(t, "refund.sent"))[1]
      expect(sentEvent).toMatchObject({ depositReference: ref, accountRef: "rf", transfer: { amountKobo: 5_000, source: "refund" } })
      yield* assertLedgerInvariant
    }))

  it.effect("a refund the bank reverses after paying comes back held too; releasing that hold frees it; a later refund takes it again", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { references: [ref] } = yield* fund(t, "rr", [15_000], { expected: 10_000 })
      const sent = yield* refund(t.testOwnerToken, ref!, { accountNumber: DIRECTORY.reverse.accountNumber, bankCode: DIRECTORY.reverse.bankCode })
      expect(sent.body).toMatchObject({ status: "Sent", amountKobo: 5_000 })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}`, ["Reversed"])).status).toBe("Reversed")
      expect(yield* holdOf(t, ref!)).toMatchObject({ status: "Held", heldKobo: 5_000 })
      expect(yield* accountOf(t, "rr")).toMatchObject({ amountPaidKobo: 15_000, overpayment: 5_000 })
      yield* assertLedgerInvariant
      const released = yield* call("POST", `/api/v1/settlements/${ref}/release`, { token: t.token })
      expect(released.body).toMatchObject({ status: "Released", heldKobo: 5_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 15_000 })
      const again = yield* refund(t.testOwnerToken, ref!)
      expect(again.body).toMatchObject({ status: "Sent", amountKobo: 5_000, merchantTxRef: `rfd_${ref}_2` })
      expect((yield* waitForTransfer(t.token, `rfd_${ref}_2`)).status).toBe("Successful")
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 0, availableKobo: 10_000 })
      yield* assertLedgerInvariant
    }))
})
