import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { type AccountContext, decideInflow, decideReversalOutcome, type DepositOutcome } from "../../src/domain/DepositDecision.js"
import { DUPLICATE_WINDOW_MS, isDuplicateInflow, normalisePayerName } from "../../src/domain/Reconciliation.js"
import { PAYER_REUSE_WINDOW_MS, VELOCITY_WINDOW_MS } from "../../src/domain/Risk.js"
import { integerArray } from "../../src/db/PgArray.js"
import type { DepositEnvelope } from "../../streams/DepositBus.js"
import { Ledger } from "../Ledger.js"
import { Outbox } from "../Outbox.js"
import { TRANSACTION_COLUMNS, type TransactionRow } from "../Transactions.js"
import type { VirtualAccountRow } from "../VirtualAccounts.js"
import type { InboxRow } from "./Inbox.js"
import { ACCOUNT_COLUMNS, depositEvents, INBOX_RECONCILED, type LockedAccount, type ReconcileResult, transactionRowOf } from "./DepositRows.js"
import { reconcileInflowsLocked } from "./ReconcileInflows.js"
import { INFLOW_EVENT } from "./SandboxEvent.js"

export type { ReconcileResult }

/**
 * Applies one deposit in ONE transaction: lock the account, skip a reference already recorded, classify and score,
 * record the transaction, post balanced ledger legs, move the running figures, mark the inbox row, stage events.
 */
export class Reconciler extends Effect.Service<Reconciler>()("services/deposits/Reconciler", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const reconcileInflows = reconcileInflowsLocked(sql, ledger, outbox)

    const lockAccount = (tenantId: string, mode: Mode, nuban: string) =>
      sql<LockedAccount>`SELECT ${sql.literal(ACCOUNT_COLUMNS)}, t.risk_threshold
        FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id JOIN tenants t ON t.id = va.tenant_id
        WHERE va.tenant_id = ${tenantId} AND va.mode = ${mode} AND va.nuban = ${nuban} AND va.status = 'Active'
        FOR UPDATE OF va`.pipe(Effect.map((rows) => rows[0]))

    const riskInputs = (account: LockedAccount, event: InboxRow["payload"], paidAt: Date) =>
      Effect.gen(function* () {
        const windowStart = new Date(paidAt.getTime() - DUPLICATE_WINDOW_MS)
        const windowEnd = new Date(paidAt.getTime() + DUPLICATE_WINDOW_MS)
        const prior = yield* sql<{ reference: string; amountKobo: number; senderAccountNumber: string | null; senderName: string | null; paidAt: Date }>`
          SELECT reference, amount_kobo, sender_account_number, sender_name, paid_at FROM transactions
          WHERE virtual_account_id = ${account.id} AND kind = 'inflow' AND status IN ('Completed', 'PendingReview')
            AND paid_at BETWEEN ${windowStart} AND ${windowEnd}`
        const velocityStart = new Date(paidAt.getTime() - VELOCITY_WINDOW_MS)
        const inflowsToAccountInWindow = prior.filter((p) => p.paidAt >= velocityStart && p.paidAt <= paidAt).length
        const payerKey = event.senderName ? normalisePayerName(event.senderName) : ""
        const reuse = payerKey === ""
          ? [{ n: 0 }]
          : yield* sql<{ n: number }>`
              SELECT count(DISTINCT virtual_account_id)::bigint AS n FROM transactions
              WHERE tenant_id = ${account.tenantId} AND mode = ${account.mode} AND sender_name_key = ${payerKey}
                AND virtual_account_id <> ${account.id}
                AND paid_at BETWEEN ${new Date(paidAt.getTime() - PAYER_REUSE_WINDOW_MS)} AND ${paidAt}`
        const duplicate = isDuplicateInflow(
          { reference: event.sessionId, amountKobo: event.amountKobo, senderAccountNumber: event.senderAccountNumber, senderName: event.senderName, paidAtMs: paidAt.getTime() },
          prior.map((p) => ({ ...p, paidAtMs: p.paidAt.getTime() }))
        )
        return { duplicate, inflowsToAccountInWindow, accountsPaidByPayerInWindow: reuse[0]!.n }
      })

    /** Marks the inflows a reversal takes back, newest first (the named session first). */
    const applyReversalToCredits = (accountId: string, reversedSessionId: string | null, amountKobo: number) =>
      Effect.gen(function* () {
        if (amountKobo === 0) return
        const credits = yield* sql<{ id: number; amountKobo: number; reversedKobo: number }>`
          SELECT id, amount_kobo, reversed_kobo FROM transactions
          WHERE virtual_account_id = ${accountId} AND kind = 'inflow' AND status = 'Completed' AND reversed_kobo < amount_kobo
          ORDER BY (reference = ${reversedSessionId ?? ""}) DESC, paid_at DESC, id DESC`
        let remaining = amountKobo
        for (const c of credits) {
          if (remaining === 0) break
          const take = Math.min(remaining, c.amountKobo - c.reversedKobo)
          remaining -= take
          yield* sql`UPDATE transactions SET reversed_kobo = reversed_kobo + ${take},
            status = CASE WHEN reversed_kobo + ${take} = amount_kobo THEN 'Reversed' ELSE status END WHERE id = ${c.id}`
        }
      })

    const reconcileLocked = (inbox: InboxRow) =>
      Effect.gen(function* () {
        const event = inbox.payload
        const paidAt = new Date(event.paidAt)
        const account = yield* lockAccount(inbox.tenantId, inbox.mode, inbox.accountNumber)
        const existing = yield* sql`SELECT 1 FROM transactions WHERE tenant_id = ${inbox.tenantId} AND mode = ${inbox.mode} AND reference = ${inbox.providerReference}`
        if (existing.length > 0) {
          yield* sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ${inbox.id}`
          return "already-reconciled" as const
        }
        const context: AccountContext | null = account
          ? { id: account.id, figures: { expectedAmountKobo: account.expectedAmountKobo, amountPaidKobo: account.amountPaidKobo }, customerName: account.name }
          : null
        let outcome: DepositOutcome
        if (event.event === INFLOW_EVENT) {
          const inputs = account
            ? yield* riskInputs(account, event, paidAt)
            : { duplicate: false, inflowsToAccountInWindow: 0, accountsPaidByPayerInWindow: 0 }
          outcome = decideInflow({ account: context, amountKobo: event.amountKobo, senderName: event.senderName, riskThreshold: account?.riskThreshold ?? 100, ...inputs })
        } else {
          outcome = decideReversalOutcome(context, event.amountKobo)
          if (account) yield* applyReversalToCredits(account.id, event.reversedSessionId, outcome.appliedKobo)
        }
        const [row] = yield* sql<TransactionRow>`INSERT INTO transactions ${sql.insert(transactionRowOf(inbox, account, outcome, paidAt))} RETURNING ${sql.literal(TRANSACTION_COLUMNS)}`
        yield* ledger.post(inbox.tenantId, inbox.mode, `txn:${inbox.providerReference}`, outcome.legs)
        let accountAfter: VirtualAccountRow | undefined
        if (account) {
          const [updated] = yield* sql<{ amountPaidKobo: number; firstActivityAt: Date }>`
            UPDATE virtual_accounts SET amount_paid_kobo = ${outcome.amountPaidAfterKobo ?? account.amountPaidKobo},
              first_activity_at = COALESCE(first_activity_at, now())
            WHERE id = ${account.id} RETURNING amount_paid_kobo, first_activity_at`
          accountAfter = { ...account, ...updated! }
        }
        yield* sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ${inbox.id}`
        yield* outbox.stage(depositEvents(inbox, account, outcome, row!, accountAfter))
        return "reconciled" as const
      })

    /**
     * A batch of deliveries in ONE transaction (one commit, one statement per step for inflows); the results line up
     * with the envelopes. A batch holding a reversal applies its deposits one after another in that transaction, since
     * a reversal changes the credits the later deposits' risk windows read.
     */
    const reconcileBatch = Effect.fn("Reconciler.reconcileBatch")(function* (envelopes: ReadonlyArray<DepositEnvelope>) {
      if (envelopes.length === 0) return [] as ReadonlyArray<ReconcileResult>
      // With each row, whether its reference already has a transaction: a probe of the unique key per row (a scalar
      // subquery; EXISTS here became one hashed scan of the whole table). Read outside the transaction: should another
      // reconciler record one meanwhile, the batch's insert fails on that key and its deposits go one by one.
      const rows = yield* sql<InboxRow & { readonly recorded: boolean }>`
        SELECT ie.id, ie.tenant_id, ie.mode, ie.provider, ie.provider_reference, ie.kind, ie.account_number, ie.payload, ie.reconciled_at,
          (SELECT true FROM transactions t WHERE t.reference = ie.provider_reference AND t.tenant_id = ie.tenant_id AND t.mode = ie.mode LIMIT 1) IS NOT NULL AS recorded
        FROM inbound_events ie WHERE ie.id = ANY(${integerArray([...new Set(envelopes.map((e) => e.inboxId))])}::bigint[])`
      const byId = new Map(rows.map((r) => [r.id, r]))
      const results = new Array<ReconcileResult>(envelopes.length)
      const todo: Array<{ readonly index: number; readonly inbox: InboxRow & { readonly recorded: boolean } }> = []
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
        const outcomes: ReadonlyArray<ReconcileResult> = yield* sql.withTransaction(
          todo.every((t) => t.inbox.kind === "inflow")
            ? reconcileInflows(todo.map((t) => t.inbox), new Set(todo.filter((t) => t.inbox.recorded).map((t) => t.inbox.id)))
            : Effect.forEach(todo, (t) => reconcileLocked(t.inbox))
        )
        todo.forEach((t, k) => (results[t.index] = outcomes[k]!))
      }
      return results as ReadonlyArray<ReconcileResult>
    })

    const reconcile = Effect.fn("Reconciler.reconcile")(function* (envelope: DepositEnvelope) {
      const rows = yield* sql<InboxRow>`
        SELECT id, tenant_id, mode, provider, provider_reference, kind, account_number, payload, reconciled_at
        FROM inbound_events WHERE id = ${envelope.inboxId} AND tenant_id = ${envelope.tenantId} AND mode = ${envelope.mode}`
      const inbox = rows[0]
      if (!inbox) return "missing-inbox-row" as const
      if (inbox.reconciledAt !== null) return "already-reconciled" as const
      return yield* sql.withTransaction(reconcileLocked(inbox))
    })

    return { reconcile, reconcileBatch } as const
  })
}) {}
