import { SqlClient } from "@effect/sql"
import { describe, expect, it as plainIt, layer } from "@effect/vitest"
import { Effect, Either, Exit } from "effect"
import { SandboxFaults } from "../../services/providers/SandboxFaults.js"
import { MONEY_OUT_STEPS, MoneyOutHooks, type MoneyOutStep } from "../../services/transfers/MoneyOutHooks.js"
import { Payouts } from "../../services/transfers/Payouts.js"
import { Refunds } from "../../services/transfers/Refunds.js"
import { expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { freePort, type Service, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { call, makeTestApp, TEST_MONEY_OUT } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, balanceOf, DIRECTORY, fund, type MoneyTenant, providerCalls, testTenant, waitForTransfer } from "./support.js"
import { atProcess, holdLock, lockWaiters } from "../support/Crash.js"

const ACTOR = "test:crash-safety"
type Destination = (typeof DIRECTORY)[keyof typeof DIRECTORY]
const scopeOf = (t: MoneyTenant) => ({ tenantId: t.tenantId, mode: "test" as const })
/** Past the claim's lease: the completer (or a retry) may take the transfer over. */
const pastTheLease = Effect.sleep(`${TEST_MONEY_OUT.leaseMs + 100} millis`)

/** The fiber dies at `step` of transfer `ref` (the probe interrupts it there), and nowhere else. */
const dieAt = (step: MoneyOutStep, ref: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, MoneyOutHooks, { at: (s, r) => (s === step && r === ref ? Effect.interrupt : Effect.void) })

/**
 * What a crash at the step leaves: nothing before the claim commits; a Pending claim until the finalising commit, then
 * Processing; once the provider has it, its webhook may already have reported it Successful.
 */
const leftBy = (step: MoneyOutStep): ReadonlyArray<ReadonlyArray<string>> =>
  step === "beforeClaimCommit" ? [[]] : step === "beforeProviderCall" ? [["Pending"]] : step === "afterFinaliseCommit" ? [["Processing"], ["Successful"]] : [["Pending"], ["Successful"]]

/** Where a step falls: after it the provider has been asked (once), and the claim is committed or not. */
const providerAsked = (step: MoneyOutStep) => step === "afterProviderCall" || step === "beforeFinaliseCommit" || step === "afterFinaliseCommit"
const claimCommitted = (step: MoneyOutStep) => step !== "beforeClaimCommit"

/** The tenant's transfers as the database has them. */
const transfersOf = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ merchantTxRef: string; status: string; attempts: number }>`SELECT merchant_tx_ref, status, attempts FROM transfers WHERE tenant_id = ${tenantId}`
  ).pipe(Effect.orDie)

/** A retry's answer: its problem code, or "answered". */
const codeOf = <A, E>(a: Either.Either<A, E>) => (Either.isLeft(a) ? (a.left as { code?: string }).code : "answered")

/** The transfer is Pending and its claim's lease still runs. */
const pendingUnderLease = (ref: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ holds: boolean }>`SELECT status = 'Pending' AND lease_until > now() AS holds FROM transfers WHERE merchant_tx_ref = ${ref}`).pipe(
    Effect.map((r) => r[0]?.holds ?? false),
    Effect.orDie
  )

/** How many events of the type the tenant's outbox holds. */
const eventsOf = (tenantId: string, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE tenant_id = ${tenantId} AND event_type = ${type}`
  ).pipe(Effect.map((r) => r[0]!.n), Effect.orDie)

/** After recovery: one transfer, Successful, nothing open, the provider asked exactly once, one event. */
const assertFinishedOnce = (t: MoneyTenant, ref: string, why: string) =>
  Effect.gen(function* () {
    expect((yield* waitForTransfer(t.token, ref)).status, why).toBe("Successful")
    expect(yield* providerCalls(ref), why).toBe(1)
    expect(yield* transfersOf(t.tenantId), why).toEqual([expect.objectContaining({ merchantTxRef: ref, status: "Successful" })])
    expect(yield* eventsOf(t.tenantId, "transfer.successful"), why).toBe(1)
  })

/**
 * A payout whose fiber is interrupted at `step`, then retried with the same request at once and after the lease: every
 * retry answers the one transfer or 409 request_in_progress, the completer finishes it, the provider is asked once.
 */
const payoutCrashAt = (step: MoneyOutStep, to: Destination) =>
  Effect.gen(function* () {
    const payouts = yield* Payouts
    const t = yield* testTenant
    yield* fund(t, `po-${step}-${to.accountNumber}`, [100_000])
    const ref = `crash-po-${step}-${to.accountNumber}`
    const input = { merchantTxRef: ref, amountKobo: 40_000, accountNumber: to.accountNumber, bankCode: to.bankCode, narration: "crash" }
    const why = `payout to ${to.accountName} interrupted at ${step}`

    const crashed = yield* payouts.create(scopeOf(t), input, "api", ACTOR).pipe(dieAt(step, ref), Effect.exit)
    expect(Exit.isInterrupted(crashed), why).toBe(true)
    expect(leftBy(step), why).toContainEqual((yield* transfersOf(t.tenantId)).map((x) => x.status))
    expect(yield* providerCalls(ref), why).toBe(providerAsked(step) ? 1 : 0)

    const retry = payouts.create(scopeOf(t), input, "api", ACTOR).pipe(Effect.either)
    const answers = [yield* retry]
    // Still Pending under its claim's lease after the answer, so during it too: the retry must wait (409).
    if (yield* pendingUnderLease(ref)) expect(codeOf(answers[0]!), why).toBe("request_in_progress")
    yield* pastTheLease
    answers.push(yield* retry)
    for (const [i, a] of answers.entries()) {
      if (Either.isLeft(a)) {
        expect(a.left, `${why}: retry ${i}`).toMatchObject({ _tag: "Conflict", code: "request_in_progress" })
        // Only a committed claim still under someone's lease answers 409.
        expect(claimCommitted(step) || i > 0, `${why}: retry ${i}`).toBe(true)
      } else {
        expect(a.right.transfer, `${why}: retry ${i}`).toMatchObject({ merchantTxRef: ref, amountKobo: 40_000, accountName: to.accountName })
        // Only the first retry after a crash before the claim committed creates the transfer.
        expect(a.right.created, `${why}: retry ${i}`).toBe(!claimCommitted(step) && i === 0)
      }
    }
    if (step === "beforeClaimCommit") expect(Either.isRight(answers[0]!), why).toBe(true)
    if (step === "afterFinaliseCommit") expect(answers.every(Either.isRight), why).toBe(true)

    yield* assertFinishedOnce(t, ref, why)
    const last = yield* payouts.create(scopeOf(t), input, "api", ACTOR)
    expect(last, why).toMatchObject({ created: false, transfer: { status: "Successful" } })
    expect(yield* balanceOf(t.token), why).toMatchObject({ availableKobo: 60_000, inTransitKobo: 0, paidOutTodayKobo: 40_000 })
    expect(yield* providerCalls(ref), why).toBe(1)
  })

/** As payoutCrashAt, for a refund of an overpaid deposit (15 000 paid on 10 000 expected: 5 000 back to the payer). */
const refundCrashAt = (step: MoneyOutStep, to: Destination) =>
  Effect.gen(function* () {
    const refunds = yield* Refunds
    const t = yield* testTenant
    const accountRef = `rf-${step}-${to.accountNumber}`
    const { references } = yield* fund(t, accountRef, [15_000], { expected: 10_000 })
    const deposit = references[0]!
    const ref = `rfd_${deposit}`
    const why = `refund to ${to.accountName} interrupted at ${step}`
    // To the payer's captured account (the default), or to the one given.
    const request = to === DIRECTORY.adaeze ? {} : { accountNumber: to.accountNumber, bankCode: to.bankCode }

    const crashed = yield* refunds.refund(scopeOf(t), deposit, request, ACTOR).pipe(dieAt(step, ref), Effect.exit)
    expect(Exit.isInterrupted(crashed), why).toBe(true)
    expect(leftBy(step), why).toContainEqual((yield* transfersOf(t.tenantId)).map((x) => x.status))
    expect(yield* providerCalls(ref), why).toBe(providerAsked(step) ? 1 : 0)
    const paidAfterCrash = (yield* call("GET", `/api/v1/virtual-accounts/${accountRef}`, { token: t.token })).body.amountPaidKobo
    expect(paidAfterCrash, why).toBe(claimCommitted(step) ? 10_000 : 15_000)

    const retry = refunds.refund(scopeOf(t), deposit, request, ACTOR).pipe(Effect.either)
    const answers = [yield* retry]
    // Still Pending under its claim's lease after the answer, so during it too: the retry must wait (409).
    if (yield* pendingUnderLease(ref)) expect(codeOf(answers[0]!), why).toBe("refund_in_progress")
    yield* pastTheLease
    answers.push(yield* retry)
    for (const [i, a] of answers.entries()) {
      if (Either.isLeft(a)) {
        expect(a.left, `${why}: retry ${i}`).toMatchObject({ _tag: "Conflict", code: "refund_in_progress" })
        expect(claimCommitted(step) || i > 0, `${why}: retry ${i}`).toBe(true)
      } else {
        expect(a.right, `${why}: retry ${i}`).toMatchObject({
          reference: deposit, merchantTxRef: ref, amountKobo: 5_000, status: !claimCommitted(step) && i === 0 ? "Sent" : "AlreadySent",
          destination: { accountNumber: to.accountNumber, bankCode: to.bankCode, accountName: to.accountName }
        })
      }
    }
    if (step === "beforeClaimCommit") expect(Either.isRight(answers[0]!), why).toBe(true)
    if (step === "afterFinaliseCommit") expect(answers.every(Either.isRight), why).toBe(true)

    yield* assertFinishedOnce(t, ref, why)
    expect(yield* refunds.refund(scopeOf(t), deposit, request, ACTOR), why).toMatchObject({ status: "AlreadySent", transferStatus: "Successful", amountKobo: 5_000 })
    const account = yield* call("GET", `/api/v1/virtual-accounts/${accountRef}`, { token: t.token })
    expect(account.body, why).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0, paymentState: "FullyPaid" })
    expect(yield* eventsOf(t.tenantId, "refund.sent"), why).toBe(1)
    expect(yield* balanceOf(t.token), why).toMatchObject({ availableKobo: 10_000, inTransitKobo: 0 })
    expect(yield* providerCalls(ref), why).toBe(1)
  })

/** No transfer anywhere in the database is left open. */
const nothingOpen = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ merchantTxRef: string; status: string }>`SELECT merchant_tx_ref, status FROM transfers WHERE status IN ('Pending', 'Processing')`
).pipe(Effect.orDie)

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("money out crash safety", (it) => {
  it.effect("the fiber interrupted at each step of a payout and of a refund, then retried: the provider pays once, nothing stuck", () =>
    Effect.gen(function* () {
      // The sandbox bank reports most transfers by webhook within 50 ms (which may find the transfer still Pending);
      // a SLOW TRANSFER account never reports, so only a status check (the completer's or a retry's) can finish it.
      const cases = MONEY_OUT_STEPS.flatMap((step) => [
        payoutCrashAt(step, DIRECTORY.bolanle), payoutCrashAt(step, DIRECTORY.slow),
        refundCrashAt(step, DIRECTORY.adaeze), refundCrashAt(step, DIRECTORY.slow)
      ])
      expect(cases).toHaveLength(20)
      yield* Effect.all(cases, { concurrency: "unbounded", discard: true })
      expect(yield* nothingOpen).toEqual([])
      yield* assertLedgerInvariant
    }))

  it.effect("provider faults on a payout: 5xx, timeout, accepted then silent; the completer sends at most once", () =>
    Effect.gen(function* () {
      const faults = yield* SandboxFaults
      const t = yield* testTenant
      yield* fund(t, "faults-1", [300_000])
      const payout = (ref: string, to: Destination = DIRECTORY.ibrahim) =>
        call("POST", "/api/v1/transfers/bank", { token: t.token, json: { merchantTxRef: ref, amountKobo: 50_000, accountNumber: to.accountNumber, bankCode: to.bankCode } })

      // 5xx: recorded and answered Pending; while the lease holds a retry is 409; the completer's status check finds
      // the provider never got it, and (once the provider answers again) sends it once.
      yield* faults.set("transfer", "error")
      const five = yield* payout("f-5xx")
      expectStatus(five, 201)
      expect(five.body).toMatchObject({ merchantTxRef: "f-5xx", status: "Pending" })
      expectProblem(yield* payout("f-5xx"), 409, "request_in_progress")
      yield* pastTheLease // the completer tries again under the fault: still nothing reaches the provider
      yield* pastTheLease
      expect(yield* providerCalls("f-5xx")).toBe(0)
      const stillPending = (yield* transfersOf(t.tenantId)).find((x) => x.merchantTxRef === "f-5xx")!
      expect(stillPending.status).toBe("Pending")
      expect(stillPending.attempts).toBeGreaterThanOrEqual(1)
      yield* faults.clear
      expect((yield* waitForTransfer(t.token, "f-5xx")).status).toBe("Successful")
      expect(yield* providerCalls("f-5xx")).toBe(1)

      // No answer at all: the provider timeout ends the call; the transfer is Pending, never reached the provider.
      yield* faults.set("transfer", "timeout")
      const started = Date.now()
      const slow = yield* payout("f-timeout")
      expect(Date.now() - started).toBeGreaterThanOrEqual(TEST_MONEY_OUT.providerTimeoutMs - 50)
      expectStatus(slow, 201)
      expect(slow.body.status).toBe("Pending")
      expect(yield* providerCalls("f-timeout")).toBe(0)
      yield* faults.clear
      expect((yield* waitForTransfer(t.token, "f-timeout")).status).toBe("Successful")
      expect(yield* providerCalls("f-timeout")).toBe(1)

      // Accepted, then silence: the provider has it and we never heard. To a SLOW TRANSFER account, so no webhook
      // reports it either: only a status check can. The fault stays on, so a second send would be counted (the sandbox
      // counts every call that reaches it); the completer's status check adopts the transfer instead.
      yield* faults.set("transfer", "acceptThenTimeout")
      const silent = yield* payout("f-accepted", DIRECTORY.slow)
      expectStatus(silent, 201)
      expect(silent.body.status).toBe("Pending")
      expect(yield* providerCalls("f-accepted")).toBe(1)
      expect((yield* waitForTransfer(t.token, "f-accepted")).status).toBe("Successful")
      expect(yield* providerCalls("f-accepted")).toBe(1)
      yield* faults.clear

      const again = yield* payout("f-accepted", DIRECTORY.slow)
      expectStatus(again, 200)
      expect(again.body.status).toBe("Successful")
      expect(yield* providerCalls("f-accepted")).toBe(1)
      expect((yield* transfersOf(t.tenantId)).map((x) => x.status)).toEqual(["Successful", "Successful", "Successful"])
      expect(yield* eventsOf(t.tenantId, "transfer.successful")).toBe(3)
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 150_000, inTransitKobo: 0, paidOutTodayKobo: 150_000 })
      yield* assertLedgerInvariant
    }).pipe(Effect.ensuring(Effect.flatMap(SandboxFaults, (f) => f.clear))))

  it.effect("status checks failing for a while after the provider got the transfer: the completer waits, never sends again", () =>
    Effect.gen(function* () {
      const faults = yield* SandboxFaults
      const payouts = yield* Payouts
      const t = yield* testTenant
      yield* fund(t, "faults-2", [100_000])
      // To a SLOW TRANSFER account: the sandbox bank never reports it by webhook; only a status check can finish it.
      const input = { merchantTxRef: "f-status", amountKobo: 30_000, accountNumber: DIRECTORY.slow.accountNumber, bankCode: DIRECTORY.slow.bankCode }
      yield* faults.set("transferStatus", "error")
      const crashed = yield* payouts.create(scopeOf(t), input, "api", ACTOR).pipe(dieAt("afterProviderCall", "f-status"), Effect.exit)
      expect(Exit.isInterrupted(crashed)).toBe(true)
      expect(yield* providerCalls("f-status")).toBe(1)
      // Three leases: the completer (and a retry) ask the provider and get no answer; neither may send blind.
      yield* pastTheLease
      const meanwhile = yield* payouts.create(scopeOf(t), input, "api", ACTOR).pipe(Effect.either)
      if (Either.isRight(meanwhile)) expect(meanwhile.right).toMatchObject({ created: false, transfer: { status: "Pending" } })
      else expect(meanwhile.left).toMatchObject({ code: "request_in_progress" })
      yield* pastTheLease
      yield* pastTheLease
      const [row] = yield* transfersOf(t.tenantId)
      expect(row).toMatchObject({ status: "Pending" })
      expect(row!.attempts).toBeGreaterThanOrEqual(2)
      expect(yield* providerCalls("f-status")).toBe(1)
      yield* faults.clear
      yield* assertFinishedOnce(t, "f-status", "status checks failed for a while")
      yield* assertLedgerInvariant
    }).pipe(Effect.ensuring(Effect.flatMap(SandboxFaults, (f) => f.clear))))

  it.effect("name enquiry failing: 502 provider_unavailable and nothing recorded; a refund whose transfer fails: 502, 409, then AlreadySent once", () =>
    Effect.gen(function* () {
      const faults = yield* SandboxFaults
      const t = yield* testTenant
      const { references } = yield* fund(t, "faults-3", [15_000], { expected: 10_000 })
      const deposit = references[0]!
      const refund = call("POST", `/api/v1/transactions/${deposit}/refund`, { token: t.testOwnerToken })
      const account = Effect.map(call("GET", "/api/v1/virtual-accounts/faults-3", { token: t.token }), (r) => r.body)

      yield* faults.set("nameEnquiry", "error")
      expectProblem(yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "f-ne", amountKobo: 1_000, accountNumber: DIRECTORY.bolanle.accountNumber, bankCode: "057" }
      }), 502, "provider_unavailable")
      expectProblem(yield* refund, 502, "provider_unavailable")
      expect(yield* transfersOf(t.tenantId)).toEqual([])
      expect(yield* providerCalls("f-ne")).toBe(0)
      expect(yield* account).toMatchObject({ amountPaidKobo: 15_000 })
      expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 15_000, inTransitKobo: 0, paidOutTodayKobo: 0 })
      yield* faults.clear

      // The refund's transfer gets a 5xx: the refund is recorded (the claim committed) and the completer sends it.
      yield* faults.set("transfer", "error")
      expectProblem(yield* refund, 502, "provider_unavailable")
      expectProblem(yield* refund, 409, "refund_in_progress")
      expect(yield* account).toMatchObject({ amountPaidKobo: 10_000 })
      expect(yield* providerCalls(`rfd_${deposit}`)).toBe(0)
      yield* faults.clear
      // Until it is sent, every answer is 409 refund_in_progress (an assertion: any other answer fails at once).
      const sent = yield* waitFor(
        "the refund sent (answered 200)",
        refund.pipe(Effect.tap((r) => Effect.sync(() => r.status === 200 || expect(`${r.status} ${JSON.stringify(r.body)}`).toMatch(/^409 .*refund_in_progress/)))),
        { until: (r) => r.status === 200, timeoutMs: 20_000, intervalMs: 100 }
      )
      expect(sent.body).toMatchObject({ reference: deposit, status: "AlreadySent", amountKobo: 5_000, merchantTxRef: `rfd_${deposit}` })
      yield* assertFinishedOnce(t, `rfd_${deposit}`, "refund after a 5xx")
      expect((yield* refund).body).toMatchObject({ status: "AlreadySent", transferStatus: "Successful" })
      expect(yield* account).toMatchObject({ amountPaidKobo: 10_000, overpayment: 0 })
      expect(yield* eventsOf(t.tenantId, "refund.sent")).toBe(1)
      expect(yield* providerCalls(`rfd_${deposit}`)).toBe(1)
      yield* assertLedgerInvariant
    }).pipe(Effect.ensuring(Effect.flatMap(SandboxFaults, (f) => f.clear))))
})

describe("the service process killed in the middle of money out", () => {
  plainIt.live("SIGKILL after a payout was accepted, during provider calls and inside claims; restarted: every payout paid once, none stuck", () =>
    Effect.scoped(Effect.gen(function* () {
      const name = yield* Effect.promise(() => createScratchDatabase("moneycrash"))
      yield* Effect.addFinalizer(() => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined)))
      const dbUrl = databaseUrl(name)
      // The service's own money-out timings (services/transfers/Settings.ts reads them from the environment). The
      // provider timeout must outlast the setup before the kill: a call that times out first is cancelled, its
      // statement in the sandbox bank with it (pg_cancel_backend), and the bank never has the transfer. At 2 s a loaded
      // full run got there first (p-call-1: 0 calls, 2026-11-30); the lease stays twice the timeout (Settings.ts).
      const vars = {
        PORT: String(yield* Effect.promise(freePort)), DATABASE_URL: dbUrl, DATA_DIR: tempDir("moneycrash-"), LOG_LEVEL: "Error",
        MONEY_OUT_LEASE_MS: "12000", PROVIDER_TIMEOUT_MS: "6000", MONEY_OUT_COMPLETER_INTERVAL_MS: "200", MONEY_OUT_STATUS_CHECK_AFTER_MS: "600",
        SANDBOX_TRANSFER_REPORT_DELAY_MS: "1000", SANDBOX_TRANSFER_REPORT_INTERVAL_MS: "100"
      }
      const start = Effect.acquireRelease(Effect.promise(() => startService(vars)), (s: Service) => Effect.sync(() => s.child.kill("SIGKILL")))
      const first = yield* start
      yield* Effect.gen(function* () {
        const t = yield* testTenant
        yield* fund(t, "proc-1", [1_000_000])
        const body = (ref: string) => ({ merchantTxRef: ref, amountKobo: 50_000, accountNumber: DIRECTORY.tunde.accountNumber, bankCode: DIRECTORY.tunde.bankCode })
        const post = (ref: string) => call("POST", "/api/v1/transfers/bank", { token: t.token, json: body(ref) })
        const inCall = ["p-call-1", "p-call-2", "p-call-3"]
        const inClaim = ["p-claim-1", "p-claim-2", "p-claim-3"]
        // Accepted (201 Processing), its outcome report not yet sent when the process dies.
        expect((yield* post("p-accepted")).body).toMatchObject({ status: "Processing" })
        // Claimed, and stuck in the provider call: the sandbox bank cannot record a transfer while we lock its table.
        const provider = yield* holdLock(dbUrl, "LOCK TABLE sandbox_provider_transfers IN EXCLUSIVE MODE")
        yield* Effect.forEach(inCall, (ref) => Effect.forkDaemon(Effect.exit(post(ref))))
        yield* lockWaiters(name, "%INSERT INTO sandbox_provider_transfers%", inCall.length)
        // Inside the claim's transaction: the day's cap row is locked, so the claims wait before they commit.
        const cap = yield* holdLock(dbUrl, `SELECT * FROM payout_days WHERE tenant_id = '${t.tenantId}' FOR UPDATE`)
        yield* Effect.forEach(inClaim, (ref) => Effect.forkDaemon(Effect.exit(post(ref))))
        yield* lockWaiters(name, "%FROM payout_days%FOR UPDATE%", inClaim.length)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)
        yield* provider.release
        yield* cap.release
        yield* lockWaiters(name, "%", 0)
        const left = yield* transfersOf(t.tenantId)
        expect(left.map((x) => x.merchantTxRef).sort()).toEqual(["p-accepted", ...inCall]) // the claims died uncommitted
        expect(left.filter((x) => inCall.includes(x.merchantTxRef)).map((x) => x.status)).toEqual(["Pending", "Pending", "Pending"])
        // The provider calls had reached the sandbox bank (its statements were waiting on our lock) and finish now:
        // the bank has the transfers, we never heard. The restarted service must adopt them, not send them again.
        for (const ref of inCall) expect(yield* providerCalls(ref), ref).toBe(1)

        yield* Effect.gen(function* () {
          yield* start
          for (const ref of [...inCall, ...inClaim]) {
            const again = yield* post(ref)
            if (again.status === 409) expectProblem(again, 409, "request_in_progress")
            else expect([again.status, again.body.merchantTxRef]).toEqual([inClaim.includes(ref) ? 201 : 200, ref])
          }
          for (const ref of ["p-accepted", ...inCall, ...inClaim]) {
            expect((yield* waitForTransfer(t.token, ref)).status, ref).toBe("Successful")
            expect(yield* providerCalls(ref), ref).toBe(1)
          }
          expect(yield* nothingOpen).toEqual([])
          expect(yield* balanceOf(t.token)).toMatchObject({ availableKobo: 650_000, inTransitKobo: 0, paidOutTodayKobo: 350_000 })
          expect(yield* eventsOf(t.tenantId, "transfer.successful")).toBe(7)
          yield* assertLedgerInvariant
        }).pipe(Effect.scoped)
      }).pipe(Effect.provide(atProcess(first.baseUrl, dbUrl)))
    })), 180_000)
})
