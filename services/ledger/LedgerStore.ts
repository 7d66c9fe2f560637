import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type Column, bulkInsert } from "../../src/db/BulkInsert.js"
import { integerArray, textArray } from "../../src/db/PgArray.js"
import { AVAILABLE_STRIPES, GuardedBalance, type Leg } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { GuardedChange, Journal } from "./Ledger.js"
import { direct } from "../../src/db/Direct.js"
import { keyList } from "../../src/db/KeyProbe.js"

const LEG_COLUMNS: ReadonlyArray<Column<{ readonly journal: Journal; readonly leg: Leg }>> = [
  ["tenant_id", "text", (r) => r.journal.tenantId], ["mode", "text", (r) => r.journal.mode], ["journal_id", "text", (r) => r.journal.journalId],
  ["account", "text", (r) => r.leg.account], ["amount_kobo", "int8", (r) => r.leg.amountKobo]
]

/**
 * The sum of each account's entries (debits positive), a row per account that has entries: one probe of the account
 * index per account (src/db/KeyProbe.ts), however many entries the tenant's other accounts have.
 */
export const entriesSumsOf = (sql: SqlClient.SqlClient, scope: Scope, accounts: ReadonlyArray<string>) =>
  sql<{ account: string; balance: number }>`SELECT k.key AS account, s.balance FROM ${keyList(sql, accounts)} CROSS JOIN LATERAL (
      SELECT sum(amount_kobo)::bigint AS balance FROM ledger_entries WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account = k.key) s
    WHERE s.balance IS NOT NULL`

/**
 * The SQL of the ledger (`ledger_entries`, `ledger_balances`, the tenant's receivable flag): one function per statement,
 * each run in the caller's transaction. What to post and which balance row moves by how much is decided in Ledger.ts.
 */
export const makeLedgerStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const STRIPES = Array.from({ length: AVAILABLE_STRIPES }, (_, n) => GuardedBalance.availableStripe(n))
  const stripeList = textArray(STRIPES)

  /** The INSERT of journals' legs (already netted), as a statement or a WITH query of the caller's. */
  const insertEntries = (rows: ReadonlyArray<{ readonly journal: Journal; readonly leg: Leg }>) =>
    bulkInsert(sql, "ledger_entries", LEG_COLUMNS, rows)

  /** Posts one journal's legs, each once: how many legs are new. */
  const postEntries = (journal: Journal) =>
    direct(sql<{ n: number }>`
        WITH i AS (${insertEntries(journal.legs.map((leg) => ({ journal, leg })))}
          ON CONFLICT (tenant_id, mode, journal_id, account) DO NOTHING RETURNING 1)
        SELECT count(*)::int AS n FROM i`).pipe(Effect.orDie, Effect.map((rows) => rows[0]!.n))

  /** Posts several journals' legs, each once: per journal with new legs, how many. */
  const postEntriesMany = (journals: ReadonlyArray<Journal>) =>
    direct(sql<{ journalId: string; n: number }>`
        WITH i AS (${insertEntries(journals.flatMap((journal) => journal.legs.map((leg) => ({ journal, leg }))))}
          ON CONFLICT (tenant_id, mode, journal_id, account) DO NOTHING RETURNING journal_id)
        SELECT journal_id, count(*)::int AS n FROM i GROUP BY journal_id`).pipe(Effect.orDie)

  /**
   * Raises the available balance on the emptiest stripe no other transaction holds (SKIP LOCKED); no row when every one
   * is held. The emptiest, so the balance spreads over the stripes: the first free one in name order piled it on the
   * few stripes the deposit batches take first, and a lowering larger than those held had to lock all eight
   * (`Ledger.lowerAvailable`; docs/performance.md, "The available balance's stripes").
   */
  const raiseFreeStripe = (c: GuardedChange) =>
    direct(sql<{ account: string }>`
          UPDATE ledger_balances b SET balance_kobo = b.balance_kobo + ${c.deltaKobo}, updated_at = now()
          WHERE b.tenant_id = ${c.tenantId} AND b.mode = ${c.mode} AND b.account = (
            SELECT account FROM ledger_balances
            WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode} AND account = ANY(${stripeList}::text[])
            ORDER BY balance_kobo, account LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING b.account`)

  /** Raises the available balance on a stripe picked at random, waiting for its lock; no row when there is none. */
  const raiseAnyStripe = (c: GuardedChange) =>
    direct(sql<{ account: string }>`UPDATE ledger_balances SET balance_kobo = balance_kobo + ${c.deltaKobo}, updated_at = now()
          WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode} AND account = ${STRIPES[Math.floor(Math.random() * AVAILABLE_STRIPES)]!}
          RETURNING account`)

  /**
   * Takes up to `upToKobo` off the fullest stripe that holds at least `atLeastKobo` and that no other transaction holds
   * (SKIP LOCKED; a stripe this transaction holds counts as free): what it took, or no row when there is no such
   * stripe. With both the amount, it lowers the available balance on ONE stripe or not at all.
   */
  const takeFromFullestFreeStripe = (c: Scope, upToKobo: number, atLeastKobo = 1) =>
    direct(sql<{ account: string; takenKobo: number }>`
          WITH s AS (
            SELECT account, balance_kobo FROM ledger_balances
            WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode} AND account = ANY(${stripeList}::text[]) AND balance_kobo >= ${atLeastKobo}
            ORDER BY balance_kobo DESC, account LIMIT 1 FOR UPDATE SKIP LOCKED)
          UPDATE ledger_balances b SET balance_kobo = b.balance_kobo - LEAST(s.balance_kobo, ${upToKobo}), updated_at = now()
          FROM s WHERE b.tenant_id = ${c.tenantId} AND b.mode = ${c.mode} AND b.account = s.account
          RETURNING b.account, LEAST(s.balance_kobo, ${upToKobo})::bigint AS taken_kobo`)

  /** Every stripe of the scope, locked in order. */
  const lockStripes = (c: Scope) =>
    direct(sql<{ account: string; balanceKobo: number }>`
          SELECT account, balance_kobo FROM ledger_balances
          WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode} AND account = ANY(${stripeList}::text[])
          ORDER BY account FOR UPDATE`)

  /** Takes each amount off its (locked) stripe. */
  const takeFromStripes = (c: Scope, takes: ReadonlyArray<readonly [string, number]>) =>
    direct(sql`UPDATE ledger_balances b SET balance_kobo = b.balance_kobo - u.take, updated_at = now()
          FROM unnest(${textArray(takes.map(([a]) => a))}::text[], ${integerArray(takes.map(([, t]) => t))}::bigint[]) AS u(account, take)
          WHERE b.tenant_id = ${c.tenantId} AND b.mode = ${c.mode} AND b.account = u.account`)

  /** Locks guarded rows (one per account) in order, so two steps that touch the same rows never deadlock. */
  const lockRows = (changes: ReadonlyArray<GuardedChange>) =>
    direct(sql`SELECT 1 FROM ledger_balances b JOIN unnest(${textArray(changes.map((c) => c.tenantId))}::text[], ${textArray(changes.map((c) => c.mode))}::text[],
              ${textArray(changes.map((c) => c.account))}::text[]) AS c(tenant_id, mode, account)
            ON b.tenant_id = c.tenant_id AND b.mode = c.mode AND b.account = c.account
            ORDER BY b.tenant_id, b.mode, b.account FOR UPDATE OF b`)

  /** Moves guarded rows by their changes: the rows that exist (and so moved). */
  const updateRows = (cs: ReadonlyArray<GuardedChange>) =>
    direct(sql<{ tenantId: string; mode: string; account: string }>`
            UPDATE ledger_balances b SET balance_kobo = b.balance_kobo + c.delta, updated_at = now()
            FROM unnest(${textArray(cs.map((c) => c.tenantId))}::text[], ${textArray(cs.map((c) => c.mode))}::text[],
              ${textArray(cs.map((c) => c.account))}::text[], ${integerArray(cs.map((c) => c.deltaKobo))}::bigint[]) AS c(tenant_id, mode, account, delta)
            WHERE b.tenant_id = c.tenant_id AND b.mode = c.mode AND b.account = c.account
            RETURNING b.tenant_id, b.mode, b.account`)

  /** Makes the missing guarded rows, at zero. */
  const insertRows = (missing: ReadonlyArray<GuardedChange>) =>
    direct(sql`INSERT INTO ledger_balances (tenant_id, mode, account, balance_kobo)
          SELECT * FROM unnest(${textArray(missing.map((c) => c.tenantId))}::text[], ${textArray(missing.map((c) => c.mode))}::text[],
            ${textArray(missing.map((c) => c.account))}::text[], ${integerArray(missing.map(() => 0))}::bigint[])
          ON CONFLICT (tenant_id, mode, account) DO NOTHING`)

  /** The tenant's available balance: the sum of its stripes, locked when `lock` (a step about to lower it). */
  const available = (scope: Scope, lock = false) =>
    direct(sql<{ account: string; balanceKobo: number }>`SELECT account, balance_kobo FROM ledger_balances
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account = ANY(${stripeList}::text[])
        ORDER BY account ${lock ? sql`FOR UPDATE` : sql``}`).pipe(
      Effect.map((rows) => rows.reduce((sum, r) => sum + r.balanceKobo, 0)),
      Effect.orDie
    )

  /** The sum of each account's entries (debits positive): a row per account that has entries (`entriesSumsOf`). */
  const entriesSums = (scope: Scope, accounts: ReadonlyArray<string>) => direct(entriesSumsOf(sql, scope, accounts)).pipe(Effect.orDie)

  /** The tenant's receivable row in the scope's mode, locked as asked (see Ledger.receivable). */
  const receivable = (scope: Scope, lock?: "update" | "share") =>
    direct(sql<{ balanceKobo: number }>`SELECT balance_kobo FROM ledger_balances
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account = ${GuardedBalance.receivable}
        ${lock === "update" ? sql`FOR UPDATE` : lock === "share" ? sql`FOR SHARE` : sql``}`).pipe(
      Effect.map((rows) => rows[0]?.balanceKobo ?? 0),
      Effect.orDie
    )

  /** Sets or clears the scope's mode in `tenants.receivable_modes`. */
  const flagReceivable = (scope: Scope, owing: boolean) =>
    direct(sql`UPDATE tenants SET receivable_modes = ${owing
      ? sql`array_append(array_remove(receivable_modes, ${scope.mode}::text), ${scope.mode}::text)`
      : sql`array_remove(receivable_modes, ${scope.mode}::text)`}
        WHERE id = ${scope.tenantId}`).pipe(Effect.asVoid, Effect.orDie)

  return {
    insertEntries, postEntries, postEntriesMany, raiseFreeStripe, raiseAnyStripe, takeFromFullestFreeStripe, lockStripes, takeFromStripes,
    lockRows, updateRows, insertRows, available, entriesSums, receivable, flagReceivable
  } as const
})
