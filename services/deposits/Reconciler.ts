import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { integerArray } from "../../src/db/PgArray.js"
import { currentTraceparent, tracingOn } from "../../src/TraceContext.js"
import { JournalId } from "../../src/domain/Ledger.js"
import { type AccountState, type BatchDeposit, decideBatch } from "../../src/domain/ReconcileBatch.js"
import { normalisePayerName } from "../../src/domain/Reconciliation.js"
import type { DepositEnvelope } from "../../streams/DepositBus.js"
import { Ledger } from "../ledger/Ledger.js"
import { Outbox } from "../outbox/Outbox.js"
import type { VirtualAccountRow } from "../accounts/VirtualAccounts.js"
import { depositEvents, insertedTransactionRow, type LockedAccount, type ReconcileResult, transactionRowOf } from "./DepositRows.js"
import { makeHotPath } from "./HotPath.js"
import type { InboxRow } from "./Inbox.js"

export type { ReconcileResult }

type Recorded = InboxRow & { readonly recorded: boolean }

const accountKey = (tenantId: string, mode: string, nuban: string) => `${tenantId}|${mode}|${nuban}`
const refKey = (r: InboxRow) => `${r.tenantId}|${r.mode}|${r.providerReference}`

/**
 * Applies deposits in ONE transaction per batch (a single deposit is a batch of one): lock the accounts, skip what is
 * already recorded, read what the decisions need, decide (`decideBatch`, pure), then write the transactions, balanced
 * ledger journals, running figures, inbox marks and outbox events, and the guarded balances. The statements are all in
 * `HotPath.ts`; the decisions are all in src/domain/ReconcileBatch.ts.
 */
export class Reconciler extends Effect.Service<Reconciler>()("services/deposits/Reconciler", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const hot = makeHotPath(sql, ledger, outbox)
    const traced = yield* tracingOn

    /** `traceparent` (tracing on only): the batch's span, which the staged events carry to their consumers. */
    const applyLocked = (inboxes: ReadonlyArray<InboxRow>, recorded: ReadonlySet<string>, traceparent: string | undefined) =>
      Effect.gen(function* () {
        const results = new Array<ReconcileResult>(inboxes.length)
        const locked = yield* hot.lockAccounts(
          inboxes.map((r) => ({ tenantId: r.tenantId, mode: r.mode, nuban: r.accountNumber })),
          inboxes.some((r) => r.kind === "reversal")
        )
        const byNuban = new Map(locked.map((a) => [accountKey(a.tenantId, a.mode, a.nuban!), a]))
        const seen = new Set(recorded)
        const todo: Array<{ readonly index: number; readonly inbox: InboxRow; readonly account: LockedAccount | undefined; readonly deposit: BatchDeposit }> = []
        inboxes.forEach((inbox, index) => {
          if (seen.has(refKey(inbox))) return void (results[index] = "already-reconciled")
          seen.add(refKey(inbox))
          const e = inbox.payload
          const account = byNuban.get(accountKey(inbox.tenantId, inbox.mode, inbox.accountNumber))
          todo.push({
            index, inbox, account,
            deposit: {
              kind: inbox.kind, reference: inbox.providerReference, scopeKey: `${inbox.tenantId}|${inbox.mode}`, accountId: account?.id ?? null,
              amountKobo: e.amountKobo, senderName: e.senderName, senderAccountNumber: e.senderAccountNumber,
              payerKey: e.senderName ? normalisePayerName(e.senderName) : "", paidAtMs: Date.parse(e.paidAt), reversedReference: e.reversedSessionId
            }
          })
        })
        const inboxIds = inboxes.map((r) => r.id)
        if (todo.length === 0) {
          yield* hot.write({ inboxIds, transactions: [], journals: [], events: [], eventsCreatedAt: "", accounts: [], reversedCredits: [] })
          return results
        }
        // Tenants that owe for late reversals (their flag came with the account lock): only their receivable is read.
        const owing = new Set(locked.filter((a) => a.receivableOpen).map((a) => `${a.tenantId}|${a.mode}`))
        const table = yield* hot.readTable(todo.map((t, i) => ({
          index: i, kind: t.deposit.kind, tenantId: t.inbox.tenantId, mode: t.inbox.mode, accountId: t.deposit.accountId,
          amountKobo: t.deposit.amountKobo, paidAt: new Date(t.deposit.paidAtMs), payerKey: t.deposit.payerKey
        })), owing)
        const states = new Map<string, AccountState>(locked.map((a) => [a.id, {
          id: a.id, expectedAmountKobo: a.expectedAmountKobo, amountPaidKobo: a.amountPaidKobo, customerName: a.name, riskThreshold: a.riskThreshold
        }]))
        const batch = decideBatch(todo.map((t) => t.deposit), states, table)

        // What Postgres will assign (reconciled_at, a first activity) is the transaction's now(), which the lock read
        // returned; so the events are built before the write and staged in it.
        const txNow = locked[0] ? new Date(locked[0].txNowMs) : (yield* sql<{ now: Date }>`SELECT now() AS now`)[0]!.now
        const paidSoFar = new Map(locked.map((a) => [a.id, a.amountPaidKobo]))
        const transactions = todo.map((t, i) => {
          const d = batch.decided[i]!
          return transactionRowOf(t.inbox, t.account, d.outcome, new Date(t.deposit.paidAtMs), { reversedKobo: d.reversedKoboAfter, status: d.statusAfter })
        })
        const events = todo.flatMap((t, i) => {
          const { outcome } = batch.decided[i]!
          let accountAfter: VirtualAccountRow | undefined
          if (t.account) {
            paidSoFar.set(t.account.id, outcome.amountPaidAfterKobo!)
            const active = batch.accounts.has(t.account.id) ? t.account.firstActivityAt ?? txNow : t.account.firstActivityAt
            accountAfter = { ...t.account, amountPaidKobo: outcome.amountPaidAfterKobo!, firstActivityAt: active }
          }
          // The event shows the deposit as decided, before any later reversal of the same batch took from it.
          const stored = transactions[i]!
          const asDecided = stored.reversedKobo === 0 ? stored : { ...stored, reversedKobo: 0, status: outcome.status }
          return depositEvents(t.inbox, t.account, outcome, insertedTransactionRow(asDecided, outcome, txNow), accountAfter)
        })
        yield* hot.write({
          inboxIds,
          transactions,
          journals: todo.map((t, i) => ({
            tenantId: t.inbox.tenantId, mode: t.inbox.mode, journalId: JournalId.deposit(t.inbox.providerReference), legs: batch.decided[i]!.outcome.legs
          })),
          events,
          eventsCreatedAt: txNow.toISOString(),
          traceparent,
          accounts: [...batch.accounts],
          reversedCredits: batch.reversedCredits,
          holdsTaken: batch.holdsTaken,
          receivables: batch.receivables,
          owing
        })
        for (const t of todo) results[t.index] = "reconciled"
        return results
      })

    /**
     * A batch of deliveries; the results line up with the envelopes. The inbox rows are read first, outside the
     * transaction, with whether each reference already has a transaction (a probe of the unique key per row): should
     * another reconciler record one meanwhile, the batch's insert fails on that key and the caller retries it.
     *
     * `fence`, given, runs first INSIDE the transaction (before any account is locked); if it fails, nothing commits. The
     * partitioned reconciler passes its lease check there (streams/PartitionLeases.ts), so a process that has lost a
     * partition can never apply one of its deposits, however late it wakes up.
     */
    const reconcileBatch = Effect.fn("Reconciler.reconcileBatch")(function* <E = never>(envelopes: ReadonlyArray<DepositEnvelope>, fence?: Effect.Effect<void, E>) {
      if (envelopes.length === 0) return [] as ReadonlyArray<ReconcileResult>
      const rows = yield* sql<Recorded>`
        SELECT ie.id, ie.tenant_id, ie.mode, ie.provider, ie.provider_reference, ie.kind, ie.account_number, ie.payload, ie.reconciled_at,
          (SELECT true FROM transactions t WHERE t.reference = ie.provider_reference AND t.tenant_id = ie.tenant_id AND t.mode = ie.mode LIMIT 1) IS NOT NULL AS recorded
        FROM inbound_events ie WHERE ie.id = ANY(${integerArray([...new Set(envelopes.map((e) => e.inboxId))])}::bigint[])`
      const byId = new Map(rows.map((r) => [r.id, r]))
      const results = new Array<ReconcileResult>(envelopes.length)
      const todo: Array<{ readonly index: number; readonly inbox: Recorded }> = []
      const taken = new Set<number>()
      envelopes.forEach((e, index) => {
        const inbox = byId.get(e.inboxId)
        if (!inbox || inbox.tenantId !== e.tenantId || inbox.mode !== e.mode) results[index] = "missing-inbox-row"
        else if (inbox.reconciledAt !== null || taken.has(inbox.id)) results[index] = "already-reconciled"
        else {
          taken.add(inbox.id)
          todo.push({ index, inbox })
        }
      })
      if (todo.length > 0) {
        const recorded = new Set(todo.filter((t) => t.inbox.recorded).map((t) => refKey(t.inbox)))
        const apply = applyLocked(todo.map((t) => t.inbox), recorded, traced ? yield* currentTraceparent : undefined)
        const outcomes = yield* sql.withTransaction(fence === undefined ? apply : Effect.zipRight(fence, apply))
        todo.forEach((t, k) => (results[t.index] = outcomes[k]!))
      }
      return results as ReadonlyArray<ReconcileResult>
    })

    /** One deposit: a batch of one (`fence` as for reconcileBatch). */
    const reconcile = <E = never>(envelope: DepositEnvelope, fence?: Effect.Effect<void, E>) => Effect.map(reconcileBatch([envelope], fence), (r) => r[0]!)

    return { reconcile, reconcileBatch } as const
  })
}) {}
