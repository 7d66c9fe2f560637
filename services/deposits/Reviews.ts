import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { LedgerAccount, move } from "../../src/domain/Ledger.js"
import { Conflict, notFound } from "../../src/contract/Problems.js"
import { Ledger } from "../Ledger.js"
import { Outbox } from "../Outbox.js"
import { Tenants } from "../Tenants.js"
import { toTransaction, Transactions } from "../Transactions.js"

/**
 * Review decisions on PendingReview deposits. Approve credits the held amount to the account; reject moves it to the
 * payer-return suspense. Either way the decision is audited and an event staged, in one transaction.
 */
export class Reviews extends Effect.Service<Reviews>()("services/deposits/Reviews", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const transactions = yield* Transactions
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const tenants = yield* Tenants

    const decide = Effect.fn("Reviews.decide")(function* (
      tenantId: string, mode: Mode, reference: string, decision: "approve" | "reject", note: string | null, actor: string
    ) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* transactions.findRow(tenantId, mode, reference, true)
        if (!row) return yield* notFound("transaction", reference)
        if (row.status !== "PendingReview") {
          return yield* new Conflict({ code: "not_pending_review", message: `Transaction ${reference} is ${row.status}, not PendingReview.` })
        }
        const held = row.kind === "inflow" && row.virtualAccountId !== null
        if (held) {
          const vaId = row.virtualAccountId!
          yield* sql`SELECT id FROM virtual_accounts WHERE id = ${vaId} FOR UPDATE`
          const target = decision === "approve" ? LedgerAccount.customerFunds(vaId) : LedgerAccount.rejected
          yield* ledger.post(tenantId, mode, `review:${reference}`, move(LedgerAccount.reviewHold(vaId), target, row.amountKobo))
          if (decision === "approve") {
            yield* sql`UPDATE virtual_accounts SET amount_paid_kobo = amount_paid_kobo + ${row.amountKobo} WHERE id = ${vaId}`
          }
        }
        const status = decision === "approve" ? "Completed" : "Rejected"
        yield* sql`UPDATE transactions SET status = ${status}, applied_kobo = ${decision === "approve" && held ? row.amountKobo : row.appliedKobo},
          review_decision = ${decision}, review_note = ${note}, reviewed_by = ${actor}, reviewed_at = now() WHERE id = ${row.id}`
        yield* tenants.audit({ tenantId, mode, actor, action: `transaction.review.${decision}`, subject: reference, details: { note } })
        const updated = (yield* transactions.findRow(tenantId, mode, reference))!
        yield* outbox.stage([{ tenantId, mode, type: "transaction.reviewed", subjectKey: row.accountRef ?? row.nuban, data: { transaction: toTransaction(updated) } }])
        return toTransaction(updated)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { decide } as const
  })
}) {}
