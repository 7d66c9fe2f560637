import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Inbox } from "../../services/deposits/Inbox.js"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { Tenants } from "../../services/access/Tenants.js"
import { toTransaction, TRANSACTION_COLUMNS, type TransactionRow } from "../../services/deposits/Transactions.js"
import type { Transaction } from "../../src/contract/Deposits.js"
import { VirtualAccounts } from "../../services/accounts/VirtualAccounts.js"
import type { DepositEnvelope } from "../../streams/DepositBus.js"
import { assertLedgerInvariant, sessionId } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"

/** A small deterministic generator, so a failure can be replayed. */
const lcg = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const CUSTOMERS = ["John Adeyemi", "Ngozi Eze", "Aisha Bello", "Emeka Nwosu", "Yetunde Ogunleye", "Ibrahim Musa"] as const
const PAYERS = ["ADEYEMI JOHN O", "NGOZI EZE", "BELLO AISHA", "CHUKWU PETER", "OKONKWO JAMES", "ADEBAYO TUNDE", null] as const
const SENDER_ACCOUNTS = ["0010246780", "0000014579", "6106424552", null, null] as const
const AMOUNTS = [10_000, 25_000, 50_000, 75_000] as const

interface Planned {
  readonly event: "transfer.inbound" | "transfer.reversal"
  readonly account: number // -1: an unknown NUBAN
  readonly amountKobo: number
  readonly senderName: string | null
  readonly senderAccountNumber: string | null
  readonly paidAtMs: number
}

const plan = (n: number, seed: number): ReadonlyArray<Planned> => {
  const rnd = lcg(seed)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(rnd() * xs.length)]!
  const base = Date.parse("2026-11-20T08:00:00Z")
  let clock = base
  return Array.from({ length: n }, (_, i) => {
    // Bursts within the velocity window, and some events paid earlier than the previous one.
    clock += rnd() < 0.7 ? Math.floor(rnd() * 90_000) : Math.floor(rnd() * 3 * 3_600_000)
    const paidAtMs = clock - (rnd() < 0.15 ? Math.floor(rnd() * 20 * 60_000) : 0)
    const reversal = i > (2 * n) / 3 && rnd() < 0.15
    return {
      event: reversal ? "transfer.reversal" : "transfer.inbound",
      account: rnd() < 0.05 ? -1 : Math.floor(rnd() * CUSTOMERS.length),
      amountKobo: rnd() < 0.8 ? pick(AMOUNTS) : 1 + Math.floor(rnd() * 90_000),
      senderName: pick(PAYERS),
      senderAccountNumber: pick(SENDER_ACCOUNTS),
      paidAtMs
    }
  })
}

/*
 * The reconciler's batch path (several deposits in one transaction, one statement per step) must decide exactly what
 * applying the same deposits one by one decides: the same classification, risk score and reasons (velocity, payer
 * reuse and duplicate windows include the earlier deposits of the same batch), amounts and running figures.
 */
layer(makeTestApp({ workers: false }), { timeout: 180_000, excludeTestServices: true })("reconciling in batches", (it) => {
  it.effect("decides exactly what one-by-one reconciliation decides, repeats and reversals included", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tenants = yield* Tenants
      const accounts = yield* VirtualAccounts
      const inbox = yield* Inbox
      const reconciler = yield* Reconciler
      const events = plan(160, 20261121)

      const setUp = (name: string) =>
        Effect.gen(function* () {
          const tenantId = yield* sql.withTransaction(tenants.create(name))
          const creds = yield* tenants.providerFor(tenantId, "test")
          const nubans: Array<string> = []
          for (const [i, customer] of CUSTOMERS.entries()) {
            const { account } = yield* accounts.create(tenantId, "test", {
              accountRef: `acct-${i}`, name: customer, ...(i % 3 === 2 ? {} : { expectedAmountKobo: (120_000 + i * 40_000) as never })
            })
            nubans.push(account.nuban)
          }
          const envelopes: Array<DepositEnvelope> = []
          const references: Array<string> = []
          for (const e of events) {
            const reference = sessionId()
            const accountNumber = e.account === -1 ? "0000014579" : nubans[e.account]!
            const envelope = yield* inbox.insert({
              tenantId, mode: "test", provider: creds.provider, providerReference: reference,
              kind: e.event === "transfer.inbound" ? "inflow" : "reversal", accountNumber,
              payload: {
                event: e.event, merchantId: creds.merchantId, sessionId: reference, accountNumber, amountKobo: e.amountKobo,
                senderName: e.senderName, senderAccountNumber: e.senderAccountNumber, senderBankCode: "058", narration: null,
                paidAt: new Date(e.paidAtMs).toISOString(),
                reversedSessionId: e.event === "transfer.reversal" && references.length > 0 ? references[Math.floor(references.length / 2)]! : null
              }
            })
            envelopes.push(envelope!)
            references.push(reference)
          }
          return { tenantId, envelopes, references }
        })

      const one = yield* setUp("One By One")
      const batched = yield* setUp("Batched")

      const oneResults: Array<string> = []
      for (const e of one.envelopes) oneResults.push(yield* reconciler.reconcile(e))

      const rnd = lcg(7)
      const batchedResults: Array<string> = []
      for (let i = 0; i < batched.envelopes.length; ) {
        const size = 1 + Math.floor(rnd() * 24)
        const chunk = batched.envelopes.slice(i, i + size)
        // A redelivery of a message inside the same batch, and of one an earlier batch already applied.
        const extra = [chunk[0]!, ...(i > 0 ? [batched.envelopes[i - 1]!] : [])]
        const results = yield* reconciler.reconcileBatch([...chunk, ...extra])
        expect(results.slice(chunk.length)).toEqual(extra.map(() => "already-reconciled"))
        batchedResults.push(...results.slice(0, chunk.length))
        i += chunk.length
      }
      expect(batchedResults).toEqual(oneResults)
      expect(oneResults.filter((r) => r === "reconciled")).toHaveLength(events.length)

      const outcome = (tenantId: string, references: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const rows = yield* sql<Record<string, unknown> & { reference: string }>`
            SELECT reference, account_ref, kind, amount_kobo, applied_kobo, reversed_kobo, surplus_kobo, status, reconciliation_status,
              risk_score, risk_reasons, sender_name_key, amount_paid_after_kobo, payment_state_after
            FROM transactions WHERE tenant_id = ${tenantId}`
          const byRef = new Map(rows.map(({ reference, ...rest }) => [reference, rest]))
          const figures = yield* sql`SELECT account_ref, amount_paid_kobo, first_activity_at IS NOT NULL AS active FROM virtual_accounts
            WHERE tenant_id = ${tenantId} ORDER BY account_ref`
          const events = yield* sql`SELECT event_type, count(*)::int AS n FROM outbox WHERE tenant_id = ${tenantId} GROUP BY event_type ORDER BY event_type`
          const ledger = yield* sql`SELECT regexp_replace(account, ':.*', '') AS kind, sum(amount_kobo)::bigint AS total FROM ledger_entries
            WHERE tenant_id = ${tenantId} GROUP BY 1 ORDER BY 1`
          const pending = yield* sql`SELECT count(*)::int AS n FROM inbound_events WHERE tenant_id = ${tenantId} AND reconciled_at IS NULL`
          return { transactions: references.map((r) => byRef.get(r)), figures, events, ledger, pending }
        })

      const a = yield* outcome(one.tenantId, one.references)
      const b = yield* outcome(batched.tenantId, batched.references)
      expect(a.transactions.every((t) => t !== undefined)).toBe(true)
      // The scenario reaches what it is meant to: duplicates, velocity, payer reuse, held deposits, unmatched, reversals.
      const seen = (f: (t: any) => boolean) => a.transactions.filter(f).length
      expect(seen((t) => t.reconciliationStatus === "Duplicate")).toBeGreaterThan(0)
      expect(seen((t) => t.status === "PendingReview" && t.reconciliationStatus !== "Unmatched")).toBeGreaterThan(0)
      expect(seen((t) => t.reconciliationStatus === "Unmatched")).toBeGreaterThan(0)
      expect(seen((t) => t.reconciliationStatus === "Reversal")).toBeGreaterThan(0)
      expect(seen((t) => JSON.stringify(t.riskReasons).includes("velocity"))).toBeGreaterThan(0)
      expect(seen((t) => JSON.stringify(t.riskReasons).includes("payer_name_reuse"))).toBeGreaterThan(0)

      b.transactions.forEach((t, i) => expect(t, `deposit ${i} (${JSON.stringify(events[i])})`).toEqual(a.transactions[i]))
      expect(b.figures).toEqual(a.figures)
      expect(b.events).toEqual(a.events)
      expect(b.ledger).toEqual(a.ledger)
      expect(b.pending).toEqual([{ n: 0 }])

      // The batched path builds each event's transaction from what it wrote (only id and reconciled_at come back):
      // it must be exactly what a read of the stored row gives, on both paths. (A credit a later reversal took back
      // has changed since its event was staged, so those are left out.)
      for (const tenantId of [one.tenantId, batched.tenantId]) {
        const stored = yield* sql<TransactionRow>`SELECT ${sql.literal(TRANSACTION_COLUMNS)} FROM transactions WHERE tenant_id = ${tenantId}`
        const unchanged = new Map(stored.filter((r) => r.reversedKobo === 0).map((r) => [r.reference, toTransaction(r)]))
        const staged = yield* sql<{ envelope: { data: { transaction: Transaction } } }>`
          SELECT envelope FROM outbox WHERE tenant_id = ${tenantId} AND event_type = 'deposit.reconciled'`
        expect(staged).toHaveLength(events.length)
        const compared = staged.filter(({ envelope }) => unchanged.has(envelope.data.transaction.reference))
        expect(compared.length).toBeGreaterThan(events.length / 2)
        for (const { envelope } of compared) expect(envelope.data.transaction).toEqual(unchanged.get(envelope.data.transaction.reference))
      }
      yield* assertLedgerInvariant
    }))
})
