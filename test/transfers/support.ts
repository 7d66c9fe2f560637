import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { assertLedgerInvariant, createAccount, sendSigned, type Tenant, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

/** DESIGN.md's sandbox name directory (the fixed rows). */
export const DIRECTORY = {
  adaeze: { accountNumber: "0123456785", bankCode: "058", accountName: "ADAEZE OKAFOR" },
  chukwuemeka: { accountNumber: "1234567895", bankCode: "044", accountName: "CHUKWUEMEKA NWOSU" },
  bolanle: { accountNumber: "2000000015", bankCode: "057", accountName: "BOLANLE ADEYEMI" },
  ibrahim: { accountNumber: "2100000021", bankCode: "033", accountName: "IBRAHIM MUSA" },
  ngozi: { accountNumber: "3000000032", bankCode: "011", accountName: "NGOZI EZE ENTERPRISES" },
  tunde: { accountNumber: "9000000042", bankCode: "50515", accountName: "TUNDE BAKARE" },
  fail: { accountNumber: "9999999907", bankCode: "058", accountName: "FAIL TRANSFER" },
  reverse: { accountNumber: "9999999913", bankCode: "044", accountName: "REVERSE TRANSFER" },
  slow: { accountNumber: "9999999921", bankCode: "058", accountName: "SLOW TRANSFER" }
} as const

export type MoneyTenant = Tenant & { readonly testOwnerToken: string }

/** Deposits into a fresh account (open unless `expected`), signed as the sandbox bank; waits for reconciliation. */
export const fund = (t: MoneyTenant, accountRef: string, amounts: ReadonlyArray<number>, options: { expected?: number; payer?: { accountNumber: string; bankCode: string; name: string } } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const account = yield* createAccount(t.token, accountRef, "Adaeze Okafor", options.expected)
    const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`) as unknown as [{ n: number }]
    const references: Array<string> = []
    for (const amountKobo of amounts) {
      const sent = yield* sendSigned(t, {
        accountNumber: account.nuban, amountKobo, senderName: options.payer?.name ?? "ADAEZE OKAFOR",
        senderAccountNumber: options.payer?.accountNumber ?? DIRECTORY.adaeze.accountNumber
      })
      expect(sent.status).toBe(200)
      references.push(sent.sessionId)
    }
    yield* waitForTransactions(t.tenantId, n + amounts.length)
    return { account, references }
  }).pipe(Effect.orDie)

/** Polls a transfer until its status is final (or `until`), bounded at 20 s. */
export const waitForTransfer = (token: string, merchantTxRef: string, until: ReadonlyArray<string> = ["Successful", "Failed", "Reversed"]) =>
  waitFor(`transfer ${merchantTxRef} to be ${until.join(" or ")}`, call("GET", `/api/v1/transfers/${merchantTxRef}`, { token }), {
    until: (r) => r.status === 200 && until.includes(r.body.status),
    timeoutMs: 20_000
  }).pipe(Effect.map((r) => r.body))

/** The tenant's money figures (GET /balance). */
export const balanceOf = (token: string) => Effect.map(call("GET", "/api/v1/balance", { token }), (r) => r.body)

/** How many times the sandbox bank was asked to send a reference (its idempotency counter), 0 when never. */
export const providerCalls = (merchantTxRef: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ calls: number }>`SELECT calls FROM sandbox_provider_transfers WHERE reference = ${merchantTxRef}`).pipe(
    Effect.map((rows) => rows.reduce((s, r) => s + r.calls, 0)),
    Effect.orDie
  )

export { assertLedgerInvariant, testTenant }
