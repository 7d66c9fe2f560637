import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { approve, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { apiToken, call } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { NOT_COUNTED_YET } from "../../services/insights/InsightsCursor.js"
import { DIRECTORY, waitForTransfer } from "../transfers/support.js"

// The copilot's fixture: one tenant's test-mode book with known names, references and amounts (every figure the tests
// expect is computed by hand from the numbers here), a second tenant and the same tenant's live mode, each with a
// distinctively named customer that tenant A's test mode must never see.

export const ask = (token: string, prompt: unknown) => call("POST", "/api/v1/copilot/ask", { token, json: { prompt } })

/** Deposits one inflow and waits until the tenant has `count` transactions. */
const deposit = (t: { merchantId: string; webhookSecret: string; tenantId: string }, accountNumber: string, amountKobo: number, senderName: string, count: number) =>
  Effect.gen(function* () {
    const r = yield* sendSigned(t, { accountNumber, amountKobo, senderName, senderAccountNumber: DIRECTORY.adaeze.accountNumber })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    yield* waitForTransactions(t.tenantId, count)
    return r.sessionId
  })

/**
 * Waits until no consumer has work left on the tenants' events, the insight roll-ups included: no outbox row pending,
 * and no transaction past the insights cursor (deposits reach the roll-ups by commit horizon, not as pending rows:
 * services/insights/InsightsCursor.ts). Bounded at 30 s. (Without the second count, a full run's other databases'
 * open transactions held the horizon back and the copilot read the roll-ups before they counted the deposit.)
 */
export const consumersDrained = (tenantIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      "no outbox row left pending and every deposit counted by the insights",
      sql<{ n: number }>`SELECT ((SELECT count(*) FROM outbox_pending p JOIN outbox o ON o.id = p.outbox_id
          WHERE o.tenant_id IN ${sql.in(tenantIds)})
        + (SELECT count(*) FROM transactions t WHERE t.tenant_id IN ${sql.in(tenantIds)} AND ${sql.literal(NOT_COUNTED_YET)}))::int AS n`.pipe(
        Effect.map((r) => r[0]!.n)
      ),
      { until: (n) => n === 0, timeoutMs: 30_000 }
    )).pipe(Effect.asVoid)

export const seedBook = Effect.gen(function* () {
  const t = yield* testTenant
  // Accounts of tenant A, test mode. Expected amounts in kobo.
  const nubans: Record<string, string> = {}
  for (const [ref, name, expected] of [
    ["INV-1001", "Chinedu Okafor", 500_000], ["INV-1002", "Ngozi Adeyemi", 300_000], ["INV-1003", "Emeka Eze", 200_000],
    ["INV-1004", "Tunde Bakare", 400_000], ["INV-1005", "Seyi Olufemi", 100_000], ["SUB-2001", "Amaka Nwosu", undefined],
    ["INV-1006", "Chinedu Obi", undefined]
  ] as const) {
    nubans[ref] = (yield* createAccount(t.token, ref, name, expected)).nuban
  }
  const exact = yield* deposit(t, nubans["INV-1001"]!, 500_000, "CHINEDU OKAFOR", 1)
  const under = yield* deposit(t, nubans["INV-1002"]!, 120_000, "NGOZI ADEYEMI", 2)
  const over = yield* deposit(t, nubans["INV-1003"]!, 250_000, "EMEKA EZE", 3)
  // A business payer whose name shares nothing with the customer's: a total name mismatch, 60 points, high risk
  // (60 and over) but under the review threshold (70), so it is credited.
  const risky = yield* deposit(t, nubans["INV-1005"]!, 100_000, "CASAFINA CREDIT-EASY LOAN", 4)
  // An unknown NUBAN: Unmatched, held for review.
  const held = yield* deposit(t, "0000014579", 77_700, "MUSA IBRAHIM", 5)

  const schedule = yield* call("POST", "/api/v1/billing/schedules", {
    token: t.token,
    json: { accountRef: "SUB-2001", interval: "monthly", amountKobo: 250_000, dueOffsetDays: 5, description: "Monthly dues", reference: "sch-amaka" }
  })
  expectStatus(schedule, 201)
  // The overpayment's surplus (₦500.00) goes back to the payer; the account is then fully paid (₦2,000.00 of ₦2,000.00).
  // (Named: the fixture's payers all send from ADAEZE OKAFOR's account, which a refund to the captured source would refuse
  // for EMEKA EZE's deposit: refund_destination_unverified.)
  const refund = yield* call("POST", `/api/v1/transactions/${over}/refund`, {
    token: t.testOwnerToken, json: { accountNumber: DIRECTORY.adaeze.accountNumber, bankCode: DIRECTORY.adaeze.bankCode }
  })
  expectStatus(refund, 200)
  expect(refund.body.amountKobo).toBe(50_000)
  const refundRef = refund.body.merchantTxRef as string
  yield* waitForTransfer(t.token, refundRef)
  const payout = yield* call("POST", "/api/v1/transfers/bank", {
    token: t.token, json: { merchantTxRef: "po-copilot-1", amountKobo: 100_000, accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: DIRECTORY.bolanle.bankCode, narration: "supplier" }
  })
  expectStatus(payout, 201)
  expect((yield* waitForTransfer(t.token, "po-copilot-1")).status).toBe("Successful")

  // A settlement run sweeps the fully paid accounts' free money to the tenant's account: INV-1001 ₦5,000.00, INV-1003
  // ₦2,000.00 (₦2,500.00 less the ₦500.00 refunded), INV-1005 ₦1,000.00; ₦8,000.00 in three settlements.
  expectStatus(yield* call("PUT", "/api/v1/settings/settlement", {
    token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: DIRECTORY.ngozi.bankCode, settlementAccountName: "Ngozi Eze Enterprises" }
  }), 200)
  const run = yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })
  expectStatus(run, 200)
  expect(run.body.settledCount).toBe(3)
  const settlementIds = (run.body.data as Array<{ id: string }>).map((x) => x.id)
  yield* waitFor("the 3 settlements to be paid", call("GET", "/api/v1/settlements", { token: t.token }), {
    until: (r) => r.body.data.length === 3 && r.body.data.every((x: { status: string }) => x.status === "Paid"),
    timeoutMs: 20_000
  })

  // Tenant B, test mode: a distinctive customer with money in.
  const b = yield* testTenant
  const bAccount = yield* createAccount(b.token, "ZZ-9001", "Zebedee Obiorah-Quist", 990_000)
  const bDeposit = yield* deposit(b, bAccount.nuban, 330_000, "ZEBEDEE OBIORAH-QUIST", 1)

  // Tenant A, live mode: another distinctive customer with money in.
  yield* approve(t.tenantId)
  const live = yield* apiToken(t.ownerToken, "live")
  const liveAccount = yield* createAccount(live.token, "LV-7001", "Ifeoluwa Xylophone-Dike", 880_000)
  const liveProvider = yield* call("GET", "/api/v1/dashboard/provider", { token: t.ownerToken })
  expectStatus(liveProvider, 200)
  const liveTenant = { tenantId: t.tenantId, merchantId: liveProvider.body.merchantId as string, webhookSecret: liveProvider.body.webhookSecret as string }
  const liveDeposit = yield* deposit(liveTenant, liveAccount.nuban, 440_000, "IFEOLUWA XYLOPHONE-DIKE", 6)

  yield* consumersDrained([t.tenantId, b.tenantId])
  return {
    a: t, b, refs: { exact, under, over, risky, held, refund: refundRef, payout: "po-copilot-1" }, settlementIds,
    foreign: { bDeposit, liveDeposit },
    /** Everything tenant A's test mode owns that an answer may name. */
    own: {
      accountRef: new Set(["INV-1001", "INV-1002", "INV-1003", "INV-1004", "INV-1005", "SUB-2001", "INV-1006"]),
      transaction: new Set([exact, under, over, risky, held]),
      transfer: new Set([refundRef, "po-copilot-1"]),
      settlement: new Set(settlementIds)
    }
  }
})

export type Book = Effect.Effect.Success<typeof seedBook>

/**
 * A second test-mode tenant whose sandbox clock is moved 10 days on, so some of what it is owed is past its due date
 * and some is not yet due (the main book's receivables all fall due today or later):
 *
 *   LATE-1 Bola Akinwale  expects ₦4,000.00, due the day it was created, ₦1,000.00 paid: ₦3,000.00 overdue, 10 days
 *   LATE-2 Funke Ojo      expects ₦1,500.00, due the day it was created, nothing paid: ₦1,500.00 overdue, 10 days
 *   LATE-3 Kunle Adebayo  expects ₦2,000.00, expires (so falls due) 30 days after it was created: not yet due
 *
 *   overdue ₦4,500.00 in 2 receivables of 2 accounts, all 8-30 days past due; not yet due ₦2,000.00 (1 account), in
 *   aging's "0-7" bucket all the same; outstanding ₦6,500.00.
 */
export const seedLateBook = Effect.gen(function* () {
  const t = yield* testTenant
  const bola = yield* createAccount(t.token, "LATE-1", "Bola Akinwale", 400_000)
  yield* createAccount(t.token, "LATE-2", "Funke Ojo", 150_000)
  const kunle = yield* call("POST", "/api/v1/virtual-accounts", {
    token: t.token,
    json: { accountRef: "LATE-3", name: "Kunle Adebayo", expectedAmountKobo: 200_000, expiryDateUtc: new Date(Date.now() + 30 * 86_400_000).toISOString() }
  })
  expectStatus(kunle, 201)
  const paid = yield* deposit(t, bola.nuban, 100_000, "BOLA AKINWALE", 1)
  expectStatus(yield* call("POST", "/api/v1/sandbox/clock/advance", { token: t.token, json: { seconds: 10 * 86_400 } }), 200)
  yield* consumersDrained([t.tenantId])
  return { t, paid, own: { accountRef: new Set(["LATE-1", "LATE-2", "LATE-3"]), transaction: new Set([paid]) } }
})

export type LateBook = Effect.Effect.Success<typeof seedLateBook>
