import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectStatus } from "../support/ApiHelpers.js"
import { atProcess, holdLock, lockWaiters } from "../support/Crash.js"
import { freePort, type Service, startService, tempDir } from "../support/Processes.js"
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from "../support/TestDatabase.js"
import { call } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"
import { assertLedgerInvariant, DIRECTORY, fund, providerCalls, testTenant, waitForTransfer } from "../transfers/support.js"

const ACCOUNTS = 6
const CONCURRENCY = 4

/** The tenant's settlement legs as the database has them: latest transfer, its status, how often the bank was asked. */
const legsOf = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ transferRef: string; status: string; attempts: number }>`SELECT l.transfer_ref, t.status, l.attempts FROM settlement_legs l
      JOIN transfers t ON t.tenant_id = l.tenant_id AND t.mode = l.mode AND t.merchant_tx_ref = l.transfer_ref
      WHERE l.tenant_id = ${tenantId} ORDER BY l.transfer_ref`).pipe(Effect.orDie)

const countOf = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => query(sql)).pipe(Effect.map((r) => r[0]!.n), Effect.orDie)

describe("the service process killed in the middle of a settlement run", () => {
  it.live("SIGKILL while a run's legs are in provider calls: restarted, every leg paid once, every account settled once", () =>
    Effect.scoped(Effect.gen(function* () {
      const name = yield* Effect.promise(() => createScratchDatabase("settlecrash"))
      yield* Effect.addFinalizer(() => Effect.promise(() => dropScratchDatabase(name).catch(() => undefined)))
      const dbUrl = databaseUrl(name)
      const vars = {
        PORT: String(yield* Effect.promise(freePort)), DATABASE_URL: dbUrl, DATA_DIR: tempDir("settlecrash-"), LOG_LEVEL: "Error",
        MONEY_OUT_LEASE_MS: "4000", PROVIDER_TIMEOUT_MS: "2000", MONEY_OUT_COMPLETER_INTERVAL_MS: "200", MONEY_OUT_STATUS_CHECK_AFTER_MS: "600",
        SANDBOX_TRANSFER_REPORT_DELAY_MS: "200", SANDBOX_TRANSFER_REPORT_INTERVAL_MS: "100",
        // The worker stays out of it (a run is asked for by hand); a dead run frees its tenant after 3 s.
        SETTLEMENT_INTERVAL_MS: "3600000", SETTLEMENT_RUN_LEASE_MS: "3000", SETTLEMENT_CONCURRENCY: String(CONCURRENCY)
      }
      const start = Effect.acquireRelease(Effect.promise(() => startService(vars)), (s: Service) => Effect.sync(() => s.child.kill("SIGKILL")))
      const first = yield* start
      yield* Effect.gen(function* () {
        const t = yield* testTenant
        const sm = yield* call("POST", "/api/v1/sub-merchants", { token: t.token, json: { name: "Bolanle Adeyemi", reference: "sm-b" } })
        expectStatus(yield* call("PUT", `/api/v1/sub-merchants/${sm.body.id}/payout`, { token: t.token, json: { bankCode: "057", accountNumber: DIRECTORY.bolanle.accountNumber } }), 200)
        expectStatus(yield* call("PUT", "/api/v1/settings/settlement", {
          token: t.token, json: { settlementAccountNumber: DIRECTORY.ngozi.accountNumber, settlementBankCode: "011", settlementAccountName: "Ngozi Eze Enterprises" }
        }), 200)
        expectStatus(yield* call("PUT", "/api/v1/settings/splits", { token: t.token, json: { splits: [{ subMerchantRef: "sm-b", bps: 3_000, priority: 1 }] } }), 200)
        for (let i = 1; i <= ACCOUNTS; i++) yield* fund(t, `crash-${i}`, [10_000 + i], { expected: 10_000 + i })

        // The sandbox bank cannot record a transfer while we lock its table: each account claimed so far waits in the
        // provider call of its first leg (the run settles CONCURRENCY accounts at a time), its claim committed.
        const bank = yield* holdLock(dbUrl, "LOCK TABLE sandbox_provider_transfers IN EXCLUSIVE MODE")
        yield* Effect.forkDaemon(Effect.exit(call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })))
        yield* lockWaiters(name, "%INSERT INTO sandbox_provider_transfers%", CONCURRENCY)
        first.child.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)
        yield* bank.release
        yield* lockWaiters(name, "%", 0)

        // What the crash left: CONCURRENCY settlements, two legs each, all Pending; the first leg of each reached the
        // bank (its statement was waiting on our lock and finished), the second never did.
        const left = yield* legsOf(t.tenantId)
        expect(left).toHaveLength(2 * CONCURRENCY)
        expect(new Set(left.map((l) => l.status))).toEqual(new Set(["Pending"]))
        const calls = yield* Effect.forEach(left, (l) => providerCalls(l.transferRef))
        expect(calls.filter((c) => c === 1)).toHaveLength(CONCURRENCY)
        expect(calls.filter((c) => c === 0)).toHaveLength(CONCURRENCY)

        yield* Effect.gen(function* () {
          yield* start
          // The dead run's lease runs out within 3 s; then a run settles the accounts it never reached.
          const run = yield* waitFor("the dead run to let go of the tenant (a run not answered 409)", call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken }), {
            until: (r) => r.status !== 409,
            timeoutMs: 15_000,
            intervalMs: 250
          })
          expectStatus(run, 200)
          expect(run.body.settledCount).toBe(ACCOUNTS - CONCURRENCY)
          // The completer finishes the legs the crash left: it adopts what the bank has and sends what it never got.
          const legs = yield* legsOf(t.tenantId)
          expect(legs).toHaveLength(2 * ACCOUNTS)
          for (const l of legs) {
            expect((yield* waitForTransfer(t.token, l.transferRef)).status, l.transferRef).toBe("Successful")
            expect(yield* providerCalls(l.transferRef), l.transferRef).toBe(1)
            expect(l.attempts).toBe(1)
          }
          expect(yield* countOf((sql) => sql`SELECT count(*)::int AS n FROM settlements WHERE tenant_id = ${t.tenantId}`)).toBe(ACCOUNTS)
          expect(yield* countOf((sql) => sql`SELECT count(DISTINCT virtual_account_id)::int AS n FROM settlements WHERE tenant_id = ${t.tenantId}`)).toBe(ACCOUNTS)
          const paid = yield* waitFor(
            `${ACCOUNTS} settlements Paid`,
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql<{ n: number }>`SELECT count(*)::int AS n FROM settlements WHERE tenant_id = ${t.tenantId} AND status = 'Paid'`).pipe(Effect.map((r) => r[0]!.n)),
            { until: (n) => n === ACCOUNTS, timeoutMs: 15_000, intervalMs: 100 }
          )
          expect(paid).toBe(ACCOUNTS)
          expect(yield* countOf((sql) => sql`SELECT count(*)::int AS n FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'settlement.paid'`)).toBe(ACCOUNTS)
          // Nothing is left to settle: a further run makes no settlement.
          expect((yield* call("POST", "/api/v1/settlements/run", { token: t.testOwnerToken })).body).toMatchObject({ settledCount: 0, data: [] })
          yield* assertLedgerInvariant
        }).pipe(Effect.scoped)
      }).pipe(Effect.provide(atProcess(first.baseUrl, dbUrl)))
    })), 180_000)
})
