import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { envelopeOf, Inbox } from "../../services/deposits/Inbox.js"
import { eventBody, assertLedgerInvariant, createAccount, sendSigned, sessionId, testTenant, waitForInboxDrained, waitForTransactions } from "../support/Pipeline.js"
import { accountBalance, NAMES, snapshot } from "../support/Resilience.js"
import { waitFor } from "../support/Wait.js"
import { makeTestApp } from "../support/TestApp.js"
import { DepositBus } from "../../streams/DepositBus.js"

/*
 * The embedded default's bus (no NATS_URL): the same receiver, inbox, workers and sweeper over the in-process queue.
 * Live clock (excludeTestServices).
 */
layer(makeTestApp({ config: { natsUrl: Option.none() } }), { timeout: 120_000, excludeTestServices: true })(
  "deposit pipeline resilience: in-process bus",
  (it) => {
    it.effect("runs the same pipeline: deposits reconcile in order per account, in parallel across accounts", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const bus = yield* DepositBus
        expect(bus.kind).toBe("in-process")
        const t = yield* testTenant
        const accounts = yield* Effect.forEach([0, 1, 2], (a) => createAccount(t.token, `ip-${a}`, NAMES[a]!, 100_000))
        const sent = yield* Effect.forEach(
          accounts,
          (acct, a) =>
            Effect.forEach(Array.from({ length: 10 }), (_, i) =>
              Effect.map(sendSigned(t, { accountNumber: acct.nuban, amountKobo: 15_000 + a * 100 + i, senderName: NAMES[a]! }), (r) => {
                expect(r.body.result).toBe("processed")
                return { reference: r.sessionId, amountKobo: 15_000 + a * 100 + i }
              })
            ),
          { concurrency: "unbounded" }
        )
        yield* waitForTransactions(t.tenantId, 30)
        yield* waitForInboxDrained
        for (const [a, acct] of accounts.entries()) {
          const rows = yield* sql<{ reference: string; amountPaidAfterKobo: number; reconciliationStatus: string }>`
            SELECT reference, amount_paid_after_kobo, reconciliation_status FROM transactions WHERE nuban = ${acct.nuban} AND tenant_id = ${t.tenantId} ORDER BY id`
          expect(rows.map((r) => r.reference)).toEqual(sent[a]!.map((s) => s.reference))
          let running = 0
          expect(rows.map((r) => r.amountPaidAfterKobo)).toEqual(sent[a]!.map((s) => (running += s.amountKobo)))
          // 100 000 expected: underpaid for six payments, then the seventh overpays.
          expect(rows.map((r) => r.reconciliationStatus)).toEqual([...Array(6).fill("Underpaid"), ...Array(4).fill("Overpaid")])
          expect(yield* accountBalance(t.tenantId, `ip-${a}`)).toBe(running)
        }
        yield* assertLedgerInvariant
      })
    )

    it.effect("an inbox row that never reached the bus (crash after insert, before publish) is re-fed by the sweeper", () =>
      Effect.gen(function* () {
        const inbox = yield* Inbox
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "ip-orphan", "Emeka Nwosu")
        const body = eventBody(t, { accountNumber: acct.nuban, amountKobo: 77_700, senderName: "NWOSU EMEKA" })
        const envelope = yield* inbox.insert({
          tenantId: t.tenantId, mode: "test", provider: "sandbox", providerReference: body.sessionId, kind: "inflow",
          accountNumber: acct.nuban, payload: body
        })
        expect(envelope).toBeDefined()
        yield* waitForTransactions(t.tenantId, 1)
        expect(yield* accountBalance(t.tenantId, "ip-orphan")).toBe(77_700)
        yield* assertLedgerInvariant
      })
    )

    it.effect("a poison message is recorded and dropped, not retried; deposits keep flowing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const bus = yield* DepositBus
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "ip-poison", "Ibrahim Musa")
        const ghostRef = sessionId()
        yield* bus.publish([{ inboxId: 987_654_321, tenantId: t.tenantId, mode: "test", provider: "sandbox", reference: ghostRef, accountNumber: acct.nuban }])
        const ok = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 12_345, senderName: "MUSA IBRAHIM" })
        expect(ok.body.result).toBe("processed")
        yield* waitForTransactions(t.tenantId, 1)
        const poison = yield* waitFor(
          "the poison row",
          sql<{ source: string; reason: string }>`SELECT source, reason FROM poison_messages WHERE payload LIKE ${`%${ghostRef}%`}`,
          { until: (rows) => rows.length > 0, timeoutMs: 30_000 }
        )
        expect(poison).toHaveLength(1)
        expect(poison[0]!.source).toBe("deposits:in-process")
        expect(poison[0]!.reason).toContain("no inbox row 987654321")
        yield* Effect.sleep("1500 millis")
        const again = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM poison_messages WHERE payload LIKE ${`%${ghostRef}%`}`
        expect(Number(again[0]!.n)).toBe(1)
        expect(yield* accountBalance(t.tenantId, "ip-poison")).toBe(12_345)
        yield* assertLedgerInvariant
      })
    )

    it.effect("a replay of the whole inbox through the bus changes no balance and creates no transaction", () =>
      Effect.gen(function* () {
        const inbox = yield* Inbox
        const bus = yield* DepositBus
        yield* waitForInboxDrained
        const before = yield* snapshot
        const rows = yield* inbox.fromId(1, 100_000)
        expect(rows.length).toBe(before.inbox)
        yield* bus.publish(rows.map(envelopeOf))
        yield* Effect.sleep("2 seconds")
        expect(yield* snapshot).toEqual(before)
        yield* assertLedgerInvariant
      })
    )
  }
)
