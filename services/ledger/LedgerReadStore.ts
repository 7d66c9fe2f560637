import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { textArray } from "../../src/db/PgArray.js"
import type { Scope } from "../../src/domain/Mode.js"

export interface EntryRow {
  readonly id: number
  readonly journalId: string
  readonly account: string
  readonly amountKobo: number
  readonly createdAt: Date
}

/** One virtual account's ledger accounts, by family. */
export interface AccountSet {
  readonly customerFunds: string
  readonly escrow: string
  readonly reviewPending: string
}

/** A statement's row: the opening sums first (no journal), then each journal in posting order with its sums. */
export interface StatementRow {
  readonly journalId: string | null
  readonly createdAt: Date | null
  readonly customerFundsKobo: number
  readonly escrowKobo: number
  readonly reviewPendingKobo: number
}

/**
 * The SQL of reading the ledger back (entries pages, journals' legs, statements): plain reads, no locks. Every read is
 * bounded by tenant and mode and served by the ledger's existing indexes: `(tenant_id, mode, account)` for one account's
 * entries and for the tenant-wide page (a top-N sort over the tenant and mode's entries), the journal key
 * `(tenant_id, mode, journal_id, account)` for a journal's legs, and the primary key for a page's cursor.
 */
export const makeLedgerReadStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** The row id of an entry of the scope (from a page's `startingAfter`, EntryIds.ts); no row for anything else. */
  const entryId = (scope: Scope, key: string | undefined) =>
    key !== undefined && /^[1-9]\d{0,18}$/.test(key)
      ? sql<{ id: string }>`SELECT id::text AS id FROM ledger_entries WHERE id = ${key}::bigint AND tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`
      : Effect.succeed([] as ReadonlyArray<{ id: string }>)

  /** A page of entries, newest first, after the entry `after` (a row id). */
  const entries = (scope: Scope, f: {
    readonly accounts?: ReadonlyArray<string> | undefined
    readonly from?: Date | undefined
    readonly to?: Date | undefined
    readonly after?: string | undefined
    readonly limit: number
  }) =>
    sql<EntryRow>`SELECT id, journal_id, account, amount_kobo, created_at FROM ledger_entries WHERE ${sql.and([
      sql`tenant_id = ${scope.tenantId}`,
      sql`mode = ${scope.mode}`,
      ...(f.accounts !== undefined ? [sql`account = ANY(${textArray(f.accounts)}::text[])`] : []),
      ...(f.from !== undefined ? [sql`created_at >= ${f.from}`] : []),
      ...(f.to !== undefined ? [sql`created_at < ${f.to}`] : []),
      ...(f.after !== undefined ? [sql`(created_at, id) < (SELECT created_at, id FROM ledger_entries WHERE id = ${f.after}::bigint)`] : [])
    ])} ORDER BY created_at DESC, id DESC LIMIT ${f.limit}`.pipe(Effect.orDie)

  /** Every leg of the journals (any account): what describes them. */
  const legsOf = (scope: Scope, journalIds: ReadonlyArray<string>) =>
    journalIds.length === 0
      ? Effect.succeed([] as ReadonlyArray<{ journalId: string; account: string; amountKobo: number }>)
      : sql<{ journalId: string; account: string; amountKobo: number }>`SELECT journal_id, account, amount_kobo FROM ledger_entries
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND journal_id = ANY(${textArray(journalIds)}::text[])`.pipe(Effect.orDie)

  /**
   * One account's statement in ONE statement (one snapshot, so the opening and the movements agree): the sums of its
   * entries before `from` (zeros without `from`), then per journal posted in [from, to) its sums, in posting order.
   * A journal's legs are written by one statement, so they share one `created_at`.
   */
  const statement = (scope: Scope, accounts: AccountSet, from: Date | undefined, to: Date) => {
    const sums = sql`
      COALESCE(sum(amount_kobo) FILTER (WHERE account = ${accounts.customerFunds}), 0)::bigint AS customer_funds_kobo,
      COALESCE(sum(amount_kobo) FILTER (WHERE account = ${accounts.escrow}), 0)::bigint AS escrow_kobo,
      COALESCE(sum(amount_kobo) FILTER (WHERE account = ${accounts.reviewPending}), 0)::bigint AS review_pending_kobo`
    return sql<StatementRow>`
      WITH e AS (
        SELECT id, journal_id, account, amount_kobo, created_at FROM ledger_entries
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
          AND account = ANY(${textArray([accounts.customerFunds, accounts.escrow, accounts.reviewPending])}::text[]) AND created_at < ${to})
      SELECT NULL::text AS journal_id, NULL::timestamptz AS created_at, NULL::bigint AS first_id, ${sums}
        FROM e WHERE ${from === undefined ? sql`false` : sql`created_at < ${from}`}
      UNION ALL
      SELECT journal_id, min(created_at), min(id), ${sums}
        FROM e ${from === undefined ? sql`` : sql`WHERE created_at >= ${from}`} GROUP BY journal_id
      ORDER BY 2 NULLS FIRST, 3 NULLS FIRST`.pipe(Effect.orDie)
  }

  return { entryId, entries, legsOf, statement } as const
})
