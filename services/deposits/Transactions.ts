import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { keyList } from "../../src/db/KeyProbe.js"
import type { Transaction } from "../../src/contract/Deposits.js"
import { notFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"

export interface TransactionRow {
  readonly id: number
  readonly tenantId: string
  readonly mode: Mode
  readonly reference: string
  readonly virtualAccountId: string | null
  readonly accountRef: string | null
  readonly nuban: string
  readonly kind: "inflow" | "reversal"
  readonly amountKobo: number
  readonly appliedKobo: number
  readonly reversedKobo: number
  readonly surplusKobo: number
  readonly status: Transaction["status"]
  readonly reconciliationStatus: Transaction["reconciliationStatus"]
  readonly riskScore: number
  readonly riskReasons: Transaction["riskReasons"]
  readonly senderName: string | null
  readonly senderAccountNumber: string | null
  readonly senderBankCode: string | null
  readonly narration: string | null
  readonly paidAt: Date
  readonly reconciledAt: Date
  readonly reversedReference: string | null
  readonly flagged: boolean
  readonly flagReasons: ReadonlyArray<string>
  readonly reviewDecision: "approve" | "reject" | null
  readonly reviewNote: string | null
  readonly reviewedBy: string | null
  readonly reviewedAt: Date | null
}

export const toTransaction = (r: TransactionRow): Transaction => ({
  reference: r.reference,
  accountRef: r.accountRef,
  nuban: r.nuban,
  amountKobo: r.amountKobo,
  status: r.status,
  reconciliationStatus: r.reconciliationStatus,
  riskScore: r.riskScore,
  riskReasons: r.riskReasons,
  senderName: r.senderName,
  senderAccountNumber: r.senderAccountNumber,
  senderBankCode: r.senderBankCode,
  narration: r.narration,
  paidAt: r.paidAt.toISOString(),
  reconciledAt: r.reconciledAt.toISOString(),
  reversedReference: r.reversedReference,
  flagged: r.flagged,
  flagReasons: r.flagReasons,
  review: r.reviewDecision
    ? { decision: r.reviewDecision, note: r.reviewNote, decidedBy: r.reviewedBy ?? "", decidedAt: r.reviewedAt?.toISOString() ?? "" }
    : null,
  mode: r.mode
})

export const TRANSACTION_COLUMNS = `id, tenant_id, mode, reference, virtual_account_id, account_ref, nuban, kind, amount_kobo, applied_kobo,
  reversed_kobo, surplus_kobo, status, reconciliation_status, risk_score, risk_reasons, sender_name, sender_account_number,
  sender_bank_code, narration, paid_at, reconciled_at, reversed_reference, flagged, flag_reasons, review_decision, review_note, reviewed_by, reviewed_at`

/** The scope's transactions of several references, each once, in no particular order: one probe of the reference index each (src/db/KeyProbe.ts). */
export const transactionsOf = (sql: SqlClient.SqlClient, tenantId: string, mode: Mode, references: ReadonlyArray<string>) =>
  sql<TransactionRow>`SELECT x.* FROM ${keyList(sql, references)} CROSS JOIN LATERAL (
      SELECT ${sql.literal(TRANSACTION_COLUMNS)} FROM transactions WHERE reference = k.key AND tenant_id = ${tenantId} AND mode = ${mode} OFFSET 0) x`

export interface ListFilter extends PageRequest {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly status?: Transaction["status"] | undefined
  readonly reconciliation?: Transaction["reconciliationStatus"] | undefined
  readonly accountRef?: string | undefined
  /** Only deposits a rule or flow flagged and no reviewer has decided yet (true), or only the others (false). */
  readonly flagged?: boolean | undefined
}

const bucket = (count: number, amountKobo: number) => ({ count, amountKobo })

/** Reads of reconciled transactions: list, fetch, summary. */
export class Transactions extends Effect.Service<Transactions>()("services/Transactions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(TRANSACTION_COLUMNS)

    const list = Effect.fn("Transactions.list")(function* (tenantId: string, mode: Mode, f: ListFilter) {
      const after = yield* cursorId(f, "reference", (ref) => sql<{ id: string }>`
        SELECT id FROM transactions WHERE tenant_id = ${tenantId} AND mode = ${mode} AND reference = ${ref}`)
      const limit = limitOf(f)
      const rows = yield* sql<TransactionRow>`SELECT ${cols} FROM transactions WHERE ${sql.and([
        sql`tenant_id = ${tenantId}`,
        sql`mode = ${mode}`,
        ...(f.from ? [sql`reconciled_at >= ${f.from}`] : []),
        ...(f.to ? [sql`reconciled_at < ${f.to}`] : []),
        ...(f.status ? [sql`status = ${f.status}`] : []),
        ...(f.reconciliation ? [sql`reconciliation_status = ${f.reconciliation}`] : []),
        ...(f.accountRef ? [sql`account_ref = ${f.accountRef}`] : []),
        ...(f.flagged === undefined ? [] : [f.flagged ? sql`flagged` : sql`NOT flagged`]),
        ...(after !== undefined ? [sql`(reconciled_at, id) < (SELECT reconciled_at, id FROM transactions WHERE id = ${after})`] : [])
      ])} ORDER BY reconciled_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)
      return pageOf(rows.map(toTransaction), limit - 1)
    })

    const findRow = (tenantId: string, mode: Mode, reference: string, lock = false) =>
      sql<TransactionRow>`SELECT ${cols} FROM transactions WHERE tenant_id = ${tenantId} AND mode = ${mode} AND reference = ${reference}
        ${lock ? sql`FOR UPDATE` : sql``}`.pipe(Effect.map((rows) => rows[0]))

    /** The scope's transactions of several references, in no particular order (`transactionsOf`). */
    const findRows = (tenantId: string, mode: Mode, references: ReadonlyArray<string>) => transactionsOf(sql, tenantId, mode, references)

    const get = Effect.fn("Transactions.get")(function* (tenantId: string, mode: Mode, reference: string) {
      const row = yield* findRow(tenantId, mode, reference).pipe(Effect.orDie)
      if (!row) return yield* notFound("transaction", reference)
      return toTransaction(row)
    })

    const summary = Effect.fn("Transactions.summary")(function* (tenantId: string, mode: Mode, range: { from?: Date | undefined; to?: Date | undefined }) {
      const rows = yield* sql<{ status: string; count: number; amountKobo: number }>`
        SELECT status, count(*)::bigint AS count, COALESCE(sum(amount_kobo), 0)::bigint AS amount_kobo FROM transactions
        WHERE ${sql.and([
          sql`tenant_id = ${tenantId}`, sql`mode = ${mode}`, sql`kind = 'inflow'`,
          ...(range.from ? [sql`reconciled_at >= ${range.from}`] : []),
          ...(range.to ? [sql`reconciled_at < ${range.to}`] : [])
        ])} GROUP BY status`.pipe(Effect.orDie)
      const of = (...statuses: ReadonlyArray<string>) => {
        const hit = rows.filter((r) => statuses.includes(r.status))
        return bucket(hit.reduce((s, r) => s + r.count, 0), hit.reduce((s, r) => s + r.amountKobo, 0))
      }
      return {
        from: range.from?.toISOString() ?? null,
        to: range.to?.toISOString() ?? null,
        total: of("Completed", "PendingReview", "Rejected", "Reversed"),
        successful: of("Completed"),
        failed: of("Rejected", "Reversed"),
        pendingReview: of("PendingReview")
      }
    })

    return { list, get, summary, findRow, findRows } as const
  })
}) {}
