import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { insertFromJson } from "../../src/db/InsertFromJson.js"
import { type AccountContext, decideInflow } from "../../src/domain/DepositDecision.js"
import { isDuplicateInflow, normalisePayerName } from "../../src/domain/Reconciliation.js"
import { VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import { integerArray, textArray } from "../../src/db/PgArray.js"
import type { Ledger } from "../Ledger.js"
import type { Outbox } from "../Outbox.js"
import type { VirtualAccountRow } from "../VirtualAccounts.js"
import {
  ACCOUNT_COLUMNS,
  depositEvents,
  INBOX_RECONCILED,
  insertedTransactionRow,
  type LockedAccount,
  type ReconcileResult,
  TRANSACTION_INSERT_COLUMNS,
  transactionRowOf
} from "./DepositRows.js"
import type { InboxRow } from "./Inbox.js"
import { type PriorInflow, readPayerReuse, readRiskWindows } from "./RiskWindows.js"

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
    // The transaction's now() with each row as whole milliseconds (an int8, exact: extract gives numeric): the same
    // instant a timestamp column reads back as, without parsing a timestamp per account.
    const locked = yield* sql<LockedAccount & { readonly txNowMs: number }>`
      SELECT v.*, floor(extract(epoch FROM now()) * 1000)::int8 AS tx_now_ms
      FROM unnest(${textArray(keys.map((k) => k.tenantId))}::text[], ${textArray(keys.map((k) => k.mode))}::text[], ${textArray(keys.map((k) => k.accountNumber))}::text[])
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
      readonly amountKobo: number
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
        paidAt: new Date(event.paidAt), amountKobo: event.amountKobo, payerKey: event.senderName ? normalisePayerName(event.senderName) : ""
      })
    })

    // The risk windows of the batch's accounts and payers, one read each for the whole batch.
    const { candidates, velocity } = yield* readRiskWindows(sql, pending)
    const reuse = yield* readPayerReuse(sql, pending)

    // The decisions, in batch order, each seeing what the earlier ones did.
    const figures = new Map(locked.map((a) => [a.id, a.amountPaidKobo]))
    const earlier = new Map<string, Array<PriorInflow>>()
    const decided = pending.map((p) => {
      const event = p.inbox.payload
      const account = p.account
      const context: AccountContext | null = account
        ? { id: account.id, figures: { expectedAmountKobo: account.expectedAmountKobo, amountPaidKobo: figures.get(account.id)! }, customerName: account.name }
        : null
      let inputs = { duplicate: false, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0 }
      if (account) {
        const t = p.paidAt.getTime()
        const batch = earlier.get(account.id) ?? []
        // The table's candidates (same amount) and the batch's earlier deposits (any amount): isDuplicateInflow
        // compares amounts, times and payers itself.
        const prior = [...(candidates.get(account.id) ?? []), ...batch]
        inputs = {
          duplicate: isDuplicateInflow(
            { reference: event.sessionId, amountKobo: event.amountKobo, senderAccountNumber: event.senderAccountNumber, senderName: event.senderName, paidAtMs: t },
            prior.map((q) => ({ ...q, paidAtMs: q.paidAt.getTime() }))
          ),
          inflowsToAccountInWindow: (velocity.get(p.index) ?? 0) +
            batch.filter((q) => q.paidAt.getTime() >= t - VELOCITY_WINDOW_MS && q.paidAt.getTime() <= t).length,
          accountsPaidByPayerInWindow: p.payerKey === "" ? 0 : reuse.get(p.index) ?? 0
        }
      }
      const outcome = decideInflow({ account: context, amountKobo: event.amountKobo, senderName: event.senderName, riskThreshold: account?.riskThreshold ?? 100, ...inputs })
      if (account) {
        // Every inflow is recorded Completed or PendingReview: both count as prior credits for the next ones.
        const list = earlier.get(account.id) ?? []
        list.push({ reference: event.sessionId, amountKobo: event.amountKobo, senderAccountNumber: event.senderAccountNumber, senderName: event.senderName, paidAt: p.paidAt })
        earlier.set(account.id, list)
        figures.set(account.id, outcome.amountPaidAfterKobo ?? figures.get(account.id)!)
      }
      return { ...p, outcome, amountPaidAfterKobo: account ? figures.get(account.id)! : null }
    })
    // Every inbox row of the batch is marked, whether it was decided here or already recorded.
    const markReconciled = sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ANY(${integerArray(inboxes.map((r) => r.id))}::bigint[])`
    if (decided.length === 0) {
      yield* markReconciled
      return results
    }

    // Everything the batch writes goes in ONE statement (a WITH query per table), so it is one round trip. What
    // Postgres would assign is known already: reconciled_at and a first activity default to now(), the transaction's
    // start, which the lock query returned; so the events are built before the write and staged in it.
    const txNow = locked[0] ? new Date(locked[0].txNowMs) : (yield* sql<{ now: Date }>`SELECT now() AS now`)[0]!.now
    const values = decided.map(({ inbox, account, outcome, paidAt }) => transactionRowOf(inbox, account, outcome, paidAt))
    const touched = [...new Map(decided.filter((d) => d.account).map((d) => [d.account!.id, figures.get(d.account!.id)!])).entries()]
    const staged = outbox.prepare(decided.flatMap(({ inbox, account, outcome, amountPaidAfterKobo }, i) => {
      const accountAfter: VirtualAccountRow | undefined = account
        ? { ...account, amountPaidKobo: amountPaidAfterKobo!, firstActivityAt: account.firstActivityAt ?? txNow }
        : undefined
      return depositEvents(inbox, account, outcome, insertedTransactionRow(values[i]!, outcome, txNow), accountAfter)
    }), txNow.toISOString())
    const ledgerInsert = yield* ledger.insertMany(decided.map(({ inbox, outcome }) => ({ tenantId: inbox.tenantId, mode: inbox.mode, journalId: `txn:${inbox.providerReference}`, legs: outcome.legs })))
    const [written] = yield* sql<{ transactions: number; accounts: number }>`
      WITH t AS (${insertFromJson(sql, "transactions", TRANSACTION_INSERT_COLUMNS, values)} RETURNING 1),
        ${ledgerInsert ? sql`l AS (${ledgerInsert}),` : sql``}
        a AS (
          UPDATE virtual_accounts va SET amount_paid_kobo = u.amount_paid_kobo, first_activity_at = COALESCE(va.first_activity_at, now())
          FROM unnest(${textArray(touched.map(([id]) => id))}::text[], ${integerArray(touched.map(([, paid]) => paid))}::bigint[]) AS u(id, amount_paid_kobo)
          WHERE va.id = u.id RETURNING 1
        ),
        i AS (${markReconciled}),
        o AS (${staged.insertEvents}),
        p AS (${staged.insertPending("o")})
      SELECT (SELECT count(*) FROM t)::int AS transactions, (SELECT count(*) FROM a)::int AS accounts`
    if (written?.transactions !== values.length || written.accounts !== touched.length) {
      return yield* Effect.dieMessage(`batched reconcile wrote ${JSON.stringify(written)} for ${values.length} transactions and ${touched.length} accounts`)
    }
    for (const d of decided) results[d.index] = "reconciled"
    return results
  })
