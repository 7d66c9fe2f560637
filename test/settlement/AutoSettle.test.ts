import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Deferred, Effect, Queue, Scope, TestClock, TestContext } from "effect"
import { makeNuban } from "../../src/domain/Nuban.js"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { autoSettleLoop } from "../../services/settlement/AutoSettle.js"
import { type RunSummary, SettlementRunSettings } from "../../services/settlement/SettlementRunSettings.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { sendSigned, waitForTransactions } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, type MoneyTenant, providerCalls, testTenant, waitForTransfer } from "../transfers/support.js"

/**
 * The interface's settlement rules 1 to 5 ("Settlement settings"), each with the TestClock driving the auto-settle
 * worker. The app runs on the live clock (excludeTestServices) with its own worker off; each test starts
 * `autoSettleLoop` on a TestClock of its own (`startWorker`) and moves that clock one interval at a time. A pass
 * itself runs on the wall clock (its provider calls, the sandbox bank's reports and the transfer completer are real
 * time), so the test fiber, which stays on the live clock, waits for their outcomes as any other test does.
 *
 * Every pass covers every tenant with autoSettle and an account (all tests share the app's database): a test reads
 * only its own tenant's summary.
 */

// ---------------------------------------------------------------------------------------------------------------
// The worker on a TestClock
// ---------------------------------------------------------------------------------------------------------------

interface Worker {
  readonly intervalMs: number
  /** Moves the worker's TestClock `ms` on, once the worker is asleep waiting for its next pass. */
  readonly advance: (ms: number) => Effect.Effect<void>
  /** Waits for the next pass to end; answers `t`'s summary of it (undefined: `t` was not due). */
  readonly nextPass: (t: MoneyTenant) => Effect.Effect<RunSummary | undefined>
  /** One interval on, and that pass's summary for `t`. */
  readonly pass: (t: MoneyTenant) => Effect.Effect<RunSummary | undefined>
  /** How many passes have ended and not been taken by `nextPass`. */
  readonly passesWaiting: Effect.Effect<number>
}

/**
 * Forks a fiber that runs `autoSettleLoop` under `Effect.provide(TestContext.TestContext)` (test/transfers/Concurrency.test.ts's
 * `onTestClock`), each pass offering its summaries to a queue; hands back that fiber's TestClock. The fork comes first,
 * so only the worker's Clock is a TestClock: the test fiber stays on the live clock (providing the TestContext on the
 * test fiber itself would leave its Clock a TestClock after the block, and every wait on a Schedule would hang). The
 * worker lives until the test's scope closes.
 */
const startWorker = Effect.gen(function* () {
  const { intervalMs } = yield* SettlementRunSettings
  const scope = yield* Scope.Scope
  const passes = yield* Queue.unbounded<ReadonlyArray<RunSummary>>()
  const testClock = yield* Deferred.make<TestClock.TestClock>()
  yield* Effect.forkIn(
    Effect.provide(
      Effect.gen(function* () {
        yield* Deferred.succeed(testClock, yield* TestClock.testClock())
        return yield* autoSettleLoop((summaries) => Queue.offer(passes, summaries))
      }),
      TestContext.TestContext
    ),
    scope
  )
  const clock = yield* Deferred.await(testClock)
  // The worker registers its sleep on the TestClock when it gets there (at the start, and after each pass): moving
  // the clock before that would leave its next pass an interval further away.
  const asleep = waitFor("the auto-settle worker to go back to sleep", Effect.map(clock.sleeps, Chunk.size), {
    until: (n) => n > 0,
    timeoutMs: 30_000,
    intervalMs: 50
  })
  const advance = (ms: number) => Effect.zipRight(asleep, clock.adjust(ms))
  const nextPass = (t: MoneyTenant) =>
    Queue.take(passes).pipe(
      Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("no auto-settle pass ended within 30 s") }),
      Effect.orDie,
      Effect.map((summaries) => summaries.find((s) => s.tenantId === t.tenantId && s.mode === "test"))
    )
  return {
    intervalMs,
    advance,
    nextPass,
    pass: (t) => Effect.zipRight(advance(intervalMs), nextPass(t)),
    passesWaiting: Queue.size(passes)
  } satisfies Worker
})

// ---------------------------------------------------------------------------------------------------------------
// Tenants, accounts, deposits
// ---------------------------------------------------------------------------------------------------------------

/** The tenant's settlement account in the sandbox directory. */
const NGOZI = { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }

const putSettlement = (t: MoneyTenant, body: Record<string, unknown>) =>
  Effect.map(call("PUT", "/api/v1/settings/settlement", { token: t.token, json: body }), (r) => {
    expectStatus(r, 200)
    return r.body
  })

/** A new tenant settling to NGOZI with autoSettle on, and `settings` over that. */
const settlingTenant = (settings: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const answer = yield* putSettlement(t, { ...NGOZI, autoSettle: true, ...settings })
    expect(answer.active).toBe(settings.autoSettle ?? true)
    return t
  })

const putSplits = (t: MoneyTenant, splits: ReadonlyArray<Record<string, unknown>>) =>
  Effect.map(call("PUT", "/api/v1/settings/splits", { token: t.token, json: { splits } }), (r) => {
    expectStatus(r, 200)
    return r.body
  })

/** A sub-merchant with a verified payout account (`name` must match the directory's name for it). */
const subMerchant = (t: MoneyTenant, name: string, reference: string, payout: { accountNumber: string; bankCode: string }, platformFeeBps = 0) =>
  Effect.gen(function* () {
    const created = yield* call("POST", "/api/v1/sub-merchants", { token: t.token, json: { name, reference } })
    expectStatus(created, 201)
    const body = { accountNumber: payout.accountNumber, bankCode: payout.bankCode, platformFeeBps }
    expectStatus(yield* call("PUT", `/api/v1/sub-merchants/${created.body.id}/payout`, { token: t.token, json: body }), 200)
    return created.body as { id: string; reference: string }
  })

/** A virtual account (open unless `expected`), optionally routed to a sub-merchant. */
const openAccount = (t: MoneyTenant, accountRef: string, options: { expected?: number; subMerchantRef?: string } = {}) =>
  Effect.map(
    call("POST", "/api/v1/virtual-accounts", {
      token: t.token,
      json: { accountRef, name: "Adaeze Okafor", expectedAmountKobo: options.expected, subMerchantRef: options.subMerchantRef }
    }),
    (r) => {
      expectStatus(r, 201)
      return r.body as { accountRef: string; nuban: string }
    }
  )

/** A deposit into the account, signed as the sandbox bank from ADAEZE OKAFOR; waits until it is reconciled. */
const deposit = (t: MoneyTenant, account: { nuban: string }, amountKobo: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE tenant_id = ${t.tenantId}`) as unknown as [{ n: number }]
    const sent = yield* sendSigned(t, {
      accountNumber: account.nuban, amountKobo, senderName: "ADAEZE OKAFOR", senderAccountNumber: DIRECTORY.adaeze.accountNumber
    })
    expect(sent.status).toBe(200)
    yield* waitForTransactions(t.tenantId, n + 1)
    return sent.sessionId as string
  }).pipe(Effect.orDie)

/** An account with these deposits in it. */
const funded = (t: MoneyTenant, accountRef: string, amounts: ReadonlyArray<number>, options: { expected?: number; subMerchantRef?: string } = {}) =>
  Effect.gen(function* () {
    const account = yield* openAccount(t, accountRef, options)
    const references: Array<string> = []
    for (const amount of amounts) references.push(yield* deposit(t, account, amount))
    return { ...account, references }
  })

// ---------------------------------------------------------------------------------------------------------------
// What settlement did
// ---------------------------------------------------------------------------------------------------------------

/** The tenant's settlements, newest first (GET /api/v1/settlements). */
const settlementsOf = (t: MoneyTenant) =>
  Effect.map(call("GET", "/api/v1/settlements", { token: t.token }), (r) => {
    expectStatus(r, 200)
    return r.body.data as Array<any>
  })

const settlementsFor = (t: MoneyTenant, accountRef: string) => Effect.map(settlementsOf(t), (all) => all.filter((s) => s.accountRef === accountRef))

/** The settlement once every leg's latest transfer is final (waited for on the wall clock). */
const whenFinal = (t: MoneyTenant, settlementId: string) =>
  Effect.gen(function* () {
    const find = Effect.map(settlementsOf(t), (all) => all.find((s) => s.id === settlementId))
    for (const leg of (yield* find).legs) yield* waitForTransfer(t.token, leg.merchantTxRef)
    return yield* find
  })

/** The one settlement a pass made for `t`, once final. */
const settledBy = (t: MoneyTenant, summary: RunSummary | undefined) =>
  Effect.gen(function* () {
    expect(summary, "the tenant was in the pass").toBeDefined()
    expect(summary!.settlementIds).toHaveLength(1)
    return yield* whenFinal(t, summary!.settlementIds[0]!)
  })

/** The data of the tenant's events of `type` staged in the outbox, oldest first. */
const eventsOf = (t: MoneyTenant, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ data: any }>`SELECT envelope->'data' AS data FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = ${type} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => r.data)),
    Effect.orDie
  )

/** How many settlement transfers the tenant has (any state). */
const settlementTransfers = (t: MoneyTenant) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM transfers WHERE tenant_id = ${t.tenantId} AND source = 'settlement'`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

/** GET the sub-merchant's balance, and check its pending figure against the ledger's `sub_merchant:<id>`. */
const subMerchantBalance = (t: MoneyTenant, id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const answer = yield* call("GET", `/api/v1/sub-merchants/${id}/balance`, { token: t.token })
    expectStatus(answer, 200)
    const [{ ledger }] = (yield* sql<{ ledger: number }>`SELECT -COALESCE(sum(amount_kobo), 0)::bigint AS ledger FROM ledger_entries
      WHERE tenant_id = ${t.tenantId} AND mode = 'test' AND account = ${`sub_merchant:${id}`}`.pipe(Effect.orDie)) as unknown as [{ ledger: number }]
    expect(answer.body.pendingKobo).toBe(ledger)
    return answer.body as { collectedKobo: number; settledKobo: number; pendingKobo: number; inTransitKobo: number }
  })

const legView = (l: any) => ({ legNo: l.legNo, kind: l.kind, subMerchantRef: l.subMerchantRef, bps: l.bps, flatKobo: l.flatKobo, amountKobo: l.amountKobo })

// ---------------------------------------------------------------------------------------------------------------

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("auto-settle: the settlement rules on the TestClock", (it) => {
  it.scoped("rule 1: autoSettle alone does nothing, an account without autoSettle does nothing; both: a fully-paid account is settled on the next pass", () =>
    Effect.gen(function* () {
      // autoSettle without an account: accepted, not active.
      const alone = yield* testTenant
      expect(yield* putSettlement(alone, { autoSettle: true })).toMatchObject({ autoSettle: true, settlementAccountNumber: null, active: false })
      yield* funded(alone, "alone-paid", [10_000], { expected: 10_000 })
      // An account without autoSettle.
      const off = yield* settlingTenant({ autoSettle: false })
      yield* funded(off, "off-paid", [10_000], { expected: 10_000 })
      // Both.
      const on = yield* settlingTenant()
      yield* funded(on, "on-paid", [10_000], { expected: 10_000 })
      yield* funded(on, "on-partial", [4_000], { expected: 10_000 })

      const worker = yield* startWorker
      // Up to a millisecond before the interval: no pass, nothing settled.
      yield* worker.advance(worker.intervalMs - 1)
      yield* Effect.sleep("300 millis")
      expect(yield* worker.passesWaiting).toBe(0)
      expect(yield* settlementsOf(on)).toEqual([])
      expect(yield* settlementTransfers(on)).toBe(0)

      // The interval elapses: the first pass settles the fully-paid account (not the partly-paid one).
      yield* worker.advance(1)
      const first = yield* worker.nextPass(on)
      expect(first).toMatchObject({ heldBack: 0, short: 0, retriedLegs: 0, legsSent: 1 })
      const paid = yield* settledBy(on, first)
      expect(paid).toMatchObject({ accountRef: "on-paid", netKobo: 10_000, status: "Paid", reasonCode: null })
      expect(paid.completedAt).not.toBeNull()
      expect(paid.legs).toHaveLength(1)
      expect(paid.legs[0]).toMatchObject({
        legNo: 1, kind: "tenant", amountKobo: 10_000, status: "Successful", attempts: 1, merchantTxRef: `stl_${paid.id}_1`,
        accountNumber: DIRECTORY.ngozi.accountNumber, bankCode: "011", accountName: "NGOZI EZE ENTERPRISES"
      })
      expect(yield* providerCalls(`stl_${paid.id}_1`)).toBe(1)
      const events = yield* eventsOf(on, "settlement.paid")
      expect(events).toHaveLength(1)
      expect(events[0].settlement).toMatchObject({ id: paid.id, status: "Paid", netKobo: 10_000 })
      expect(yield* balanceOf(on.token)).toMatchObject({ availableKobo: 4_000, inTransitKobo: 0 })

      // Further passes: nothing more for `on` (nothing free but the partly-paid account), nothing ever for the others.
      for (let i = 0; i < 3; i++) {
        expect(yield* worker.pass(on)).toMatchObject({ settlementIds: [], skippedIds: [], retriedLegs: 0, legsSent: 0 })
      }
      for (const [t, accountRef] of [[alone, "alone-paid"], [off, "off-paid"]] as const) {
        expect(yield* settlementsOf(t), accountRef).toEqual([])
        expect(yield* settlementTransfers(t)).toBe(0)
        expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 10_000 })
      }
      expect(yield* settlementsOf(on)).toHaveLength(1)
      expect(yield* eventsOf(on, "settlement.paid")).toHaveLength(1)
      yield* assertLedgerInvariant
    }))

  it.scoped("rule 2: an account below minPayoutKobo is held back until a further deposit brings it to the minimum", () =>
    Effect.gen(function* () {
      const t = yield* settlingTenant({ minPayoutKobo: 5_000 })
      yield* funded(t, "big", [7_000])
      const small = yield* funded(t, "small", [3_000])
      const worker = yield* startWorker

      const first = yield* worker.pass(t)
      const big = yield* settledBy(t, first)
      expect(big).toMatchObject({ accountRef: "big", netKobo: 7_000, status: "Paid" })
      // The small account: no settlement, its money still free.
      expect(yield* settlementsFor(t, "small")).toEqual([])
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 3_000 })
      expect(yield* worker.pass(t)).toMatchObject({ settlementIds: [], legsSent: 0 })
      expect(yield* settlementsFor(t, "small")).toEqual([])

      // 3,000 + 2,000 = 5,000: the minimum reached, the next pass settles all its free money.
      yield* deposit(t, small, 2_000)
      const settled = yield* settledBy(t, yield* worker.pass(t))
      expect(settled).toMatchObject({ accountRef: "small", netKobo: 5_000, status: "Paid" })
      expect(settled.legs.map(legView)).toEqual([{ legNo: 1, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: null, amountKobo: 5_000 }])
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, inTransitKobo: 0 })
      expect(yield* eventsOf(t, "settlement.paid")).toHaveLength(2)
      yield* assertLedgerInvariant
    }))

  it.scoped("held money stays: only the free part of a held overpaid account is settled; after settlement a refund or hold of the surplus is 400 nothing_available", () =>
    Effect.gen(function* () {
      const t = yield* settlingTenant()
      const held = yield* funded(t, "held", [15_000], { expected: 10_000 })
      const hold = yield* call("POST", `/api/v1/settlements/${held.references[0]}/hold`, { token: t.token, json: { amountKobo: 5_000, reason: "disputed surplus" } })
      expectStatus(hold, 200)
      expect(hold.body).toMatchObject({ heldKobo: 5_000, status: "Held" })
      const unheld = yield* funded(t, "unheld", [12_000], { expected: 10_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 22_000, heldKobo: 5_000 })
      const worker = yield* startWorker

      const first = yield* worker.pass(t)
      expect(first?.settlementIds).toHaveLength(2)
      for (const id of first!.settlementIds) expect((yield* whenFinal(t, id)).status).toBe("Paid")
      const [heldSettlement] = yield* settlementsFor(t, "held")
      const [unheldSettlement] = yield* settlementsFor(t, "unheld")
      expect(heldSettlement).toMatchObject({ netKobo: 10_000, status: "Paid" })
      expect(unheldSettlement).toMatchObject({ netKobo: 12_000, status: "Paid" })
      // The escrow is where it was, and later passes leave it there.
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, heldKobo: 5_000, inTransitKobo: 0 })
      expect(yield* worker.pass(t)).toMatchObject({ settlementIds: [], legsSent: 0 })
      expect(yield* settlementsFor(t, "held")).toHaveLength(1)
      expect(yield* balanceOf(t.token)).toMatchObject({ heldKobo: 5_000 })

      // The un-held account's surplus went with its settlement: nothing left to refund or hold.
      expectProblem(yield* call("POST", `/api/v1/transactions/${unheld.references[0]}/refund`, { token: t.testOwnerToken }), 400, "nothing_available")
      expectProblem(yield* call("POST", `/api/v1/settlements/${unheld.references[0]}/hold`, { token: t.token }), 400, "nothing_available")

      // Released, the held money is free again, and the next pass settles it.
      expect((yield* call("POST", `/api/v1/settlements/${held.references[0]}/release`, { token: t.token })).body).toMatchObject({ status: "Released" })
      const released = yield* settledBy(t, yield* worker.pass(t))
      expect(released).toMatchObject({ accountRef: "held", netKobo: 5_000, status: "Paid" })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, heldKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.scoped("rules 3 and 5: legs in priority order, the remainder on the first leg, exact amounts; an empty splits array reverts to a single sweep", () =>
    Effect.gen(function* () {
      const t = yield* settlingTenant()
      const bolanle = yield* subMerchant(t, "Bolanle Adeyemi", "sm-bolanle", DIRECTORY.bolanle)
      // Given out of order: priority decides.
      yield* putSplits(t, [
        { flatKobo: 1_500, priority: 30 },
        { bps: 2_222, priority: 20 },
        { subMerchantRef: "sm-bolanle", bps: 3_333, priority: 10 }
      ])
      yield* funded(t, "odd", [10_001], { expected: 10_001 })
      const worker = yield* startWorker

      const split = yield* settledBy(t, yield* worker.pass(t))
      // net 10,001; the flat leg first: 1,500; the rest R = 8,501.
      // 33.33% of R = 2,833.3833 -> 2,833; 22.22% of R = 1,888.9222 -> 1,888; together 55.55% of R = 4,722.3055 -> 4,722:
      // one kobo of rounding, on the first leg (priority 10): 2,834. What the percentages leave: 8,501 - 4,722 = 3,779.
      expect(split).toMatchObject({ accountRef: "odd", netKobo: 10_001, status: "Paid" })
      expect(split.legs.map(legView)).toEqual([
        { legNo: 1, kind: "sub_merchant", subMerchantRef: "sm-bolanle", bps: 3_333, flatKobo: null, amountKobo: 2_834 },
        { legNo: 2, kind: "tenant", subMerchantRef: null, bps: 2_222, flatKobo: null, amountKobo: 1_888 },
        { legNo: 3, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: 1_500, amountKobo: 1_500 },
        { legNo: 4, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: null, amountKobo: 3_779 }
      ])
      expect(split.legs.reduce((s: number, l: any) => s + l.amountKobo, 0)).toBe(10_001)
      expect(split.legs[0]).toMatchObject({ accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: "057", accountName: "BOLANLE ADEYEMI" })
      for (const l of split.legs) {
        expect(l.status).toBe("Successful")
        expect(yield* providerCalls(l.merchantTxRef)).toBe(1)
      }
      expect(split.legs.slice(1).every((l: any) => l.accountNumber === DIRECTORY.ngozi.accountNumber)).toBe(true)
      expect(yield* subMerchantBalance(t, bolanle.id)).toMatchObject({ collectedKobo: 2_834, settledKobo: 2_834, pendingKobo: 0, inTransitKobo: 0 })

      // An empty array clears the plan: the next account is one sweep of its whole net.
      expect(yield* putSplits(t, [])).toMatchObject({ splits: [] })
      expect((yield* call("GET", "/api/v1/settings/splits", { token: t.token })).body).toMatchObject({ splits: [] })
      yield* funded(t, "after-clear", [10_001], { expected: 10_001 })
      const sweep = yield* settledBy(t, yield* worker.pass(t))
      expect(sweep).toMatchObject({ accountRef: "after-clear", netKobo: 10_001, status: "Paid" })
      expect(sweep.legs.map(legView)).toEqual([{ legNo: 1, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: null, amountKobo: 10_001 }])
      expect(yield* subMerchantBalance(t, bolanle.id)).toMatchObject({ collectedKobo: 2_834, settledKobo: 2_834, pendingKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.scoped("rule 4: flat legs over the net skip the whole settlement (once, over several passes, nothing sent) until the plan is fixed, then the next pass pays", () =>
    Effect.gen(function* () {
      const t = yield* settlingTenant()
      yield* subMerchant(t, "Bolanle Adeyemi", "sm-b", DIRECTORY.bolanle)
      yield* putSplits(t, [{ flatKobo: 5_000, priority: 1 }, { subMerchantRef: "sm-b", flatKobo: 3_000, priority: 2 }])
      yield* funded(t, "short-net", [6_000], { expected: 6_000 })
      const worker = yield* startWorker

      const first = yield* worker.pass(t)
      expect(first).toMatchObject({ settlementIds: [], legsSent: 0 })
      expect(first!.skippedIds).toHaveLength(1)
      for (let i = 0; i < 3; i++) expect(yield* worker.pass(t)).toMatchObject({ settlementIds: [], skippedIds: [], legsSent: 0 })
      const skipped = yield* settlementsOf(t)
      expect(skipped).toHaveLength(1)
      expect(skipped[0]).toMatchObject({ id: first!.skippedIds[0], accountRef: "short-net", netKobo: 6_000, status: "Skipped", reasonCode: "flat_legs_exceed_net", legs: [] })
      expect(skipped[0].reason).toContain("8000")
      const events = yield* eventsOf(t, "settlement.skipped")
      expect(events).toHaveLength(1)
      expect(events[0].settlement).toMatchObject({ id: skipped[0].id, status: "Skipped", reasonCode: "flat_legs_exceed_net" })
      // Never partial: no transfer, the money still free.
      expect(yield* settlementTransfers(t)).toBe(0)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 6_000, inTransitKobo: 0 })

      // A plan that fits: 5,000 flat, then half of the remaining 1,000 to the sub-merchant, the rest to the tenant.
      yield* putSplits(t, [{ flatKobo: 5_000, priority: 1 }, { subMerchantRef: "sm-b", bps: 5_000, priority: 2 }])
      const paid = yield* settledBy(t, yield* worker.pass(t))
      expect(paid).toMatchObject({ accountRef: "short-net", netKobo: 6_000, status: "Paid" })
      expect(paid.legs.map(legView)).toEqual([
        { legNo: 1, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: 5_000, amountKobo: 5_000 },
        { legNo: 2, kind: "sub_merchant", subMerchantRef: "sm-b", bps: 5_000, flatKobo: null, amountKobo: 500 },
        { legNo: 3, kind: "tenant", subMerchantRef: null, bps: null, flatKobo: null, amountKobo: 500 }
      ])
      expect(yield* eventsOf(t, "settlement.skipped")).toHaveLength(1)
      expect(yield* eventsOf(t, "settlement.paid")).toHaveLength(1)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, inTransitKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.scoped("provider failure of one leg: retried with new references (one call each) without paying the others twice, Failed after 3 attempts, Paid once the destination is fixed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Two accounts of one name: the bank fails every transfer to the first, pays the second.
      const failing = { accountNumber: makeNuban("058", 777_000_001), bankCode: "058" }
      const good = { accountNumber: makeNuban("058", 777_000_002), bankCode: "058" }
      yield* sql`INSERT INTO sandbox_name_directory (bank_code, account_number, account_name, outcome) VALUES
        (${failing.bankCode}, ${failing.accountNumber}, 'KEMI ADEBAYO', 'failed'), (${good.bankCode}, ${good.accountNumber}, 'KEMI ADEBAYO', 'success')
        ON CONFLICT DO NOTHING`
      const t = yield* settlingTenant()
      const kemi = yield* subMerchant(t, "Kemi Adebayo", "sm-kemi", failing)
      yield* putSplits(t, [{ subMerchantRef: "sm-kemi", bps: 4_000, priority: 1 }, { flatKobo: 1_000, priority: 2 }])
      yield* funded(t, "split-fail", [10_000], { expected: 10_000 })
      const worker = yield* startWorker

      // Pass 1: three legs (Kemi 40% of 9,000 = 3,600; 1,000 flat; the rest 5,400); Kemi's fails, its money back in sub_merchant.
      let settlement = yield* settledBy(t, yield* worker.pass(t))
      const id = settlement.id as string
      const [kemiRef, flatRef, restRef] = [`stl_${id}_1`, `stl_${id}_2`, `stl_${id}_3`]
      expect(settlement.legs.map((l: any) => [l.merchantTxRef, l.amountKobo, l.status, l.attempts])).toEqual([
        [kemiRef, 3_600, "Failed", 1], [flatRef, 1_000, "Successful", 1], [restRef, 5_400, "Successful", 1]
      ])
      expect(settlement.status).toBe("Processing")
      expect(yield* subMerchantBalance(t, kemi.id)).toMatchObject({ collectedKobo: 3_600, pendingKobo: 3_600, settledKobo: 0, inTransitKobo: 0 })
      yield* assertLedgerInvariant

      // Passes 2 and 3: the failed leg alone is retried, each time with a new reference.
      for (const attempt of [2, 3]) {
        expect(yield* worker.pass(t)).toMatchObject({ settlementIds: [], retriedLegs: 1, legsSent: 0 })
        settlement = yield* whenFinal(t, id)
        expect(settlement.legs[0]).toMatchObject({ merchantTxRef: `${kemiRef}_${attempt}`, status: "Failed", attempts: attempt })
        expect(yield* subMerchantBalance(t, kemi.id)).toMatchObject({ pendingKobo: 3_600, settledKobo: 0 })
      }
      expect(settlement.status).toBe("Failed")
      expect((yield* eventsOf(t, "settlement.failed")).map((d) => d.settlement.id)).toEqual([id])

      // Failed until the destination changes: a further pass retries nothing.
      expect(yield* worker.pass(t)).toMatchObject({ retriedLegs: 0, legsSent: 0 })
      expect(yield* providerCalls(`${kemiRef}_4`)).toBe(0)
      expect((yield* whenFinal(t, id)).status).toBe("Failed")

      // The sub-merchant's payout moves to the good account: the next pass retries the leg there, and it is paid.
      expectStatus(yield* call("PUT", `/api/v1/sub-merchants/${kemi.id}/payout`, { token: t.token, json: good }), 200)
      expect(yield* worker.pass(t)).toMatchObject({ retriedLegs: 1, legsSent: 0 })
      settlement = yield* whenFinal(t, id)
      expect(settlement.status).toBe("Paid")
      expect(settlement.legs[0]).toMatchObject({ merchantTxRef: `${kemiRef}_4`, status: "Successful", attempts: 4, accountNumber: good.accountNumber })
      // Every reference sent exactly once; the legs paid at the first pass were never sent again.
      for (const ref of [kemiRef, `${kemiRef}_2`, `${kemiRef}_3`, `${kemiRef}_4`, flatRef, restRef]) expect(yield* providerCalls(ref), ref).toBe(1)
      expect(yield* settlementTransfers(t)).toBe(6)
      expect((yield* eventsOf(t, "settlement.paid")).map((d) => d.settlement.id)).toEqual([id])
      expect(yield* eventsOf(t, "settlement.failed")).toHaveLength(1)
      expect(yield* subMerchantBalance(t, kemi.id)).toMatchObject({ collectedKobo: 3_600, settledKobo: 3_600, pendingKobo: 0, inTransitKobo: 0 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 0, inTransitKobo: 0 })
      yield* assertLedgerInvariant
    }))

  it.scoped("a transient provider error during a pass: the legs stay Pending and the transfer completer finishes them with the same references, one provider call each", () =>
    Effect.gen(function* () {
      const faults = yield* SandboxFaults
      const t = yield* settlingTenant()
      const bolanle = yield* subMerchant(t, "Bolanle Adeyemi", "sm-bolanle", DIRECTORY.bolanle, 250)
      yield* funded(t, "routed", [20_001], { expected: 20_001, subMerchantRef: "sm-bolanle" })
      const worker = yield* startWorker

      // While the bank answers 5xx (the completer meets the same answer if it resumes a leg meanwhile): nothing sent.
      yield* faults.set("transfer", "error")
      const sent = yield* Effect.gen(function* () {
        expect(yield* worker.pass(t)).toMatchObject({ legsSent: 2 })
        const [sent] = yield* settlementsOf(t)
        // The sub-merchant first (the rest after the fee, with the rounding), the platform fee floor(20,001 * 2.5%) = 500 to the tenant.
        expect(sent.legs.map((l: any) => [l.kind, l.amountKobo, l.status, l.attempts])).toEqual([["sub_merchant", 19_501, "Pending", 1], ["platform_fee", 500, "Pending", 1]])
        expect(sent.status).toBe("Processing")
        for (const l of sent.legs) expect(yield* providerCalls(l.merchantTxRef)).toBe(0)
        return sent
      }).pipe(Effect.ensuring(faults.clear))

      // The fault cleared, the completer sends each leg once, under its own reference.
      const done = yield* whenFinal(t, sent.id)
      expect(done.status).toBe("Paid")
      expect(done.legs.map((l: any) => [l.merchantTxRef, l.status, l.attempts])).toEqual(sent.legs.map((l: any) => [l.merchantTxRef, "Successful", 1]))
      for (const l of done.legs) expect(yield* providerCalls(l.merchantTxRef)).toBe(1)
      expect(yield* settlementTransfers(t)).toBe(2)
      expect(yield* subMerchantBalance(t, bolanle.id)).toMatchObject({ collectedKobo: 19_501, settledKobo: 19_501, pendingKobo: 0 })
      expect(yield* eventsOf(t, "settlement.paid")).toHaveLength(1)
      yield* assertLedgerInvariant
    }))
})
