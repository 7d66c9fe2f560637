import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { bulkInsert } from "../../src/db/BulkInsert.js"
import { integerArray, textArray } from "../../src/db/PgArray.js"
import { guardedChanges, type Journal, type Ledger } from "../ledger/Ledger.js"
import type { Outbox, StagedEvent } from "../outbox/Outbox.js"
import { ACCOUNT_COLUMNS, INBOX_RECONCILED, type LockedAccount, TRANSACTION_INSERT_COLUMNS, type TransactionValues } from "./DepositRows.js"
import { byKey, makeHotPathReads } from "./HotPathReads.js"
import { direct } from "../../src/db/Direct.js"

/**
 * THE HOT PATH: every SQL statement a deposit batch runs in the reconciler, and only those (its reads are in
 * HotPathReads.ts). Each one is shaped for
 * throughput, and the shapes are deliberate (docs/performance.md has the measurements behind them):
 * - one index probe per key (LATERAL with OFFSET 0, scalar subqueries), whatever the table statistics say;
 * - array parameters as Postgres array literals (`textArray`, `integerArray`) and times as ISO text, so the statement
 *   text is constant (it runs as a named prepared statement) and the driver does no per-element work;
 * - the batch's rows as ONE parameter per column (`bulkInsert`), and the batch's writes as ONE statement of
 *   WITH queries: one round trip, one plan;
 * - locks taken in key order (two batches that share accounts wait, never deadlock), virtual-account rows before the
 *   guarded balance rows (the ledger's lock order), and the balance rows updated last, in their own statement, so
 *   they are held only until the commit.
 * Decisions are not made here: `decideBatch` (src/domain/ReconcileBatch.ts) makes them from what these reads return.
 */

/** `tenant|mode` scope keys split into their tenants and modes, in order. */
const splitScopes = (scopeKeys: ReadonlyArray<string>): [Array<string>, Array<string>] => {
  const parts = scopeKeys.map((k) => k.split("|") as [string, string])
  return [parts.map(([t]) => t), parts.map(([, m]) => m)]
}

export const makeHotPath = (sql: SqlClient.SqlClient, ledger: Ledger, outbox: Outbox) => {
  const { readTable } = makeHotPathReads(sql, ledger)
  /**
   * Locks the batch's accounts, one index probe per (tenant, mode, NUBAN), in key order. A batch that only credits
   * them locks `FOR NO KEY UPDATE`: it excludes every other writer of the account, but not the automation actor's
   * holds, which take `FOR KEY SHARE` (services/automation/Actor.ts): a deposit credits the customer's funds, a hold
   * takes from them, and neither changes what the other reads. A batch with a reversal (`debits`) takes from them too,
   * and locks `FOR UPDATE`, as every other debit of an account's money does (issue 33: the heavy workload's reconciler
   * waited 0.38 ms per deposit for the actor's account locks). With each account, the transaction's
   * now() as whole milliseconds (exact: extract gives numeric), the instant a timestamp column written now reads back as,
   * and whether its tenant owes for late reversals in its mode (`receivable_open`: from the tenants row already joined,
   * so a tenant that owes nothing costs no read of its receivable).
   */
  const lockAccounts = (keys: ReadonlyArray<{ readonly tenantId: string; readonly mode: string; readonly nuban: string }>, debits: boolean) => {
    const ordered = byKey(keys, (k) => `${k.tenantId}|${k.mode}|${k.nuban}`)
    return direct(sql<LockedAccount & { readonly txNowMs: number }>`
      SELECT v.*, floor(extract(epoch FROM now()) * 1000)::int8 AS tx_now_ms
      FROM unnest(${textArray(ordered.map((k) => k.tenantId))}::text[], ${textArray(ordered.map((k) => k.mode))}::text[], ${textArray(ordered.map((k) => k.nuban))}::text[])
        WITH ORDINALITY AS k(tenant_id, mode, nuban, ord)
      CROSS JOIN LATERAL (
        SELECT ${sql.literal(ACCOUNT_COLUMNS)}, t.risk_threshold, va.mode = ANY(t.receivable_modes) AS receivable_open
        FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id JOIN tenants t ON t.id = va.tenant_id
        WHERE va.nuban = k.nuban AND va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.status = 'Active'
        ${sql.literal(debits ? "FOR UPDATE OF va" : "FOR NO KEY UPDATE OF va")}
      ) v
      ORDER BY k.ord`)
  }

  /**
   * The batch's writes: ONE statement inserts the transactions, ledger legs, outbox events and their pending rows,
   * moves the accounts' figures (and first activity) and marks the inbox rows; then, only when a reversal took from
   * recorded credits, their reversed amounts, and from held ones, their holds; only when a receivable crossed zero, the
   * tenant's flag; last, the guarded balance rows. Dies when the write does not add up.
   */
  const write = (w: {
    readonly inboxIds: ReadonlyArray<number>
    readonly transactions: ReadonlyArray<TransactionValues>
    readonly journals: ReadonlyArray<Journal>
    readonly events: ReadonlyArray<StagedEvent>
    readonly eventsCreatedAt: string
    /** The staging span's trace context, kept with the events (tracing on only; src/TraceContext.ts). */
    readonly traceparent?: string | undefined
    readonly accounts: ReadonlyArray<readonly [id: string, amountPaidKobo: number]>
    readonly reversedCredits: ReadonlyArray<{ readonly id: number; readonly reversedKobo: number; readonly status: string }>
    /** Holds a reversal took money from (escrow): by scope (`tenant|mode`) and deposit reference. */
    readonly holdsTaken?: ReadonlyArray<{ readonly scopeKey: string; readonly reference: string; readonly takenKobo: number }>
    /**
     * What the scopes whose receivable was read owe after the batch, and the scopes flagged as owing when the accounts
     * were locked: a scope whose receivable crossed zero gets its flag (`tenants.receivable_modes`) set or cleared.
     */
    readonly receivables?: ReadonlyMap<string, number>
    readonly owing?: ReadonlySet<string>
  }) =>
    Effect.gen(function* () {
      const markReconciled = sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ANY(${integerArray(w.inboxIds)}::bigint[])`
      if (w.transactions.length === 0) return yield* direct(markReconciled)
      const staged = outbox.prepare(w.events, w.eventsCreatedAt, w.traceparent)
      const ledgerInsert = yield* ledger.insertMany(w.journals)
      const [written] = yield* direct(sql<{ transactions: number; accounts: number }>`
        WITH t AS (${bulkInsert(sql, "transactions", TRANSACTION_INSERT_COLUMNS, w.transactions)} RETURNING 1),
          ${ledgerInsert ? sql`l AS (${ledgerInsert}),` : sql``}
          a AS (
            UPDATE virtual_accounts va SET amount_paid_kobo = u.amount_paid_kobo, first_activity_at = COALESCE(va.first_activity_at, now())
            FROM unnest(${textArray(w.accounts.map(([id]) => id))}::text[], ${integerArray(w.accounts.map(([, paid]) => paid))}::bigint[]) AS u(id, amount_paid_kobo)
            WHERE va.id = u.id RETURNING 1
          ),
          i AS (${markReconciled}),
          o AS (${staged.insertEvents}),
          p AS (${staged.insertPending("o")})
        SELECT (SELECT count(*) FROM t)::int AS transactions, (SELECT count(*) FROM a)::int AS accounts`)
      if (written?.transactions !== w.transactions.length || written.accounts !== w.accounts.length) {
        return yield* Effect.dieMessage(`batched reconcile wrote ${JSON.stringify(written)} for ${w.transactions.length} transactions and ${w.accounts.length} accounts`)
      }
      yield* outbox.nudge(w.events)
      if (w.reversedCredits.length > 0) {
        yield* direct(sql`
          UPDATE transactions t SET reversed_kobo = u.reversed_kobo, status = u.status
          FROM unnest(${integerArray(w.reversedCredits.map((c) => c.id))}::bigint[], ${integerArray(w.reversedCredits.map((c) => c.reversedKobo))}::bigint[],
            ${textArray(w.reversedCredits.map((c) => c.status))}::text[]) AS u(id, reversed_kobo, status)
          WHERE t.id = u.id`)
      }
      const holdsTaken = w.holdsTaken ?? []
      const flags = [...(w.receivables ?? [])].filter(([scope, owed]) => (owed > 0) !== (w.owing?.has(scope) ?? false))
        .map(([scopeKey, owed]) => ({ scopeKey, open: owed > 0 }))
      if (holdsTaken.length > 0) {
        // What a reversal took out of escrow leaves its hold; a hold it emptied has ended (Released, nothing left held).
        const [tenants, modes] = splitScopes(holdsTaken.map((h) => h.scopeKey))
        yield* direct(sql`
          UPDATE holds h SET held_kobo = h.held_kobo - u.taken,
            status = CASE WHEN h.held_kobo = u.taken THEN 'Released' ELSE h.status END,
            released_at = CASE WHEN h.held_kobo = u.taken THEN now() ELSE h.released_at END
          FROM unnest(${textArray(tenants)}::text[], ${textArray(modes)}::text[], ${textArray(holdsTaken.map((h) => h.reference))}::text[],
            ${integerArray(holdsTaken.map((h) => h.takenKobo))}::bigint[]) AS u(tenant_id, mode, reference, taken)
          WHERE h.tenant_id = u.tenant_id AND h.mode = u.mode AND h.reference = u.reference AND h.status = 'Held'`)
      }
      if (flags.length > 0) {
        const [tenants, modes] = splitScopes(flags.map((f) => f.scopeKey))
        yield* direct(sql`
          UPDATE tenants t SET receivable_modes = CASE WHEN u.open THEN array_append(array_remove(t.receivable_modes, u.mode), u.mode)
            ELSE array_remove(t.receivable_modes, u.mode) END
          FROM unnest(${textArray(tenants)}::text[], ${textArray(modes)}::text[], ${textArray(flags.map((f) => String(f.open)))}::boolean[])
            AS u(tenant_id, mode, open)
          WHERE t.id = u.tenant_id`)
      }
      yield* ledger.applyGuarded(guardedChanges(w.journals)).pipe(Effect.orDie)
    })

  return { lockAccounts, readTable, write } as const
}
