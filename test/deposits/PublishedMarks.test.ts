import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import * as crypto from "node:crypto"
import { Inbox } from "../../services/deposits/Inbox.js"
import { INBOX_RECONCILED } from "../../services/deposits/DepositRows.js"
import { TestSql } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

// The waits poll on the wall clock (the database answers in real time; the Effect clock here is the TestClock): 5 s.

/** Until the marks fiber is asleep on the TestClock, so moving the clock wakes it. */
const asleep = waitFor("the marks fiber to sleep", Effect.map(TestClock.sleeps(), (s) => s.length), { until: (n) => n > 0, timeoutMs: 5_000 })

// The receiver's published marks (services/deposits/Inbox.ts) on the real Postgres, with the marks fiber on the
// TestClock: a row still unreconciled a second after its publish is marked; one published later waits for the
// next pass; a row reconciled meanwhile gets no second update.
layer(TestSql)("the receiver's published marks", (it) => {
  it.scoped("mark rows unreconciled a second after their publish, the younger ones on the next pass", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inbox = Context.get(yield* Layer.build(Inbox.Default), Inbox)
      const tenantId = `ten_marks_${crypto.randomBytes(6).toString("hex")}`
      yield* sql`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Marks Ltd')`
      const rows = yield* inbox.insertMany(["a", "b", "c"].map((k) => {
        const reference = `marks-${k}-${crypto.randomBytes(4).toString("hex")}`
        return {
          tenantId, mode: "test" as const, provider: "sandbox", providerReference: reference, kind: "inflow" as const, accountNumber: "0000000001",
          payload: {
            event: "transfer.inbound", merchantId: "m_test", sessionId: reference, accountNumber: "0000000001", amountKobo: 100,
            senderName: null, senderAccountNumber: null, senderBankCode: null, narration: null, paidAt: "2026-11-21T08:00:00.000Z", reversedSessionId: null
          }
        }
      }))
      const [a, b, c] = rows.map((r) => r!.envelope.inboxId)
      const state = (id: number) =>
        sql<{ publishedAt: Date | null; reconciledAt: Date | null; xmin: string }>`
          SELECT published_at, reconciled_at, xmin::text FROM inbound_events WHERE id = ${id}`.pipe(Effect.map((r) => r[0]!), Effect.orDie)

      // t = 0: a and c published. t = 0.5 s: b published; c reconciled meanwhile (the reconciler marks it itself).
      yield* inbox.notePublished([a!, c!])
      yield* asleep
      yield* TestClock.adjust("500 millis")
      yield* inbox.notePublished([b!])
      yield* sql`UPDATE inbound_events SET ${sql.literal(INBOX_RECONCILED)} WHERE id = ${c!}`
      const cReconciled = yield* state(c!)

      // t = 1 s: the pass marks a (a second old); b (half a second old) goes back for the next pass; c is left alone.
      yield* TestClock.adjust("500 millis")
      const aMarked = yield* waitFor("a's mark", state(a!), { until: (s) => s.publishedAt !== null, timeoutMs: 5_000 })
      expect(aMarked.reconciledAt).toBeNull()
      yield* asleep
      expect((yield* state(b!)).publishedAt).toBeNull()
      expect(yield* state(c!)).toEqual(cReconciled) // not even a new row version

      // t = 2 s: b is marked on the next pass.
      yield* TestClock.adjust("1 second")
      const bMarked = yield* waitFor("b's mark", state(b!), { until: (s) => s.publishedAt !== null, timeoutMs: 5_000 })
      expect(bMarked.reconciledAt).toBeNull()
      expect(yield* state(c!)).toEqual(cReconciled)
    }))
})
