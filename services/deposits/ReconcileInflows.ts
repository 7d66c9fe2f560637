import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/Config.js"
import { type AccountContext, decideInflow, type DepositOutcome } from "../../src/domain/DepositDecision.js"
import { DUPLICATE_WINDOW_MS, isDuplicateInflow, normalisePayerName } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import type { Ledger } from "../Ledger.js"
import type { Outbox } from "../Outbox.js"
import { toTransaction } from "../Transactions.js"
import { toVirtualAccount, type VirtualAccountRow } from "../VirtualAccounts.js"
import type { InboxRow } from "./Inbox.js"

export type ReconcileResult = "reconciled" | "already-reconciled" | "missing-inbox-row"

export type LockedAccount = VirtualAccountRow & { readonly riskThreshold: number }

export const ACCOUNT_COLUMNS = `va.id, va.tenant_id, va.mode, va.account_ref, va.customer_id, va.request_fingerprint, va.status,
  false AS lease_expired, va.nuban, va.bank_code, va.bank_name, va.account_name, c.name, c.email, c.phone, va.expected_amount_kobo,
  va.expiry_date_utc, va.sub_merchant_ref, va.amount_paid_kobo, va.first_activity_at, va.created_at`

/** The transactions row for one decided deposit; shared by the single and the batched path. */
export const transactionRowOf = (inbox: InboxRow, account: { readonly id: string; readonly accountRef: string } | undefined | null, outcome: DepositOutcome, paidAt: Date) => {
  const event = inbox.payload
  return {
    tenantId: inbox.tenantId, mode: inbox.mode, provider: inbox.provider, reference: inbox.providerReference, inboundEventId: inbox.id,
    virtualAccountId: account?.id ?? null, accountRef: account?.accountRef ?? null, nuban: inbox.accountNumber,
    kind: inbox.kind, amountKobo: event.amountKobo, appliedKobo: outcome.appliedKobo, surplusKobo: outcome.surplusKobo,
    status: outcome.status, reconciliationStatus: outcome.reconciliationStatus, riskScore: outcome.risk.score,
    riskReasons: JSON.stringify(outcome.risk.reasons), senderName: event.senderName,
    senderNameKey: event.senderName ? normalisePayerName(event.senderName) || null : null,
    senderAccountNumber: event.senderAccountNumber, senderBankCode: event.senderBankCode, narration: event.narration,
    paidAt, reversedReference: event.reversedSessionId, amountPaidAfterKobo: outcome.amountPaidAfterKobo, paymentStateAfter: outcome.paymentStateAfter
  }
}

/**
 * Several inflows in ONE transaction: lock every account (in key order), read the risk windows (a statement each for
 * the whole batch), decide, then ONE statement that inserts the transactions, ledger legs and outbox events, moves
 * the running figures and marks the inbox rows. `recorded` holds the inbox ids whose reference already has a
 * transaction (the caller read that with the rows). The decisions are the same as applying the deposits one after
 * another in this order: each one sees the figures, prior inflows and payer history the earlier ones left behind.
 */
export const reconcileInflowsLocked = (sql: SqlClient.SqlClient, ledger: Ledger, outbox: Outbox) =>
(inboxes: ReadonlyArray<InboxRow>, recorded: ReadonlySet<number>) =>
  Effect.gen(function* () {
    const results = new Array<ReconcileResult>(inboxes.length)
    const accountKey = (tenantId: string, mode: Mode, nuban: string) => `${tenantId}|${mode}|${nuban}`
    const refKey = (r: InboxRow) => `${r.tenantId}|${r.mode}|${r.providerReference}`
    // Locked one index probe per key (a plain join hashed a scan of every account), in key order: every batch
    // takes its locks in the same order, so two batches that share accounts wait for each other, never deadlock.
    const keys = [...new Map(inboxes.map((r) => [accountKey(r.tenantId, r.mode, r.accountNumber), r])).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => r)
    const locked = yield* sql<LockedAccount & { readonly txNow: Date }>`
      SELECT v.*, now() AS tx_now
      FROM unnest(${keys.map((k) => k.tenantId)}::text[], ${keys.map((k) => k.mode)}::text[], ${keys.map((k) => k.accountNumber)}::text[])
        WITH ORDINALITY AS k(tenant_id, mode, nuban, ord)
      CROSS JOIN LATERAL (
        SELECT ${sql.literal(ACCOUNT_COLUMNS)}, t.risk_threshold
        FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id JOIN tenants t ON t.id = va.tenant_id
        WHERE va.nuban = k.nuban AND va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.status = 'Active'
        FOR UPDATE OF va
      ) v
      ORDER BY k.ord`
    const accounts = new Map(locked.map((a) => [accountKey(a.tenantId, a.mode, a.nuban!), a]))
    const recordedRefs = new Set(inboxes.filter((r) => recorded.has(r.id)).map(refKey))

    // What each new deposit will insert, known before any decision: its account, payer key and time.
    interface Pending {
      readonly index: number
      readonly inbox: InboxRow
      readonly account: LockedAccount | undefined
      readonly paidAt: Date
      readonly payerKey: string
    }
    const pending: Array<Pending> = []
    inboxes.forEach((inbox, index) => {
      if (recordedRefs.has(refKey(inbox))) {
        results[index] = "already-reconciled"
        return
      }
      recordedRefs.add(refKey(inbox))
      const event = inbox.payload
      pending.push({
        index, inbox, account: accounts.get(accountKey(inbox.tenantId, inbox.mode, inbox.accountNumber)),
        paidAt: new Date(event.paidAt), payerKey: event.senderName ? normalisePayerName(event.senderName) : ""
      })
    })

    // Prior credited inflows of the batch's accounts (the duplicate and velocity windows), read once.
    const matched = pending.filter((p) => p.account !== undefined)
    type Prior = { reference: string; amountKobo: number; senderAccountNumber: string | null; senderName: string | null; paidAt: Date }
    const priorByAccount = new Map<string, Array<Prior>>()
    if (matched.length > 0) {
      // One window per account, [first paidAt - window, last paidAt + window], each read as an index range on
      // (account, paid_at). LATERAL with OFFSET 0 keeps that shape whatever the table statistics say: with one
      // window for the whole batch and `IN (...)`, or a plain join, the planner scanned the whole table for every
      // batch (early in a burst it believes the table empty), so each batch cost more than the last.
      const windows = new Map<string, { from: number; to: number }>()
      for (const p of matched) {
        const t = p.paidAt.getTime()
        const w = windows.get(p.account!.id)
        if (w) {
          w.from = Math.min(w.from, t - DUPLICATE_WINDOW_MS)
          w.to = Math.max(w.to, t + DUPLICATE_WINDOW_MS)
        } else windows.set(p.account!.id, { from: t - DUPLICATE_WINDOW_MS, to: t + DUPLICATE_WINDOW_MS })
      }
      const ids = [...windows.keys()]
      const rows = yield* sql<Prior & { virtualAccountId: string }>`
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
    }

    // Payer-name reuse: distinct other accounts paid by the same payer in the window, counting what the batch
    // inserts before each deposit (one statement for the batch).
    const reuse = new Map<number, number>()
    const withPayer = matched.filter((p) => p.payerKey !== "")
    if (withPayer.length > 0) {
      // Every row the batch inserts that carries a payer key, in batch order (unmatched ones have no account id).
      const inserted = pending.filter((p) => p.payerKey !== "")
      const ord = inserted.map((p) => p.index)
      const rows = yield* sql<{ ord: number; n: number }>`
        WITH b AS (
          SELECT * FROM unnest(${ord}::int[], ${inserted.map((p) => p.inbox.tenantId)}::text[], ${inserted.map((p) => p.inbox.mode)}::text[],
            ${inserted.map((p) => p.payerKey)}::text[], ${inserted.map((p) => p.account?.id ?? null)}::text[], ${inserted.map((p) => p.paidAt)}::timestamptz[],
            ${inserted.map((p) => new Date(p.paidAt.getTime() - PAYER_REUSE_WINDOW_MS))}::timestamptz[])
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
    }

    // The decisions, in batch order, each seeing what the earlier ones did.
    const figures = new Map(locked.map((a) => [a.id, a.amountPaidKobo]))
    const decided = pending.map((p) => {
      const event = p.inbox.payload
      const account = p.account
      const context: AccountContext | null = account
        ? { id: account.id, figures: { expectedAmountKobo: account.expectedAmountKobo, amountPaidKobo: figures.get(account.id)! }, customerName: account.name }
        : null
      let inputs = { duplicate: false, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0 }
      if (account) {
        const t = p.paidAt.getTime()
        const prior = (priorByAccount.get(account.id) ?? []).filter((q) => Math.abs(q.paidAt.getTime() - t) <= DUPLICATE_WINDOW_MS)
        inputs = {
          duplicate: isDuplicateInflow(
            { reference: event.sessionId, amountKobo: event.amountKobo, senderAccountNumber: event.senderAccountNumber, senderName: event.senderName, paidAtMs: t },
            prior.map((q) => ({ ...q, paidAtMs: q.paidAt.getTime() }))
          ),
          inflowsToAccountInWindow: prior.filter((q) => q.paidAt.getTime() >= t - VELOCITY_WINDOW_MS && q.paidAt.getTime() <= t).length,
          accountsPaidByPayerInWindow: p.payerKey === "" ? 0 : reuse.get(p.index) ?? 0
        }
      }
      const outcome = decideInflow({ account: context, amountKobo: event.amountKobo, senderName: event.senderName, riskThreshold: account?.riskThreshold ?? 100, ...inputs })
      if (account) {
        // Every inflow is recorded Completed or PendingReview: both count as prior credits for the next ones.
        const list = priorByAccount.get(account.id) ?? []
        list.push({ reference: event.sessionId, amountKobo: event.amountKobo, senderAccountNumber: event.senderAccountNumber, senderName: event.senderName, paidAt: p.paidAt })
        priorByAccount.set(account.id, list)
        figures.set(account.id, outcome.amountPaidAfterKobo ?? figures.get(account.id)!)
      }
      return { ...p, outcome, amountPaidAfterKobo: account ? figures.get(account.id)! : null }
    })
    if (decided.length === 0) {
      yield* sql`UPDATE inbound_events SET reconciled_at = COALESCE(reconciled_at, now()), published_at = COALESCE(published_at, now()) WHERE id IN ${sql.in(inboxes.map((r) => r.id))}`
      return results
    }

    // Everything the batch writes goes in ONE statement (a WITH query per table), so it is one round trip. What
    // Postgres would assign is known already: reconciled_at and a first activity default to now(), the transaction's
    // start, which the lock query returned; so the events are built before the write and staged in it.
    const txNow = locked[0]?.txNow ?? (yield* sql<{ now: Date }>`SELECT now() AS now`)[0]!.now
    const values = decided.map(({ inbox, account, outcome, paidAt }) => transactionRowOf(inbox, account, outcome, paidAt))
    const touched = [...new Map(decided.filter((d) => d.account).map((d) => [d.account!.id, figures.get(d.account!.id)!])).entries()]
    const staged = outbox.prepare(decided.flatMap(({ inbox, account, outcome, amountPaidAfterKobo }, i) => {
      const v = values[i]!
      const transaction = toTransaction({
        id: 0, tenantId: v.tenantId, mode: v.mode, reference: v.reference, virtualAccountId: v.virtualAccountId, accountRef: v.accountRef,
        nuban: v.nuban, kind: v.kind, amountKobo: v.amountKobo, appliedKobo: v.appliedKobo, reversedKobo: 0, surplusKobo: v.surplusKobo,
        status: v.status, reconciliationStatus: v.reconciliationStatus, riskScore: v.riskScore, riskReasons: outcome.risk.reasons,
        senderName: v.senderName, senderAccountNumber: v.senderAccountNumber, senderBankCode: v.senderBankCode, narration: v.narration,
        paidAt: v.paidAt, reconciledAt: txNow, reversedReference: v.reversedReference,
        reviewDecision: null, reviewNote: null, reviewedBy: null, reviewedAt: null
      })
      const accountAfter: VirtualAccountRow | undefined = account
        ? { ...account, amountPaidKobo: amountPaidAfterKobo!, firstActivityAt: account.firstActivityAt ?? txNow }
        : undefined
      const data = { transaction, account: accountAfter ? toVirtualAccount(accountAfter) : null, risk: outcome.risk }
      const subjectKey = account?.accountRef ?? inbox.accountNumber
      return [
        { tenantId: inbox.tenantId, mode: inbox.mode, type: "deposit.reconciled", subjectKey, data },
        ...(outcome.status === "PendingReview" ? [{ tenantId: inbox.tenantId, mode: inbox.mode, type: "transaction.review_required", subjectKey, data }] : [])
      ]
    }), txNow.toISOString())
    const ledgerInsert = yield* ledger.insertMany(decided.map(({ inbox, outcome }) => ({ tenantId: inbox.tenantId, mode: inbox.mode, journalId: `txn:${inbox.providerReference}`, legs: outcome.legs })))
    const [written] = yield* sql<{ transactions: number; accounts: number }>`
      WITH t AS (INSERT INTO transactions ${sql.insert(values)} RETURNING 1),
        ${ledgerInsert ? sql`l AS (${ledgerInsert}),` : sql``}
        a AS (
          UPDATE virtual_accounts va SET amount_paid_kobo = u.amount_paid_kobo, first_activity_at = COALESCE(va.first_activity_at, now())
          FROM unnest(${touched.map(([id]) => id)}::text[], ${touched.map(([, paid]) => paid)}::bigint[]) AS u(id, amount_paid_kobo)
          WHERE va.id = u.id RETURNING 1
        ),
        i AS (UPDATE inbound_events SET reconciled_at = COALESCE(reconciled_at, now()), published_at = COALESCE(published_at, now()) WHERE id IN ${sql.in(inboxes.map((r) => r.id))}),
        o AS (${staged.insertEvents}),
        p AS (${staged.insertPending("o")})
      SELECT (SELECT count(*) FROM t)::int AS transactions, (SELECT count(*) FROM a)::int AS accounts`
    if (written?.transactions !== values.length || written.accounts !== touched.length) {
      return yield* Effect.dieMessage(`batched reconcile wrote ${JSON.stringify(written)} for ${values.length} transactions and ${touched.length} accounts`)
    }
    for (const d of decided) results[d.index] = "reconciled"
    return results
  })
