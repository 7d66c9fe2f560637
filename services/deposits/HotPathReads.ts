import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { integerArray, textArray } from "../../src/db/PgArray.js"
import { GuardedBalance, LedgerAccount } from "../../src/domain/Ledger.js"
import type { Mode } from "../../src/domain/Mode.js"
import type { ReversibleCredit, TableReads } from "../../src/domain/ReconcileBatch.js"
import type { PriorCredit } from "../../src/domain/Reconciliation.js"
import { DUPLICATE_WINDOW_MS } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import type { Ledger } from "../ledger/Ledger.js"
import { direct } from "../../src/db/Direct.js"

/**
 * THE HOT PATH, its reads: what `decideBatch` needs from the table for a deposit batch (risk windows, payer reuse and,
 * for a batch holding a reversal, the credits and balances it takes from). The shapes and why they are so are in
 * HotPath.ts's header; the two files are the whole of the deposit path's SQL.
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

export const byKey = <A>(rows: ReadonlyArray<A>, key: (a: A) => string) =>
  [...new Map(rows.map((r) => [key(r), r])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r)

export const makeHotPathReads = (sql: SqlClient.SqlClient, ledger: Ledger) => {
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
      const rows = yield* direct(sql<{
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
        ) tr`)
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
      const rows = yield* direct(sql<{ ord: number; accounts: ReadonlyArray<string> }>`
        SELECT d.ord, ARRAY(
          SELECT DISTINCT tr.virtual_account_id FROM transactions tr
          WHERE tr.tenant_id = d.tenant_id AND tr.mode = d.mode AND tr.sender_name_key = d.payer_key
            AND tr.virtual_account_id <> d.account_id AND tr.paid_at BETWEEN d.window_start AND d.paid_at
        ) AS accounts
        FROM unnest(${integerArray(withPayer.map((d) => d.index))}::int[], ${textArray(withPayer.map((d) => d.tenantId))}::text[], ${textArray(withPayer.map((d) => d.mode))}::text[],
          ${textArray(withPayer.map((d) => d.payerKey))}::text[], ${textArray(withPayer.map((d) => d.accountId))}::text[], ${textArray(withPayer.map((d) => d.paidAt.toISOString()))}::timestamptz[],
          ${textArray(withPayer.map((d) => iso(d.paidAt.getTime() - PAYER_REUSE_WINDOW_MS)))}::timestamptz[])
          AS d(ord, tenant_id, mode, payer_key, account_id, paid_at, window_start)`)
      for (const r of rows) reuse.set(r.ord, r.accounts)
      return reuse
    })

  /**
   * What the tenants of `scopes` owe for late reversals (their `tenant_receivable` rows), locked in key order: after the
   * account rows, before the available balance's stripes (the ledger's lock order). Read only for the scopes that may
   * owe (`tenants.receivable_modes`, read with the account lock) or that a reversal of the batch belongs to, so a
   * batch of a tenant that owes nothing runs no statement here.
   */
  const readReceivables = (scopes: ReadonlyArray<{ readonly tenantId: string; readonly mode: string }>) =>
    Effect.gen(function* () {
      const receivableKobo = new Map<string, number>()
      if (scopes.length === 0) return receivableKobo
      const ordered = byKey(scopes, (s) => `${s.tenantId}|${s.mode}`)
      for (const s of ordered) receivableKobo.set(`${s.tenantId}|${s.mode}`, 0)
      const rows = yield* direct(sql<{ tenantId: string; mode: string; balanceKobo: number }>`
        SELECT b.tenant_id, b.mode, b.balance_kobo FROM unnest(${textArray(ordered.map((s) => s.tenantId))}::text[], ${textArray(ordered.map((s) => s.mode))}::text[])
          WITH ORDINALITY AS k(tenant_id, mode, ord)
        CROSS JOIN LATERAL (
          SELECT tenant_id, mode, balance_kobo FROM ledger_balances
          WHERE tenant_id = k.tenant_id AND mode = k.mode AND account = ${GuardedBalance.receivable}
          FOR UPDATE
        ) b
        ORDER BY k.ord`)
      for (const r of rows) receivableKobo.set(`${r.tenantId}|${r.mode}`, r.balanceKobo)
      return receivableKobo
    })

  /**
   * What a reversal needs, read only for batches that hold one: the reversed accounts' reversible credits, their
   * deposits' active holds and free customer funds, and their tenants' available balance rows, locked (after the
   * account rows and the receivable rows: the ledger's lock order).
   */
  const readReversalInputs = (reversals: ReadonlyArray<HotDeposit & { readonly accountId: string }>) =>
    Effect.gen(function* () {
      const reversible = new Map<string, Array<ReversibleCredit>>()
      const freeKobo = new Map<string, number>()
      const availableKobo = new Map<string, number>()
      const holds = new Map<string, Map<string, number>>()
      if (reversals.length === 0) return { reversible, freeKobo, availableKobo, holds }
      const accounts = byKey(reversals, (d) => d.accountId)
      for (const a of accounts) {
        reversible.set(a.accountId, [])
        freeKobo.set(a.accountId, 0)
        holds.set(a.accountId, new Map())
      }
      const credits = yield* direct(sql<{ virtualAccountId: string; id: number; reference: string; amountKobo: number; reversedKobo: number; paidAt: Date }>`
        SELECT virtual_account_id, id, reference, amount_kobo, reversed_kobo, paid_at FROM transactions
        WHERE virtual_account_id = ANY(${textArray(accounts.map((a) => a.accountId))}::text[])
          AND kind = 'inflow' AND status = 'Completed' AND reversed_kobo < amount_kobo`)
      for (const c of credits) reversible.get(c.virtualAccountId)!.push({ id: c.id, reference: c.reference, amountKobo: c.amountKobo, reversedKobo: c.reversedKobo, paidAtMs: c.paidAt.getTime() })
      // The holds of those credits: a reversal takes a held deposit's money out of escrow first. (The account rows are
      // locked, and every hold, release and refund locks its account's row first: these cannot change meanwhile.)
      if (credits.length > 0) {
        const held = yield* direct(sql<{ virtualAccountId: string; reference: string; heldKobo: number }>`
          SELECT h.virtual_account_id, h.reference, h.held_kobo FROM unnest(${textArray(credits.map((c) => c.reference))}::text[], ${textArray(credits.map((c) => c.virtualAccountId))}::text[]) AS k(reference, account_id)
          JOIN holds h ON h.reference = k.reference AND h.virtual_account_id = k.account_id
          WHERE h.tenant_id = ANY(${textArray(accounts.map((a) => a.tenantId))}::text[]) AND h.mode = ANY(${textArray(accounts.map((a) => a.mode))}::text[])
            AND h.status = 'Held' AND h.held_kobo > 0`)
        for (const h of held) holds.get(h.virtualAccountId)!.set(h.reference, h.heldKobo)
      }
      const funds = yield* direct(sql<{ account: string; free: number }>`
        SELECT account, -sum(amount_kobo)::bigint AS free FROM ledger_entries
        WHERE tenant_id = ANY(${textArray(accounts.map((a) => a.tenantId))}::text[]) AND mode = ANY(${textArray(accounts.map((a) => a.mode))}::text[])
          AND account = ANY(${textArray(accounts.map((a) => LedgerAccount.customerFunds(a.accountId)))}::text[])
        GROUP BY account`)
      for (const f of funds) freeKobo.set(f.account.slice("customer_funds:".length), f.free)
      // Every stripe of the tenant's available balance, locked in order: the write lowers it.
      for (const s of byKey(reversals, (d) => `${d.tenantId}|${d.mode}`)) {
        availableKobo.set(`${s.tenantId}|${s.mode}`, yield* ledger.available({ tenantId: s.tenantId, mode: s.mode as Mode }, true))
      }
      return { reversible, freeKobo, availableKobo, holds }
    })

  /**
   * Everything the decisions read from the table, for `decideBatch`. `mayOwe`: the scopes (`tenant|mode`) whose tenant
   * flags a receivable (`tenants.receivable_modes`, read with the account lock).
   */
  const readTable = (deposits: ReadonlyArray<HotDeposit>, mayOwe: ReadonlySet<string>) =>
    Effect.gen(function* () {
      const matched = deposits.filter((d): d is HotDeposit & { readonly accountId: string } => d.accountId !== null)
      const inflows = matched.filter((d) => d.kind === "inflow")
      const reversals = matched.filter((d) => d.kind === "reversal")
      const { velocity, candidates } = yield* readRiskWindows(inflows)
      const payerAccounts = yield* readPayerReuse(inflows)
      const receivableKobo = yield* readReceivables([
        ...reversals,
        ...inflows.filter((d) => mayOwe.has(`${d.tenantId}|${d.mode}`))
      ].map((d) => ({ tenantId: d.tenantId, mode: d.mode })))
      const reversal = yield* readReversalInputs(reversals)
      return { velocity, candidates, payerAccounts, receivableKobo, ...reversal } satisfies TableReads
    })

  return { readTable } as const
}
