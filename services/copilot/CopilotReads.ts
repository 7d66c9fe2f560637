import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import { ACCOUNT_COLUMNS } from "../deposits/DepositRows.js"
import type { VirtualAccountRow } from "../accounts/VirtualAccounts.js"

/**
 * The copilot's own reads where the read services have no filter for the question (accounts by customer name,
 * deposits by reconciliation status or risk in a period, transfers and settlements in a period). Read-only: SELECT
 * statements only, each scoped by the caller's tenant and mode.
 */

/** The most references an answer lists. */
export const MAX_REFERENCES = 20

export interface Window {
  readonly fromMs?: number | undefined
  readonly toMs?: number | undefined
}

export interface DepositFilter extends Window {
  readonly reconciliation?: "Underpaid" | "Overpaid" | undefined
  readonly minRiskScore?: number | undefined
  readonly status?: "Completed" | "PendingReview" | undefined
  /** Leave out deposits a reviewer rejected and those the bank reversed (they were never money kept). */
  readonly keptOnly?: boolean | undefined
}

export interface DepositItem {
  readonly reference: string
  readonly accountRef: string | null
  readonly amountKobo: number
  readonly surplusKobo: number
  readonly riskScore: number
  readonly reconciliationStatus: string
  readonly reconciledAt: Date
}

export interface TransferItem {
  readonly merchantTxRef: string
  readonly amountKobo: number
  readonly status: string
  readonly depositReference: string | null
  readonly createdAt: Date
}

export interface SettlementItem {
  readonly id: string
  readonly accountRef: string
  readonly netKobo: number
  readonly status: string
  readonly createdAt: Date
}

export interface DebtorItem {
  readonly accountRef: string
  readonly name: string
  /** Outstanding on receivables whose due date has passed. */
  readonly overdueKobo: number
  /** Outstanding on receivables due today or later. */
  readonly notYetDueKobo: number
  /** The Lagos day number of its oldest overdue receivable's due date, null when nothing of it is overdue. */
  readonly oldestDueDay: number | null
}

export interface AccountPayments {
  readonly accountRef: string
  readonly count: number
  readonly amountKobo: number
}

/** `LIKE` pattern text for a literal word (its wildcards escaped). */
const likeWord = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export class CopilotReads extends Effect.Service<CopilotReads>()("services/insights/CopilotReads", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const inWindow = (column: string, w: Window) => [
      ...(w.fromMs !== undefined ? [sql`${sql.literal(column)} >= ${new Date(w.fromMs)}`] : []),
      ...(w.toMs !== undefined ? [sql`${sql.literal(column)} < ${new Date(w.toMs)}`] : [])
    ]

    /** Active accounts whose customer's name holds every word of `name` (any case), newest first. */
    const accountsByName = (scope: Scope, name: string) => {
      const words = name.split(/\s+/).filter((w) => w !== "").slice(0, 6)
      if (words.length === 0) return Effect.succeed([] as ReadonlyArray<VirtualAccountRow>)
      return sql<VirtualAccountRow>`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
        WHERE ${sql.and([
          sql`va.tenant_id = ${scope.tenantId}`, sql`va.mode = ${scope.mode}`, sql`va.status = 'Active'`,
          ...words.map((w) => sql`c.name ILIKE ${likeWord(w)}`)
        ])} ORDER BY va.created_at DESC, va.id DESC LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
    }

    /** Inflows matching the filter: how many, their kobo and surplus, and the latest MAX_REFERENCES of them. */
    const deposits = (scope: Scope, f: DepositFilter) =>
      Effect.gen(function* () {
        const where = sql.and([
          sql`tenant_id = ${scope.tenantId}`, sql`mode = ${scope.mode}`, sql`kind = 'inflow'`,
          ...inWindow("reconciled_at", f),
          ...(f.reconciliation ? [sql`reconciliation_status = ${f.reconciliation}`] : []),
          ...(f.minRiskScore !== undefined ? [sql`risk_score >= ${f.minRiskScore}`] : []),
          ...(f.status ? [sql`status = ${f.status}`] : []),
          ...(f.keptOnly ? [sql`status IN ('Completed', 'PendingReview')`] : [])
        ])
        const [totals] = yield* sql<{ count: number; amountKobo: number; surplusKobo: number }>`SELECT count(*)::bigint AS count,
            COALESCE(sum(amount_kobo), 0)::bigint AS amount_kobo, COALESCE(sum(surplus_kobo), 0)::bigint AS surplus_kobo
          FROM transactions WHERE ${where}`.pipe(Effect.orDie)
        const items = yield* sql<DepositItem>`SELECT reference, account_ref, amount_kobo, surplus_kobo, risk_score, reconciliation_status, reconciled_at
          FROM transactions WHERE ${where} ORDER BY reconciled_at DESC, id DESC LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
        return { ...totals!, items }
      })

    /** Transfers of these sources created in the window: totals, counts by status, the latest MAX_REFERENCES. */
    const transfers = (scope: Scope, sources: ReadonlyArray<string>, w: Window) =>
      Effect.gen(function* () {
        const where = sql.and([
          sql`tenant_id = ${scope.tenantId}`, sql`mode = ${scope.mode}`, sql.in("source", sources), ...inWindow("created_at", w)
        ])
        const byStatus = yield* sql<{ status: string; count: number; amountKobo: number }>`SELECT status, count(*)::bigint AS count,
            COALESCE(sum(amount_kobo), 0)::bigint AS amount_kobo FROM transfers WHERE ${where} GROUP BY status ORDER BY status`.pipe(Effect.orDie)
        const items = yield* sql<TransferItem>`SELECT merchant_tx_ref, amount_kobo, status, deposit_reference, created_at FROM transfers
          WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
        return { byStatus, items }
      })

    /** Settlements created in the window (skipped ones included, with their status): counts by status, the latest ones. */
    const settlements = (scope: Scope, w: Window) =>
      Effect.gen(function* () {
        const where = sql.and([sql`s.tenant_id = ${scope.tenantId}`, sql`s.mode = ${scope.mode}`, ...inWindow("s.created_at", w)])
        const byStatus = yield* sql<{ status: string; count: number; netKobo: number }>`SELECT s.status, count(*)::bigint AS count,
            COALESCE(sum(s.net_kobo), 0)::bigint AS net_kobo FROM settlements s WHERE ${where} GROUP BY s.status ORDER BY s.status`.pipe(Effect.orDie)
        const items = yield* sql<SettlementItem>`SELECT s.id, va.account_ref, s.net_kobo, s.status, s.created_at
          FROM settlements s JOIN virtual_accounts va ON va.id = s.virtual_account_id
          WHERE ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
        return { byStatus, items }
      })

    /**
     * Accounts still short of their expected amount, each split by its receivables (the insight roll-ups', as the aging
     * buckets read them) into what is overdue, due before Lagos day `today` (src/domain/Insights.ts `isOverdue`), and
     * what is not yet due: how many accounts have each, and the accounts, most overdue first, then most owed.
     */
    const accountsOwing = (scope: Scope, today: number) =>
      Effect.gen(function* () {
        const perAccount = sql`SELECT va.account_ref, c.name,
            COALESCE(sum(r.amount_kobo - r.collected_kobo) FILTER (WHERE r.due_day < ${today}), 0)::bigint AS overdue_kobo,
            COALESCE(sum(r.amount_kobo - r.collected_kobo) FILTER (WHERE r.due_day >= ${today}), 0)::bigint AS not_yet_due_kobo,
            min(r.due_day) FILTER (WHERE r.due_day < ${today}) AS oldest_due_day
          FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id JOIN insight_receivables r ON r.account_id = va.id
          WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode} AND va.status = 'Active'
            AND va.expected_amount_kobo IS NOT NULL AND va.expected_amount_kobo > va.amount_paid_kobo AND r.collected_kobo < r.amount_kobo
          GROUP BY va.id, va.account_ref, c.name`
        const [totals] = yield* sql<{ accountsOverdue: number; accountsNotYetDue: number }>`SELECT
            count(*) FILTER (WHERE overdue_kobo > 0)::bigint AS accounts_overdue,
            count(*) FILTER (WHERE not_yet_due_kobo > 0)::bigint AS accounts_not_yet_due
          FROM (${perAccount}) a`.pipe(Effect.orDie)
        const items = yield* sql<DebtorItem>`SELECT * FROM (${perAccount}) a
          ORDER BY overdue_kobo DESC, not_yet_due_kobo DESC, account_ref LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
        return { ...totals!, items }
      })

    /** Credited deposits (`Completed`) into these accounts reconciled in the window: per account, and the latest ones. */
    const paymentsInto = (scope: Scope, accountRefs: ReadonlyArray<string>, w: Window) =>
      Effect.gen(function* () {
        if (accountRefs.length === 0) return { byAccount: [] as ReadonlyArray<AccountPayments>, items: [] as ReadonlyArray<DepositItem> }
        const where = sql.and([
          sql`tenant_id = ${scope.tenantId}`, sql`mode = ${scope.mode}`, sql`kind = 'inflow'`, sql`status = 'Completed'`,
          sql.in("account_ref", accountRefs), ...inWindow("reconciled_at", w)
        ])
        const byAccount = yield* sql<AccountPayments>`SELECT account_ref, count(*)::bigint AS count, COALESCE(sum(amount_kobo), 0)::bigint AS amount_kobo
          FROM transactions WHERE ${where} GROUP BY account_ref`.pipe(Effect.orDie)
        const items = yield* sql<DepositItem>`SELECT reference, account_ref, amount_kobo, surplus_kobo, risk_score, reconciliation_status, reconciled_at
          FROM transactions WHERE ${where} ORDER BY reconciled_at DESC, id DESC LIMIT ${MAX_REFERENCES}`.pipe(Effect.orDie)
        return { byAccount, items }
      })

    /** The latest deposit into each of these accounts (by accountRef). */
    const lastDeposits = (scope: Scope, accountRefs: ReadonlyArray<string>) =>
      accountRefs.length === 0
        ? Effect.succeed([] as ReadonlyArray<DepositItem>)
        : sql<DepositItem>`SELECT DISTINCT ON (account_ref) reference, account_ref, amount_kobo, surplus_kobo, risk_score, reconciliation_status,
              reconciled_at FROM transactions
            WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND kind = 'inflow' AND ${sql.in("account_ref", accountRefs)}
            ORDER BY account_ref, reconciled_at DESC, id DESC`.pipe(Effect.orDie)

    /** The live (Active or Paused) billing schedule of each of these accounts. */
    const schedules = (scope: Scope, accountRefs: ReadonlyArray<string>) =>
      accountRefs.length === 0
        ? Effect.succeed([] as ReadonlyArray<{ accountRef: string; interval: string; amountKobo: number; status: string }>)
        : sql<{ accountRef: string; interval: string; amountKobo: number; status: string }>`SELECT va.account_ref, s.interval, s.amount_kobo, s.status
            FROM billing_schedules s JOIN virtual_accounts va ON va.id = s.virtual_account_id
            WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.status IN ('Active', 'Paused')
              AND ${sql.in("va.account_ref", accountRefs)}`.pipe(Effect.orDie)

    return { accountsByName, deposits, transfers, settlements, accountsOwing, paymentsInto, lastDeposits, schedules } as const
  })
}) {}
