import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import * as crypto from "node:crypto"
import { Receiver } from "../../services/deposits/Receiver.js"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { Tenants } from "../../services/access/Tenants.js"
import { VirtualAccounts } from "../../services/accounts/VirtualAccounts.js"
import { assertLedgerInvariant, sessionId } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"

type Op = { readonly kind: "credit" | "reversal"; readonly amountKobo: number }

/** The independent model: a running sum with clamped reversals, classified against what is still due. */
const model = (expected: number | null, ops: ReadonlyArray<Op>) => {
  let paid = 0
  return ops.map((op) => {
    let status: string
    if (op.kind === "reversal") {
      paid -= Math.min(op.amountKobo, paid)
      status = "Reversal"
    } else {
      const due = expected === null ? null : Math.max(expected - paid, 0)
      status = due === null ? "Credited" : op.amountKobo === due ? "Exact" : op.amountKobo < due ? "Underpaid" : "Overpaid"
      paid += op.amountKobo
    }
    const state = expected === null ? "Open" : paid === 0 ? "AwaitingPayment" : paid < expected ? "PartiallyPaid" : paid === expected ? "FullyPaid" : "Overpaid"
    return { status, paid, state, deficit: expected === null ? 0 : Math.max(expected - paid, 0), overpayment: expected === null ? 0 : Math.max(paid - expected, 0) }
  })
}

const opArb = fc.record({ kind: fc.constantFrom<"credit" | "reversal">("credit", "credit", "credit", "reversal"), amountKobo: fc.integer({ min: 1, max: 60_000 }) })
const caseArb = fc.record({ expected: fc.option(fc.integer({ min: 1, max: 150_000 }), { nil: null }), ops: fc.array(opArb, { minLength: 1, maxLength: 12 }) })

layer(makeTestApp({ workers: false }), { timeout: 180_000, excludeTestServices: true })("reconciler against a pure model", (it) => {
  it.effect("random sequences of deposits and reversals classify and sum like the model", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tenants = yield* Tenants
      const accounts = yield* VirtualAccounts
      const receiver = yield* Receiver
      const reconciler = yield* Reconciler
      const tenantId = yield* sql.withTransaction(tenants.create("Property Biz"))
      // Risk never holds a deposit here: the payer's name matches and the threshold is the maximum.
      yield* sql`UPDATE tenants SET risk_threshold = 100 WHERE id = ${tenantId}`
      const creds = yield* tenants.providerFor(tenantId, "test")
      let run = 0

      const check = (expected: number | null, ops: ReadonlyArray<Op>) =>
        Effect.gen(function* () {
          const accountRef = `prop-${run++}`
          const { account } = yield* accounts.create(tenantId, "test", { accountRef, name: "Adaeze Okafor", ...(expected === null ? {} : { expectedAmountKobo: expected as never }) })
          const want = model(expected, ops)
          for (const [i, op] of ops.entries()) {
            const ref = sessionId()
            const answer = yield* receiver.accept(creds, {
              event: op.kind === "credit" ? "transfer.inbound" : "transfer.reversal", merchantId: creds.merchantId, sessionId: ref,
              accountNumber: account.nuban, amountKobo: op.amountKobo, senderName: "OKAFOR ADAEZE",
              // A distinct payer account per inflow keeps the Duplicate rule (same payer and amount) out of this model.
              senderAccountNumber: crypto.randomInt(1e9, 1e10 - 1).toString(), senderBankCode: "044", narration: null,
              paidAt: new Date().toISOString(), reversedSessionId: null
            })
            expect(answer.result).toBe("processed")
            const [inbox] = yield* sql<{ id: number }>`SELECT id FROM inbound_events WHERE tenant_id = ${tenantId} AND provider_reference = ${ref}`
            const outcome = yield* reconciler.reconcile({ inboxId: inbox!.id, tenantId, mode: "test", provider: "sandbox", reference: ref, accountNumber: account.nuban })
            expect(outcome).toBe("reconciled")
            const [t] = yield* sql<{ reconciliationStatus: string }>`SELECT reconciliation_status FROM transactions WHERE tenant_id = ${tenantId} AND reference = ${ref}`
            const got = yield* accounts.get(tenantId, "test", accountRef)
            const w = want[i]!
            expect({ status: t!.reconciliationStatus, paid: got.amountPaidKobo, state: got.paymentState, deficit: got.deficit, overpayment: got.overpayment }).toEqual(w)
          }
        })

      const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
      yield* Effect.promise(() =>
        fc.assert(fc.asyncProperty(caseArb, ({ expected, ops }) => Runtime.runPromise(runtime)(check(expected, ops))), { numRuns: 25 })
      )
      yield* assertLedgerInvariant
    }))
})
