import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { insertFromJson } from "../../src/db/InsertFromJson.js"
import { integerArray, textArray } from "../../src/db/PgArray.js"
import { LedgerAccount } from "../../src/domain/Ledger.js"
import type { Mode } from "../../src/domain/Mode.js"
import type { ReversibleCredit, TableReads } from "../../src/domain/ReconcileBatch.js"
import type { PriorCredit } from "../../src/domain/Reconciliation.js"
import { DUPLICATE_WINDOW_MS } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import { guardedChanges, type Journal, type Ledger } from "../Ledger.js"
import type { Outbox, StagedEvent } from "../Outbox.js"
import { ACCOUNT_COLUMNS, INBOX_RECONCILED, type LockedAccount, TRANSACTION_INSERT_COLUMNS, type TransactionValues } from "./DepositRows.js"

/**
 * THE HOT PATH: every SQL statement a deposit batch runs in the reconciler, and only those. Each one is shaped for
 * throughput, and the shapes are deliberate (docs/performance.md has the measurements behind them):
 * - one index probe per key (LATERAL with OFFSET 0, scalar subqueries), whatever the table statistics say;
 * - array parameters as Postgres array literals (`textArray`, `integerArray`) and times as ISO text, so the statement
 *   text is constant (it runs as a named prepared statement) and the driver does no per-element work;
 * - the batch's rows as ONE JSON parameter per table (`insertFromJson`), and the batch's writes as ONE statement of
 *   WITH queries: one round trip, one plan;
 * - locks taken in key order (two batches that share accounts wait, never deadlock), virtual-account rows before the
 *   guarded balance rows (the ledger's lock order), and the balance rows updated last, in their own statement, so
 *   they are held only until the commit.
 * Decisions are not made here: `decideBatch` (src/domain/ReconcileBatch.ts) makes them from what these reads return.
 */

/** A deposit of the batch as the reads see it. */
export interface HotDeposit {
  readonly index: number
  readonly kind: "inflow" | "reversal"
  readonly tenantId: string
  readonly mode: string
  readonly accountId: string | null
  readonly amountKobo: number
  readonly paidAt: Date
  /** The normalised payer name; "" when there is none. */
  readonly payerKey: string
}

/** Times go to Postgres as ISO text: the pg driver formats a Date in an array in JavaScript, element by element. */
const iso = (ms: number) => new Date(ms).toISOString()

const byKey = <A>(rows: ReadonlyArray<A>, key: (a: A) => string) =>
  [...new Map(rows.map((r) => [key(r), r])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r)

export const makeHotPath = (sql: SqlClient.SqlClient, ledger: Ledger, outbox: Outbox) => {
  /**
   * Locks the batch's accounts, one index probe per (tenant, mode, NUBAN), in key order; with each, the transaction's
   * now() as whole milliseconds (exact: extract gives numeric), the instant a timestamp column written now reads back as.
   */
  const lockAccounts = (keys: ReadonlyArray<{ readonly tenantId: string; readonly mode: string; readonly nuban: string }>) => {
    const ordered = byKey(keys, (k) => `${k.tenantId}|${k.mode}|${k.nuban}`)
    return sql<LockedAccount & { readonly txNowMs: number }>`
      SELECT v.*, floor(extract(epoch FROM now()) * 1000)::int8 AS tx_now_ms
      FROM unnest(${textArray(ordered.map((k) => k.tenantId))}::text[], ${textArray(ordered.map((k) => k.mode))}::text[], ${textArray(ordered.map((k) => k.nuban))}::text[])
        WITH ORDINALITY AS k(tenant_id, mode, nuban, ord)
      CROSS JOIN LATERAL (
        SELECT ${sql.literal(ACCOUNT_COLUMNS)}, t.risk_threshold
        FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id JOIN tenants t ON t.id = va.tenant_id
        WHERE va.nuban = k.nuban AND va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.status = 'Active'
        FOR UPDATE OF va
      ) v
      ORDER BY k.ord`
  }

  /**
   * The duplicate and velocity reads in one statement: `velocity` by batch index, the account's credited inflows in
   * [paidAt - velocity window, paidAt]; `candidates` by account, its credited inflows of an amount a batch inflow to it
   * carries, within that inflow's duplicate window (only those can be a duplicate's earlier copy).
   */
  const readRiskWindows = (inflows: ReadonlyArray<HotDeposit & { readonly accountId: string }>) =>
    Effect.gen(function* () {
      const velocity = new Map<number, number>()
      const candidates = new Map<string, Array<PriorCredit>>()
      if (inflows.length === 0) return { velocity, candidates }
      const windows = new Map<string, { accountId: string; amountKobo: number; from: number; to: number }>()
      for (const d of inflows) {
        const t = d.paidAt.getTime()
        const key = `${d.accountId}|${d.amountKobo}`
        const w = windows.get(key)
        if (w) {
          w.from = Math.min(w.from, t - DUPLICATE_WINDOW_MS)
          w.to = Math.max(w.to, t + DUPLICATE_WINDOW_MS)
        } else windows.set(key, { accountId: d.accountId, amountKobo: d.amountKobo, from: t - DUPLICATE_WINDOW_MS, to: t + DUPLICATE_WINDOW_MS })
      }
      const ws = [...windows.values()]
      const rows = yield* sql<{
        readonly ord: number | null; readonly velocity: number | null; readonly virtualAccountId: string | null; readonly reference: string
        readonly amountKobo: number; readonly senderAccountNumber: string | null; readonly senderName: string | null; readonly paidAt: Date
      }>`
        SELECT d.ord, (
            SELECT count(*) FROM transactions t
            WHERE t.virtual_account_id = d.account_id AND t.paid_at BETWEEN d.from_at AND d.paid_at
              AND t.kind = 'inflow' AND t.status IN ('Completed', 'PendingReview')
          )::int AS velocity,
          NULL::text AS virtual_account_id, NULL::text AS reference, NULL::bigint AS amount_kobo, NULL::text AS sender_account_number,
          NULL::text AS sender_name, NULL::timestamptz AS paid_at
        FROM unnest(${integerArray(inflows.map((d) => d.index))}::int[], ${textArray(inflows.map((d) => d.accountId))}::text[],
          ${textArray(inflows.map((d) => iso(d.paidAt.getTime() - VELOCITY_WINDOW_MS)))}::timestamptz[], ${textArray(inflows.map((d) => d.paidAt.toISOString()))}::timestamptz[])
          AS d(ord, account_id, from_at, paid_at)
        UNION ALL
        SELECT NULL, NULL, tr.* FROM unnest(${textArray(ws.map((w) => w.accountId))}::text[], ${integerArray(ws.map((w) => w.amountKobo))}::bigint[],
          ${textArray(ws.map((w) => iso(w.from)))}::timestamptz[], ${textArray(ws.map((w) => iso(w.to)))}::timestamptz[])
          AS w(account_id, amount_kobo, from_at, to_at)
        CROSS JOIN LATERAL (
          SELECT t.virtual_account_id, t.reference, t.amount_kobo, t.sender_account_number, t.sender_name, t.paid_at FROM transactions t
          WHERE t.virtual_account_id = w.account_id AND t.paid_at BETWEEN w.from_at AND w.to_at AND t.amount_kobo = w.amount_kobo
            AND t.kind = 'inflow' AND t.status IN ('Completed', 'PendingReview')
          OFFSET 0
        ) tr`
      for (const r of rows) {
        if (r.ord !== null) velocity.set(r.ord, r.velocity ?? 0)
        else {
          const list = candidates.get(r.virtualAccountId!) ?? []
          list.push({ reference: r.reference, amountKobo: r.amountKobo, senderAccountNumber: r.senderAccountNumber, senderName: r.senderName, paidAtMs: r.paidAt.getTime() })
          candidates.set(r.virtualAccountId!, list)
        }
      }
      return { velocity, candidates }
    })

  /**
   * Payer reuse from the table, by batch index: the other accounts the same payer (normalised name) paid in the window,
   * an index range on the payer key per deposit. (It was a self-join of the batch, quadratic in its size; the batch's
   * own earlier deposits are `decideBatch`'s to add.)
   */
  const readPayerReuse = (inflows: ReadonlyArray<HotDeposit & { readonly accountId: string }>) =>
    Effect.gen(function* () {
      const reuse = new Map<number, ReadonlyArray<string>>()
      const withPayer = inflows.filter((d) => d.payerKey !== "")
      if (withPayer.length === 0) return reuse
      const rows = yield* sql<{ ord: number; accounts: ReadonlyArray<string> }>`
        SELECT d.ord, ARRAY(
          SELECT DISTINCT tr.virtual_account_id FROM transactions tr
          WHERE tr.tenant_id = d.tenant_id AND tr.mode = d.mode AND tr.sender_name_key = d.payer_key
            AND tr.virtual_account_id <> d.account_id AND tr.paid_at BETWEEN d.window_start AND d.paid_at
        ) AS accounts
        FROM unnest(${integerArray(withPayer.map((d) => d.index))}::int[], ${textArray(withPayer.map((d) => d.tenantId))}::text[], ${textArray(withPayer.map((d) => d.mode))}::text[],
          ${textArray(withPayer.map((d) => d.payerKey))}::text[], ${textArray(withPayer.map((d) => d.accountId))}::text[], ${textArray(withPayer.map((d) => d.paidAt.toISOString()))}::timestamptz[],
          ${textArray(withPayer.map((d) => iso(d.paidAt.getTime() - PAYER_REUSE_WINDOW_MS)))}::timestamptz[])
          AS d(ord, tenant_id, mode, payer_key, account_id, paid_at, window_start)`
      for (const r of rows) reuse.set(r.ord, r.accounts)
      return reuse
    })

  /**
   * What a reversal needs, read only for batches that hold one: the reversed accounts' reversible credits and free
   * customer funds, and their tenants' available balance rows, locked (after the account rows: the ledger's lock order).
   */
  const readReversalInputs = (reversals: ReadonlyArray<HotDeposit & { readonly accountId: string }>) =>
    Effect.gen(function* () {
      const reversible = new Map<string, Array<ReversibleCredit>>()
      const freeKobo = new Map<string, number>()
      const availableKobo = new Map<string, number>()
      if (reversals.length === 0) return { reversible, freeKobo, availableKobo }
      const accounts = byKey(reversals, (d) => d.accountId)
      for (const a of accounts) {
        reversible.set(a.accountId, [])
        freeKobo.set(a.accountId, 0)
      }
      const credits = yield* sql<{ virtualAccountId: string; id: number; reference: string; amountKobo: number; reversedKobo: number; paidAt: Date }>`
        SELECT virtual_account_id, id, reference, amount_kobo, reversed_kobo, paid_at FROM transactions
        WHERE virtual_account_id = ANY(${textArray(accounts.map((a) => a.accountId))}::text[])
          AND kind = 'inflow' AND status = 'Completed' AND reversed_kobo < amount_kobo`
      for (const c of credits) reversible.get(c.virtualAccountId)!.push({ id: c.id, reference: c.reference, amountKobo: c.amountKobo, reversedKobo: c.reversedKobo, paidAtMs: c.paidAt.getTime() })
      const funds = yield* sql<{ account: string; free: number }>`
        SELECT account, -sum(amount_kobo)::bigint AS free FROM ledger_entries
        WHERE tenant_id = ANY(${textArray(accounts.map((a) => a.tenantId))}::text[]) AND mode = ANY(${textArray(accounts.map((a) => a.mode))}::text[])
          AND account = ANY(${textArray(accounts.map((a) => LedgerAccount.customerFunds(a.accountId)))}::text[])
        GROUP BY account`
      for (const f of funds) freeKobo.set(f.account.slice("customer_funds:".length), f.free)
      // Every stripe of the tenant's available balance, locked in order: the write lowers it.
      for (const s of byKey(reversals, (d) => `${d.tenantId}|${d.mode}`)) {
        availableKobo.set(`${s.tenantId}|${s.mode}`, yield* ledger.available({ tenantId: s.tenantId, mode: s.mode as Mode }, true))
      }
      return { reversible, freeKobo, availableKobo }
    })

  /** Everything the decisions read from the table, for `decideBatch`. */
  const readTable = (deposits: ReadonlyArray<HotDeposit>) =>
    Effect.gen(function* () {
      const matched = deposits.filter((d): d is HotDeposit & { readonly accountId: string } => d.accountId !== null)
      const inflows = matched.filter((d) => d.kind === "inflow")
      const { velocity, candidates } = yield* readRiskWindows(inflows)
      const payerAccounts = yield* readPayerReuse(inflows)
      const reversal = yield* readReversalInputs(matched.filter((d) => d.kind === "reversal"))
      return { velocity, candidates, payerAccounts, ...reversal } satisfies TableReads
    })

  /**
   * The batch's writes: ONE statement inserts the transactions, ledger legs, outbox events and their pending rows,
   * moves the accounts' figures (and first activity) and marks the inbox rows; then, only when a reversal took from
   * recorded credits, their reversed amounts; last, the guarded balance rows. Dies when the write does not add up.
   */
  const write = (w: {
    readonly inboxIds: ReadonlyArray<number>
    readonly transactions: ReadonlyArray<TransactionValues>
    readonly journals: ReadonlyArray<Journal>
    readonly events: ReadonlyArray<StagedEvent>
    readonly eventsCreatedAt: string
    readonly accounts: ReadonlyArray<readonly [id: string, amountPaidKobo: number]>
    readonly reversedCredits: ReadonlyArray<{ readonly id: number; readonly reversedKobo: number; readonly status: string }>
  }) =>
    Effect.gen(function* () {
      const markReconciled = sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ANY(${integerArray(w.inboxIds)}::bigint[])`
      if (w.transactions.length === 0) return yield* markReconciled
      const staged = outbox.prepare(w.events, w.eventsCreatedAt)
      const ledgerInsert = yield* ledger.insertMany(w.journals)
      const [written] = yield* sql<{ transactions: number; accounts: number }>`
        WITH t AS (${insertFromJson(sql, "transactions", TRANSACTION_INSERT_COLUMNS, w.transactions)} RETURNING 1),
          ${ledgerInsert ? sql`l AS (${ledgerInsert}),` : sql``}
          a AS (
            UPDATE virtual_accounts va SET amount_paid_kobo = u.amount_paid_kobo, first_activity_at = COALESCE(va.first_activity_at, now())
            FROM unnest(${textArray(w.accounts.map(([id]) => id))}::text[], ${integerArray(w.accounts.map(([, paid]) => paid))}::bigint[]) AS u(id, amount_paid_kobo)
            WHERE va.id = u.id RETURNING 1
          ),
          i AS (${markReconciled}),
          o AS (${staged.insertEvents}),
          p AS (${staged.insertPending("o")})
        SELECT (SELECT count(*) FROM t)::int AS transactions, (SELECT count(*) FROM a)::int AS accounts`
      if (written?.transactions !== w.transactions.length || written.accounts !== w.accounts.length) {
        return yield* Effect.dieMessage(`batched reconcile wrote ${JSON.stringify(written)} for ${w.transactions.length} transactions and ${w.accounts.length} accounts`)
      }
      if (w.reversedCredits.length > 0) {
        yield* sql`
          UPDATE transactions t SET reversed_kobo = u.reversed_kobo, status = u.status
          FROM unnest(${integerArray(w.reversedCredits.map((c) => c.id))}::bigint[], ${integerArray(w.reversedCredits.map((c) => c.reversedKobo))}::bigint[],
            ${textArray(w.reversedCredits.map((c) => c.status))}::text[]) AS u(id, reversed_kobo, status)
          WHERE t.id = u.id`
      }
      yield* ledger.applyGuarded(guardedChanges(w.journals)).pipe(Effect.orDie)
    })

  return { lockAccounts, readTable, write } as const
}
