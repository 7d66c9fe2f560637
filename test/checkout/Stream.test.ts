import { HttpServer } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Clock, Deferred, Effect, Option, TestClock, TestContext } from "effect"
import { CheckoutClock } from "../../services/checkout/Checkout.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, type Tenant, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { DIRECTORY, waitForTransfer } from "../transfers/support.js"
import { openSse, type SseStream } from "./SseClient.js"

// The checkout stream over real HTTP (DESIGN.md "Live checkout"; the interface's "Live checkout"): the snapshot at
// once, one `update` per change of the payment state, `Last-Event-ID` resume, heartbeats, `expired` on the checkout
// clock, and the bounds on open streams.

const baseUrl = HttpServer.addressFormattedWith((a) => Effect.succeed(a))

/** Opens the stream of a session; closed when the test's scope closes. */
const openStream = (streamUrl: string, options: { lastEventId?: string } = {}) =>
  Effect.acquireRelease(
    Effect.flatMap(baseUrl, (base) => Effect.promise(() => openSse(`${base}${streamUrl}`, options))),
    (s) => Effect.sync(() => s.close())
  )

const waitEvents = (s: SseStream, n: number) => Effect.promise(() => s.eventCount(n))

const session = (token: string, accountRef: string, ttlSeconds?: number) =>
  Effect.map(call("POST", "/api/v1/checkout/sessions", { token, json: { accountRef, ...(ttlSeconds === undefined ? {} : { ttlSeconds }) } }), (r) => {
    expectStatus(r, 201)
    return r.body as { token: string; expiresAt: string; snapshotUrl: string; streamUrl: string; hostedUrl: string }
  })

const snapshotNow = (snapshotUrl: string) =>
  Effect.map(call("GET", snapshotUrl), (r) => {
    expectStatus(r, 200)
    return r.body
  })

/** A deposit into the account, waited for until reconciled (the tenant's transactions reach `count`). */
const deposit = (t: Tenant, nuban: string, amountKobo: number, count: number, payer: { senderName?: string; senderAccountNumber?: string } = {}) =>
  Effect.gen(function* () {
    const sent = yield* sendSigned(t, { accountNumber: nuban, amountKobo, senderName: payer.senderName ?? "AMAKA EZE", senderAccountNumber: payer.senderAccountNumber ?? null })
    expect(sent.status).toBe(200)
    yield* waitForTransactions(t.tenantId, count)
    return sent.sessionId
  })

/** A TestClock of a fiber of its own (the test fiber stays on the live clock), made the clock sessions expire by. */
const useTestClock = Effect.gen(function* () {
  const made = yield* Deferred.make<TestClock.TestClock>()
  yield* Effect.forkScoped(
    Effect.provide(Effect.flatMap(TestClock.testClock(), (c) => Deferred.succeed(made, c)).pipe(Effect.zipRight(Effect.never)), TestContext.TestContext)
  )
  const clock = yield* Deferred.await(made)
  yield* clock.setTime(Date.now())
  const checkoutClock = yield* CheckoutClock
  yield* Effect.acquireRelease(checkoutClock.use(clock), () => checkoutClock.use(Clock.make()))
  return clock
})

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("checkout stream", (it) => {
  it.scoped("snapshot first, then one update per change (deposits, refund, reversal, review decision), each the snapshot of its time; nothing for other accounts", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "st-1", "Amaka Eze", 30_000)
      const other = yield* createAccount(t.token, "st-2", "Bola Ade", 10_000)
      const s = yield* session(t.token, "st-1")
      const stream = yield* openStream(s.streamUrl)
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(stream.headers.get("cache-control")).toBe("no-store")

      const [first] = yield* waitEvents(stream, 1)
      // The reconnection delay, then the snapshot before anything else.
      expect(stream.blocks[0]).toEqual({ retry: "3000" })
      expect(first!.event).toBe("snapshot")
      const initial = JSON.parse(first!.data!)
      expect(initial).toEqual(yield* snapshotNow(s.snapshotUrl))
      expect(initial).toMatchObject({ status: "awaiting_payment", amountDueKobo: 30_000, amountPaidKobo: 0, remainingKobo: 30_000, nuban: acc.nuban })
      expect(first!.id).toBe("0.30000.awaiting_payment")

      let seen = 1
      let txns = 0
      /** After a change: exactly one more event, an update, whose data is the snapshot endpoint's answer now. */
      const expectUpdate = (expected: Record<string, unknown>) =>
        Effect.gen(function* () {
          const events = yield* waitEvents(stream, seen + 1)
          seen += 1
          const e = events[seen - 1]!
          expect(e.event).toBe("update")
          const data = JSON.parse(e.data!)
          expect(data).toMatchObject(expected)
          expect(e.id).toBe(`${data.amountPaidKobo}.${data.amountDueKobo}.${data.status}`)
          expect(data).toEqual(yield* snapshotNow(s.snapshotUrl))
          return data
        })

      const partial = yield* deposit(t, acc.nuban, 10_000, ++txns)
      yield* expectUpdate({ status: "partially_paid", amountPaidKobo: 10_000, remainingKobo: 20_000 })
      yield* deposit(t, acc.nuban, 20_000, ++txns)
      yield* expectUpdate({ status: "paid", amountPaidKobo: 30_000, remainingKobo: 0 })
      const over = yield* deposit(t, acc.nuban, 5_000, ++txns, { senderName: "ADAEZE OKAFOR", senderAccountNumber: DIRECTORY.adaeze.accountNumber })
      yield* expectUpdate({ status: "overpaid", amountPaidKobo: 35_000, remainingKobo: 0 })

      // A refund of the overpayment, sent by the dashboard Owner.
      const refund = yield* call("POST", `/api/v1/transactions/${over}/refund`, { token: t.testOwnerToken })
      expectStatus(refund, 200)
      expect(refund.body).toMatchObject({ status: "Sent", amountKobo: 5_000 })
      const refunded = yield* expectUpdate({ status: "paid", amountPaidKobo: 30_000 })
      // The bank's report that the refund went through moves nothing the payer sees: the stream's word still stands.
      expect((yield* waitForTransfer(t.token, `rfd_${over}`)).status).toBe("Successful")
      expect(yield* snapshotNow(s.snapshotUrl)).toEqual(refunded)

      // The bank reverses the first deposit.
      const rev = yield* sendSigned(t, { event: "transfer.reversal", accountNumber: acc.nuban, amountKobo: 10_000, reversedSessionId: partial })
      expect(rev.status).toBe(200)
      yield* waitForTransactions(t.tenantId, ++txns)
      yield* expectUpdate({ status: "partially_paid", amountPaidKobo: 20_000, remainingKobo: 10_000 })

      // Another account's deposit says nothing on this stream.
      yield* deposit(t, other.nuban, 10_000, ++txns, { senderName: "BOLA ADE" })
      expect((yield* call("GET", "/api/v1/virtual-accounts/st-2", { token: t.token })).body.paymentState).toBe("FullyPaid")

      yield* deposit(t, acc.nuban, 5_000, ++txns)
      const before = yield* expectUpdate({ status: "partially_paid", amountPaidKobo: 25_000, remainingKobo: 5_000 })

      // A risky deposit (a business payer, the fourth live inflow in ten minutes) is held for review: its money is not
      // the account's yet, so the payer's state does not move; the approval credits it: one update.
      const risky = yield* deposit(t, acc.nuban, 5_000, ++txns, { senderName: "CASAFINA CREDIT-EASY LOAN" })
      const heldTxn = (yield* call("GET", `/api/v1/transactions/${risky}`, { token: t.token })).body
      expect(heldTxn.status, JSON.stringify(heldTxn)).toBe("PendingReview")
      expect(yield* snapshotNow(s.snapshotUrl)).toEqual(before)
      const approved = yield* call("POST", `/api/v1/transactions/${risky}/review`, { token: t.testOwnerToken, json: { decision: "approve" } })
      expectStatus(approved, 200)
      const last = yield* expectUpdate({ status: "paid", amountPaidKobo: 30_000, remainingKobo: 0 })

      // Exactly the updates above: nothing for the other account, nothing for the held deposit, no repeats.
      expect(stream.events().map((e) => `${e.event} ${e.id}`)).toEqual([
        "snapshot 0.30000.awaiting_payment",
        "update 10000.30000.partially_paid",
        "update 30000.30000.paid",
        "update 35000.30000.overpaid",
        "update 30000.30000.paid",
        "update 20000.30000.partially_paid",
        "update 25000.30000.partially_paid",
        "update 30000.30000.paid"
      ])
      // The stream's last word is the state the snapshot endpoint answers now.
      expect(last).toEqual(yield* snapshotNow(s.snapshotUrl))
      expect(stream.ended()).toBe(false)
    }))

  it.scoped("resume: Last-Event-ID of the last event gets no repeat; an older id gets one update with the current state", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "rs-1", "Amaka Eze", 30_000)
      const s = yield* session(t.token, "rs-1")
      const a = yield* openStream(s.streamUrl)
      const [snap] = yield* waitEvents(a, 1)
      yield* deposit(t, acc.nuban, 10_000, 1)
      const [, upd] = yield* waitEvents(a, 2)
      expect(upd!.id).toBe("10000.30000.partially_paid")
      a.close()

      // Reconnected with the last id: nothing until the state moves again, then that change only.
      const b = yield* openStream(s.streamUrl, { lastEventId: upd!.id! })
      expect(b.status).toBe(200)
      yield* deposit(t, acc.nuban, 5_000, 2)
      const resumed = yield* waitEvents(b, 1)
      expect(resumed.map((e) => `${e.event} ${e.id}`)).toEqual(["update 15000.30000.partially_paid"])
      expect(JSON.parse(resumed[0]!.data!)).toEqual(yield* snapshotNow(s.snapshotUrl))

      // Reconnected with an older id (the first snapshot's): one update with the state as it is now.
      const c = yield* openStream(s.streamUrl, { lastEventId: snap!.id! })
      const caughtUp = yield* waitEvents(c, 1)
      expect(caughtUp.map((e) => `${e.event} ${e.id}`)).toEqual(["update 15000.30000.partially_paid"])
      expect(JSON.parse(caughtUp[0]!.data!)).toEqual(yield* snapshotNow(s.snapshotUrl))
      yield* deposit(t, acc.nuban, 15_000, 3)
      const after = yield* waitEvents(c, 2)
      expect(after.map((e) => `${e.event} ${e.id}`)).toEqual(["update 15000.30000.partially_paid", "update 30000.30000.paid"])
      // b saw the same change once, no repeat of what it had.
      const bAll = yield* waitEvents(b, 2)
      expect(bAll.map((e) => e.id)).toEqual(["15000.30000.partially_paid", "30000.30000.paid"])

      // An id from nowhere (a client's garbage) is just an older state: the current one, once.
      const d = yield* openStream(s.streamUrl, { lastEventId: "not-an-id" })
      expect((yield* waitEvents(d, 1)).map((e) => `${e.event} ${e.id}`)).toEqual(["update 30000.30000.paid"])
    }))

  it.scoped("expiry on the checkout clock: `expired` with the last state, the stream ends, and the token is 404 after", () =>
    Effect.gen(function* () {
      const clock = yield* useTestClock
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "ex-1", "Amaka Eze", 30_000)
      const s = yield* session(t.token, "ex-1", 120)
      expect(Date.parse(s.expiresAt)).toBeGreaterThan(0)
      const stream = yield* openStream(s.streamUrl)
      yield* waitEvents(stream, 1)
      yield* deposit(t, acc.nuban, 30_000, 1)
      yield* waitEvents(stream, 2)

      // Just before expiry: still open, the snapshot answers.
      yield* clock.adjust(119_999)
      expectStatus(yield* call("GET", s.snapshotUrl), 200)
      expect(stream.ended()).toBe(false)
      // At expiry: `expired`, carrying the last state, then the end of the stream.
      yield* clock.adjust(1)
      yield* Effect.promise(() => stream.until("the stream to end", (x) => x.ended()))
      const events = stream.events()
      expect(events.map((e) => e.event)).toEqual(["snapshot", "update", "expired"])
      expect(JSON.parse(events[2]!.data!)).toMatchObject({ status: "paid", amountPaidKobo: 30_000, expiresAt: s.expiresAt })
      expect(events[2]!.id).toBe("30000.30000.paid")

      expectProblem(yield* call("GET", s.snapshotUrl), 404, "checkout_session_not_found")
      expectProblem(yield* call("GET", s.hostedUrl), 404, "checkout_session_not_found")
      const again = yield* openStream(s.streamUrl)
      expect(again.status).toBe(404)
      expect(again.body).toMatchObject({ code: "checkout_session_not_found" })
    }))
})

layer(makeTestApp({ checkout: { heartbeatMs: 200 } }), { timeout: 60_000, excludeTestServices: true })("checkout stream heartbeat", (it) => {
  it.scoped("a `: heartbeat` comment every heartbeatMs on an idle stream, and the stream stays open", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "hb-1", "Amaka Eze", 30_000)
      const s = yield* session(t.token, "hb-1")
      const stream = yield* openStream(s.streamUrl)
      yield* Effect.promise(() => stream.until("three heartbeats", (x) => x.heartbeats() >= 3))
      expect(stream.events().map((e) => e.event)).toEqual(["snapshot"])
      expect(stream.raw()).toContain("\n\n: heartbeat\n\n")
      // Heartbeats and updates interleave; each change is still one update.
      yield* deposit(t, acc.nuban, 30_000, 1)
      yield* waitEvents(stream, 2)
      const beats = stream.heartbeats()
      yield* Effect.promise(() => stream.until("more heartbeats", (x) => x.heartbeats() >= beats + 3))
      expect(stream.events().map((e) => `${e.event} ${e.id}`)).toEqual(["snapshot 0.30000.awaiting_payment", "update 30000.30000.paid"])
      expect(stream.ended()).toBe(false)
    }))
})

layer(makeTestApp({ checkout: { maxStreams: 3, maxStreamsPerToken: 2 } }), { timeout: 60_000, excludeTestServices: true })("checkout stream bounds", (it) => {
  /** Opens streams until one is admitted (a closed stream's slot is freed once the server notices), bounded. */
  const admittedAgain = (streamUrl: string) =>
    waitFor("a stream admitted again", Effect.flatMap(baseUrl, (base) => Effect.promise(() => openSse(`${base}${streamUrl}`))), {
      until: (s) => s.status === 200,
      timeoutMs: 20_000,
      intervalMs: 50
    }).pipe(Effect.tap((s) => Effect.addFinalizer(() => Effect.sync(() => s.close()))))

  it.scoped("per token: over maxStreamsPerToken is 429 too_many_streams; a closed stream frees its slot", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "bd-1", "Amaka Eze", 30_000)
      const s = yield* session(t.token, "bd-1")
      const one = yield* openStream(s.streamUrl)
      const two = yield* openStream(s.streamUrl)
      yield* waitEvents(one, 1)
      yield* waitEvents(two, 1)
      const three = yield* openStream(s.streamUrl)
      expect(three.status).toBe(429)
      expect(three.headers.get("content-type")).toMatch(/^application\/problem\+json/)
      expect(three.body).toMatchObject({ status: 429, code: "too_many_streams" })
      // The snapshot still answers: polling is the way round the bound.
      expectStatus(yield* call("GET", s.snapshotUrl), 200)
      one.close()
      const four = yield* admittedAgain(s.streamUrl)
      expect((yield* waitEvents(four, 1))[0]!.event).toBe("snapshot")
      two.close()
      four.close()
    }))

  it.scoped("per process: over maxStreams is 429 too_many_streams whatever the token; a closed stream frees its slot", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "bp-1", "Amaka Eze", 30_000)
      yield* createAccount(t.token, "bp-2", "Bola Ade", 30_000)
      yield* createAccount(t.token, "bp-3", "Chidi Obi", 30_000)
      const [a, b, c] = [yield* session(t.token, "bp-1"), yield* session(t.token, "bp-2"), yield* session(t.token, "bp-3")]
      // Earlier tests' streams may still be counted until the server notices they closed: wait for all 3 slots.
      const first = yield* admittedAgain(a!.streamUrl)
      const second = yield* admittedAgain(b!.streamUrl)
      const third = yield* admittedAgain(b!.streamUrl)
      for (const s of [first, second, third]) yield* waitEvents(s, 1)
      const refused = yield* openStream(c!.streamUrl)
      expect(refused.status).toBe(429)
      expect(refused.body).toMatchObject({ status: 429, code: "too_many_streams" })
      second.close()
      const admitted = yield* admittedAgain(c!.streamUrl)
      expect((yield* waitEvents(admitted, 1))[0]!.event).toBe("snapshot")
    }))
})

layer(makeTestApp({ config: { natsUrl: Option.none() } }), { timeout: 60_000, excludeTestServices: true })("checkout stream on the embedded default (in-process bus)", (it) => {
  it.scoped("streams a deposit", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "em-1", "Amaka Eze", 30_000)
      const s = yield* session(t.token, "em-1")
      const stream = yield* openStream(s.streamUrl)
      yield* waitEvents(stream, 1)
      yield* deposit(t, acc.nuban, 30_000, 1)
      const events = yield* waitEvents(stream, 2)
      expect(events.map((e) => `${e.event} ${e.id}`)).toEqual(["snapshot 0.30000.awaiting_payment", "update 30000.30000.paid"])
      expect(JSON.parse(events[1]!.data!)).toEqual(yield* snapshotNow(s.snapshotUrl))
    }))
})
