import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { DUPLICATE_WINDOW_MS } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import { integerArray, textArray } from "../../src/db/PgArray.js"

/** A deposit of a batch as the risk reads see it: its place in the batch, account (if matched), time and payer. */
export interface WindowedDeposit {
  readonly index: number
  readonly inbox: { readonly tenantId: string; readonly mode: Mode }
  readonly account: { readonly id: string } | undefined
  readonly paidAt: Date
  /** The normalised payer name; "" when there is none. */
  readonly payerKey: string
}

/**
 * Times go to Postgres as ISO text: a Date in an array parameter is formatted by the pg driver in JavaScript, element by
 * element (its `dateToString` was a visible share of the reconciler's profile); `toISOString` is native.
 */
const iso = (ms: number) => new Date(ms).toISOString()

export interface PriorInflow {
  readonly reference: string
  readonly amountKobo: number
  readonly senderAccountNumber: string | null
  readonly senderName: string | null
  readonly paidAt: Date
}

/**
 * What the table holds for the batch's duplicate and velocity checks, in one read:
 * - `velocity`, by batch index: the account's credited inflows in [paidAt - velocity window, paidAt] (a count per
 *   deposit, each an index range on (account, paid_at));
 * - `candidates`, by account: its credited inflows of an amount some deposit of the batch to it carries, within the
 *   duplicate window of those deposits. Only those can be a duplicate's earlier copy (the amounts must be equal).
 * The batch's own earlier deposits are the caller's to add to both. Before, this read returned every credited inflow
 * of each account in its 24-hour window and the checks filtered them in JavaScript; on accounts paid often, reading
 * and decoding those rows was a tenth of the worker's CPU. LATERAL with OFFSET 0 keeps each lookup an index range
 * whatever the table statistics say (early in a burst the planner believes the table empty and scanned all of it).
 */
export const readRiskWindows = (sql: SqlClient.SqlClient, deposits: ReadonlyArray<WindowedDeposit & { readonly amountKobo: number }>) =>
  Effect.gen(function* () {
    const velocity = new Map<number, number>()
    const candidates = new Map<string, Array<PriorInflow>>()
    const matched = deposits.filter((d) => d.account !== undefined)
    if (matched.length === 0) return { velocity, candidates }
    const windows = new Map<string, { accountId: string; amountKobo: number; from: number; to: number }>()
    for (const d of matched) {
      const t = d.paidAt.getTime()
      const key = `${d.account!.id}|${d.amountKobo}`
      const w = windows.get(key)
      if (w) {
        w.from = Math.min(w.from, t - DUPLICATE_WINDOW_MS)
        w.to = Math.max(w.to, t + DUPLICATE_WINDOW_MS)
      } else windows.set(key, { accountId: d.account!.id, amountKobo: d.amountKobo, from: t - DUPLICATE_WINDOW_MS, to: t + DUPLICATE_WINDOW_MS })
    }
    const ws = [...windows.values()]
    const rows = yield* sql<PriorInflow & { readonly ord: number | null; readonly velocity: number | null; readonly virtualAccountId: string | null }>`
      SELECT d.ord, (
          SELECT count(*) FROM transactions t
          WHERE t.virtual_account_id = d.account_id AND t.paid_at BETWEEN d.from_at AND d.paid_at
            AND t.kind = 'inflow' AND t.status IN ('Completed', 'PendingReview')
        )::int AS velocity,
        NULL::text AS virtual_account_id, NULL::text AS reference, NULL::bigint AS amount_kobo, NULL::text AS sender_account_number,
        NULL::text AS sender_name, NULL::timestamptz AS paid_at
      FROM unnest(${integerArray(matched.map((d) => d.index))}::int[], ${textArray(matched.map((d) => d.account!.id))}::text[],
        ${textArray(matched.map((d) => iso(d.paidAt.getTime() - VELOCITY_WINDOW_MS)))}::timestamptz[], ${textArray(matched.map((d) => d.paidAt.toISOString()))}::timestamptz[])
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
        list.push(r)
        candidates.set(r.virtualAccountId!, list)
      }
    }
    return { velocity, candidates }
  })

/**
 * Payer-name reuse, by batch index: distinct other accounts paid by the same payer in the window, counting what the
 * batch inserts before each deposit. `deposits` are all the batch inserts, in order. The table is read once for the
 * batch (the other accounts each matched deposit's payer paid in its window, an index range on the payer key); the
 * batch's own earlier deposits are added here. (They were a self-join of the batch in SQL, quadratic in its size:
 * 4 ms of Postgres for a batch of 200, a tenth of its CPU per deposit.)
 */
export const readPayerReuse = (sql: SqlClient.SqlClient, deposits: ReadonlyArray<WindowedDeposit>) =>
  Effect.gen(function* () {
    const reuse = new Map<number, number>()
    const matched = deposits.filter((d) => d.account !== undefined && d.payerKey !== "")
    if (matched.length === 0) return reuse
    const rows = yield* sql<{ ord: number; accounts: ReadonlyArray<string> }>`
      SELECT d.ord, ARRAY(
        SELECT DISTINCT tr.virtual_account_id FROM transactions tr
        WHERE tr.tenant_id = d.tenant_id AND tr.mode = d.mode AND tr.sender_name_key = d.payer_key
          AND tr.virtual_account_id <> d.account_id AND tr.paid_at BETWEEN d.window_start AND d.paid_at
      ) AS accounts
      FROM unnest(${integerArray(matched.map((d) => d.index))}::int[], ${textArray(matched.map((d) => d.inbox.tenantId))}::text[], ${textArray(matched.map((d) => d.inbox.mode))}::text[],
        ${textArray(matched.map((d) => d.payerKey))}::text[], ${textArray(matched.map((d) => d.account!.id))}::text[], ${textArray(matched.map((d) => d.paidAt.toISOString()))}::timestamptz[],
        ${textArray(matched.map((d) => iso(d.paidAt.getTime() - PAYER_REUSE_WINDOW_MS)))}::timestamptz[])
        AS d(ord, tenant_id, mode, payer_key, account_id, paid_at, window_start)`
    const fromTable = new Map(rows.map((r) => [r.ord, r.accounts]))
    // The batch's deposits with a payer key so far, by (tenant, mode, payer): the "earlier" of each next one.
    const earlier = new Map<string, Array<WindowedDeposit>>()
    for (const d of deposits) {
      if (d.payerKey === "") continue
      const key = `${d.inbox.tenantId}|${d.inbox.mode}|${d.payerKey}`
      let before = earlier.get(key)
      if (before === undefined) earlier.set(key, (before = []))
      if (d.account !== undefined) {
        const t = d.paidAt.getTime()
        const accounts = new Set(fromTable.get(d.index) ?? [])
        for (const e of before) {
          const te = e.paidAt.getTime()
          if (e.account !== undefined && e.account.id !== d.account.id && te >= t - PAYER_REUSE_WINDOW_MS && te <= t) accounts.add(e.account.id)
        }
        reuse.set(d.index, accounts.size)
      }
      before.push(d)
    }
    return reuse
  })
