import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import * as crypto from "node:crypto"
import { Reconciler } from "../../services/deposits/Reconciler.js"
import { decodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { replayFrom } from "../../streams/Consume.js"
import { publish } from "../../streams/Publish.js"
import { DEFAULT_DEPOSIT_PARTITIONS } from "../../src/Config.js"
import { depositSubject, streamNames } from "../../streams/Topology.js"
import { assertLedgerInvariant, createAccount, sendSigned, sessionId, testTenant, waitForInboxDrained, waitForTransactions } from "../support/Pipeline.js"
import { accountBalance, appTopology, NAMES, reconcilerInfo, snapshot, TestNatsLive, waitForConsumerIdle } from "../support/Resilience.js"
import { waitFor } from "../support/Wait.js"
import { makeTestApp } from "../support/TestApp.js"

/*
 * The deposit pipeline under stress on real Postgres and the shared nats-server (JetStream, random per-run prefix,
 * streams deleted when the app stops). Live clock throughout (excludeTestServices): the sweeper, publish timeouts and
 * redelivery backoffs must really elapse. Every case ends with the ledger invariant.
 */
layer(makeTestApp().pipe(Layer.provideMerge(TestNatsLive)), { timeout: 120_000, excludeTestServices: true })(
  "deposit pipeline resilience (JetStream)",
  (it) => {
    it.effect("the same signed event sent 50 times concurrently: one processed, 49 duplicate, one inbox row, one transaction", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "dup-50", "John Adeyemi", 500_000)
        const session = sessionId()
        const paidAt = new Date().toISOString()
        const answers = yield* Effect.forEach(
          Array.from({ length: 50 }),
          () => sendSigned(t, { accountNumber: acct.nuban, amountKobo: 125_000, sessionId: session, paidAt }),
          { concurrency: "unbounded" }
        )
        expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200))
        const results = answers.map((a) => a.body.result as string)
        expect(results.filter((r) => r === "processed")).toHaveLength(1)
        expect(results.filter((r) => r === "duplicate")).toHaveLength(49)
        expect(answers.every((a) => a.body.reference === session)).toBe(true)

        yield* waitForTransactions(t.tenantId, 1)
        yield* waitForInboxDrained
        yield* waitForConsumerIdle(yield* appTopology)
        const inbox = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM inbound_events WHERE tenant_id = ${t.tenantId}`
        const txns = yield* sql<{ reference: string; amountKobo: number; status: string }>`
          SELECT reference, amount_kobo, status FROM transactions WHERE tenant_id = ${t.tenantId}`
        expect(Number(inbox[0]!.n)).toBe(1)
        expect(txns).toEqual([{ reference: session, amountKobo: 125_000, status: "Completed" }])
        expect(yield* accountBalance(t.tenantId, "dup-50")).toBe(125_000)
        yield* assertLedgerInvariant
      })
    )

    it.effect("per-account order under concurrency: 10 accounts x 20 deposits give each account its running sum in send order", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const t = yield* testTenant
        // Open accounts (Credited), each paid by its own customer's name: no review hold can break the running sum.
        const accounts = yield* Effect.forEach(NAMES, (name, a) => createAccount(t.token, `order-${a}`, name), { concurrency: 4 })
        const sent = yield* Effect.forEach(
          accounts,
          (acct, a) =>
            // In order within an account (each answer awaited), in parallel across accounts.
            Effect.forEach(Array.from({ length: 20 }), (_, i) =>
              Effect.gen(function* () {
                const amountKobo = 10_000 + a * 1_000 + i * 37 + 1
                const r = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo, senderName: NAMES[a]! })
                expect(r.status).toBe(200)
                expect(r.body.result).toBe("processed")
                return { reference: r.sessionId, amountKobo }
              })
            ),
          { concurrency: "unbounded" }
        )
        yield* waitForTransactions(t.tenantId, 200)
        yield* waitForInboxDrained

        for (const [a, acct] of accounts.entries()) {
          const rows = yield* sql<{ reference: string; amountKobo: number; amountPaidAfterKobo: number; status: string }>`
            SELECT reference, amount_kobo, amount_paid_after_kobo, status FROM transactions
            WHERE tenant_id = ${t.tenantId} AND nuban = ${acct.nuban} ORDER BY id`
          const expected = sent[a]!
          expect(rows.map((r) => r.reference)).toEqual(expected.map((s) => s.reference))
          expect(rows.every((r) => r.status === "Completed")).toBe(true)
          let running = 0
          const runningSums = expected.map((s) => (running += s.amountKobo))
          expect(rows.map((r) => r.amountPaidAfterKobo)).toEqual(runningSums)
          for (let i = 1; i < rows.length; i++) expect(rows[i]!.amountPaidAfterKobo).toBeGreaterThan(rows[i - 1]!.amountPaidAfterKobo)
          expect(yield* accountBalance(t.tenantId, `order-${a}`)).toBe(running)
        }
        yield* assertLedgerInvariant
      })
    )

    it.effect("a poison message on the deposit subject is recorded and terminated, never redelivered; deposits keep flowing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const topology = yield* appTopology
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "after-poison", "Ngozi Eze")

        const garbage = yield* publish(depositSubject(topology, "garbage", "test", "0000000000", DEFAULT_DEPOSIT_PARTITIONS), "{not json", `poison-${crypto.randomUUID()}`)
        // Decodes, but points at no inbox row: also poison (a retry cannot make the row appear).
        const ghost = yield* publish(
          depositSubject(topology, t.tenantId, "test", acct.nuban, DEFAULT_DEPOSIT_PARTITIONS),
          JSON.stringify({ inboxId: 987_654_321, tenantId: t.tenantId, mode: "test", provider: "sandbox", reference: "ghost-ref", accountNumber: acct.nuban }),
          `ghost-${crypto.randomUUID()}`
        )
        const ok = yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 42_000, senderName: "NGOZI EZE" })
        expect(ok.body.result).toBe("processed")

        const poison = yield* waitFor(
          "2 poison rows",
          sql<{ source: string; streamSeq: number; reason: string; payload: string }>`
            SELECT source, stream_seq, reason, payload FROM poison_messages WHERE stream_seq IN ${sql.in([garbage.seq, ghost.seq])} ORDER BY stream_seq`,
          { until: (rows) => rows.length === 2, timeoutMs: 30_000 }
        )
        expect(poison[0]).toMatchObject({ source: "deposits:jetstream", streamSeq: garbage.seq, reason: "undecodable deposit message", payload: "{not json" })
        expect(poison[1]).toMatchObject({ source: "deposits:jetstream", streamSeq: ghost.seq })
        expect(poison[1]!.reason).toContain("no inbox row 987654321")

        yield* waitForTransactions(t.tenantId, 1)
        expect(yield* accountBalance(t.tenantId, "after-poison")).toBe(42_000)
        // Terminated means acknowledged for good: nothing pending, nothing awaiting ack, nothing redelivered.
        const info = yield* waitForConsumerIdle(topology)
        expect(info.num_redelivered).toBe(0)
        expect(info.ack_floor.stream_seq).toBeGreaterThanOrEqual(Math.max(garbage.seq, ghost.seq))
        yield* Effect.sleep("1500 millis")
        const later = yield* reconcilerInfo(topology)
        expect(later.num_redelivered).toBe(0)
        expect(later.num_ack_pending).toBe(0)
        const again = yield* sql<{ n: number }>`SELECT count(*)::bigint AS n FROM poison_messages WHERE stream_seq IN ${sql.in([garbage.seq, ghost.seq])}`
        expect(Number(again[0]!.n)).toBe(2)
        yield* assertLedgerInvariant
      })
    )

    it.effect("a replay of the whole DEPOSITS stream changes no balance and creates no transaction", () =>
      Effect.gen(function* () {
        const reconciler = yield* Reconciler
        const topology = yield* appTopology
        const stream = streamNames(topology).deposits
        // A fresh scenario of its own on top of everything the earlier cases left in the stream.
        const t = yield* testTenant
        const acct = yield* createAccount(t.token, "replayed", "Aisha Bello", 300_000)
        for (const amountKobo of [100_000, 150_000, 90_000]) {
          expect((yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo, senderName: "BELLO AISHA" })).status).toBe(200)
        }
        yield* waitForTransactions(t.tenantId, 3)
        yield* waitForInboxDrained
        yield* waitForConsumerIdle(topology)
        const before = yield* snapshot
        expect(yield* accountBalance(t.tenantId, "replayed")).toBe(340_000)

        const messages = Chunk.toArray(
          yield* Stream.runCollect(replayFrom(stream, { seq: 1 })).pipe(Effect.timeout("20 seconds"), Effect.orDie)
        )
        const deposits = messages.filter((m) => isDecoded(decodeEnvelope(m.string())))
        // One message per inbox row (JetStream de-duplicated receiver and sweeper publishes) plus the planted ghost.
        expect(deposits.length).toBe(before.inbox + 1)

        // 1. Straight into the reconciler: every one is already reconciled (or, for the planted ghost, has no row).
        const results = yield* Effect.forEach(deposits, (m) => {
          const e = decodeEnvelope(m.string())
          return isDecoded(e) ? reconciler.reconcile(e) : Effect.die("unreachable")
        }, { concurrency: 8 })
        expect(new Set(results)).toEqual(new Set(["already-reconciled", "missing-inbox-row"]))
        expect(results.filter((r) => r === "missing-inbox-row")).toHaveLength(1)
        expect(yield* snapshot).toEqual(before)

        // 2. Through JetStream and the real workers: re-published under NEW msg ids so JetStream stores them again.
        const lastBefore = (yield* reconcilerInfo(topology)).delivered.stream_seq
        yield* Effect.forEach(
          deposits.filter((m) => !m.string().includes("ghost-ref")),
          (m) => publish(m.subject, m.data, `${m.headers?.get("Nats-Msg-Id") ?? m.seq}:replay:${crypto.randomUUID()}`),
          { concurrency: 16, discard: true }
        )
        const info = yield* waitFor("the replay to be consumed", reconcilerInfo(topology), {
          until: (i) => i.delivered.stream_seq >= lastBefore + deposits.length - 1 && i.num_pending === 0 && i.num_ack_pending === 0,
          timeoutMs: 30_000,
          intervalMs: 100
        })
        expect(info.num_redelivered).toBe(0)
        yield* Effect.sleep("500 millis")
        expect(yield* snapshot).toEqual(before)
        expect(yield* accountBalance(t.tenantId, "replayed")).toBe(340_000)
        yield* assertLedgerInvariant
      })
    )
  }
)
