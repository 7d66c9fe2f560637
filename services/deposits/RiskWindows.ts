import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/Config.js"
import { DUPLICATE_WINDOW_MS } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS } from "../../src/domain/Risk.js"

/** A deposit of a batch as the risk reads see it: its place in the batch, account (if matched), time and payer. */
export interface WindowedDeposit {
  readonly index: number
  readonly inbox: { readonly tenantId: string; readonly mode: Mode }
  readonly account: { readonly id: string } | undefined
  readonly paidAt: Date
  /** The normalised payer name; "" when there is none. */
  readonly payerKey: string
}

export interface PriorInflow {
  readonly reference: string
  readonly amountKobo: number
  readonly senderAccountNumber: string | null
  readonly senderName: string | null
  readonly paidAt: Date
}

/**
 * Prior credited inflows of the batch's accounts (the duplicate and velocity windows), by account id, in one read.
 * One window per account, [first paidAt - window, last paidAt + window], each read as an index range on
 * (account, paid_at). LATERAL with OFFSET 0 keeps that shape whatever the table statistics say: with one window for
 * the whole batch and `IN (...)`, or a plain join, the planner scanned the whole table for every batch (early in a
 * burst it believes the table empty), so each batch cost more than the last.
 */
export const readPriorInflows = (sql: SqlClient.SqlClient, deposits: ReadonlyArray<WindowedDeposit>) =>
  Effect.gen(function* () {
    const priorByAccount = new Map<string, Array<PriorInflow>>()
    const windows = new Map<string, { from: number; to: number }>()
    for (const d of deposits) {
      if (d.account === undefined) continue
      const t = d.paidAt.getTime()
      const w = windows.get(d.account.id)
      if (w) {
        w.from = Math.min(w.from, t - DUPLICATE_WINDOW_MS)
        w.to = Math.max(w.to, t + DUPLICATE_WINDOW_MS)
      } else windows.set(d.account.id, { from: t - DUPLICATE_WINDOW_MS, to: t + DUPLICATE_WINDOW_MS })
    }
    if (windows.size === 0) return priorByAccount
    const ids = [...windows.keys()]
    const rows = yield* sql<PriorInflow & { virtualAccountId: string }>`
      SELECT tr.* FROM unnest(${ids}::text[], ${ids.map((id) => new Date(windows.get(id)!.from))}::timestamptz[], ${ids.map((id) => new Date(windows.get(id)!.to))}::timestamptz[])
        AS w(account_id, from_at, to_at)
      CROSS JOIN LATERAL (
        SELECT t.virtual_account_id, t.reference, t.amount_kobo, t.sender_account_number, t.sender_name, t.paid_at FROM transactions t
        WHERE t.virtual_account_id = w.account_id AND t.paid_at BETWEEN w.from_at AND w.to_at
          AND t.kind = 'inflow' AND t.status IN ('Completed', 'PendingReview')
        OFFSET 0
      ) tr`
    for (const r of rows) {
      const list = priorByAccount.get(r.virtualAccountId) ?? []
      list.push(r)
      priorByAccount.set(r.virtualAccountId, list)
    }
    return priorByAccount
  })

/**
 * Payer-name reuse, by batch index: distinct other accounts paid by the same payer in the window, counting what the
 * batch inserts before each deposit (one statement for the batch). `deposits` are all the batch inserts, in order.
 */
export const readPayerReuse = (sql: SqlClient.SqlClient, deposits: ReadonlyArray<WindowedDeposit>) =>
  Effect.gen(function* () {
    const reuse = new Map<number, number>()
    if (!deposits.some((d) => d.account !== undefined && d.payerKey !== "")) return reuse
    // Every row the batch inserts that carries a payer key, in batch order (unmatched ones have no account id).
    const inserted = deposits.filter((d) => d.payerKey !== "")
    const rows = yield* sql<{ ord: number; n: number }>`
      WITH b AS (
        SELECT * FROM unnest(${inserted.map((d) => d.index)}::int[], ${inserted.map((d) => d.inbox.tenantId)}::text[], ${inserted.map((d) => d.inbox.mode)}::text[],
          ${inserted.map((d) => d.payerKey)}::text[], ${inserted.map((d) => d.account?.id ?? null)}::text[], ${inserted.map((d) => d.paidAt)}::timestamptz[],
          ${inserted.map((d) => new Date(d.paidAt.getTime() - PAYER_REUSE_WINDOW_MS))}::timestamptz[])
          AS b(ord, tenant_id, mode, payer_key, account_id, paid_at, window_start)
      )
      SELECT d.ord, (
        SELECT count(DISTINCT x.account_id) FROM (
          SELECT tr.virtual_account_id AS account_id FROM transactions tr
          WHERE tr.tenant_id = d.tenant_id AND tr.mode = d.mode AND tr.sender_name_key = d.payer_key
            AND tr.virtual_account_id <> d.account_id AND tr.paid_at BETWEEN d.window_start AND d.paid_at
          UNION ALL
          SELECT e.account_id FROM b e
          WHERE e.ord < d.ord AND e.tenant_id = d.tenant_id AND e.mode = d.mode AND e.payer_key = d.payer_key
            AND e.account_id <> d.account_id AND e.paid_at BETWEEN d.window_start AND d.paid_at
        ) x
      )::bigint AS n
      FROM b d WHERE d.account_id IS NOT NULL`
    for (const r of rows) reuse.set(r.ord, r.n)
    return reuse
  })
