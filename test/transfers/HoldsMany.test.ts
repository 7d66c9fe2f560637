import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Data, Effect } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import { Holds, type HoldUpTo } from "../../services/transfers/Holds.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, DIRECTORY, fund, testTenant, waitForTransfer } from "./support.js"

/**
 * `Holds.holdUpToMany` (the automation actor's holds, issue 33) answers and writes what `holdUpTo` called for each
 * request in turn does. Both run on the same state: the one-by-one run inside a transaction that is then rolled back.
 */

class RolledBack extends Data.TaggedError("RolledBack")<{ readonly value: unknown }> {}

/** What a hold step leaves behind: the tenant's holds, journals, audit entries and balances (the stripes as one sum). */
const snapshot = (tenantId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const holds = yield* sql`SELECT reference, account_ref, seq, held_kobo, status, reason, created_by FROM holds WHERE tenant_id = ${tenantId} ORDER BY reference`
    const entries = yield* sql`SELECT journal_id, account, amount_kobo FROM ledger_entries WHERE tenant_id = ${tenantId} ORDER BY journal_id, account`
    const audit = yield* sql`SELECT actor, action, subject, details FROM audit_log WHERE tenant_id = ${tenantId} AND action = 'hold.placed' ORDER BY id`
    const balances = yield* sql`SELECT CASE WHEN account LIKE 'available:%' THEN 'available' ELSE account END AS account, sum(balance_kobo)::bigint AS kobo
      FROM ledger_balances WHERE tenant_id = ${tenantId} GROUP BY 1 ORDER BY 1`
    return { holds, entries, audit, balances }
  }).pipe(Effect.orDie)

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("holds placed together", (it) => {
  it.effect("holdUpToMany answers and writes what holdUpTo one by one does: shared free money, repeats, holds already there, what is not credited", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const holds = yield* Holds
      const t = yield* testTenant
      const scope: Scope = { tenantId: t.tenantId, mode: "test" }
      const a = yield* fund(t, "hm-a", [15_000, 4_000, 6_000], { expected: 10_000 })
      const b = yield* fund(t, "hm-b", [8_000, 3_000])
      const [a1, a2, a3] = a.references as [string, string, string]
      const [b1, b2] = b.references as [string, string]
      // A person's hold already on b2, and a payout that leaves the tenant 13,000 of its 36,000 available.
      expectStatus(yield* call("POST", `/api/v1/settlements/${b2}/hold`, { token: t.token, json: { amountKobo: 1_000 } }), 200)
      expectStatus(yield* call("POST", "/api/v1/transfers/bank", {
        token: t.token, json: { merchantTxRef: "hm-payout", amountKobo: 22_000, ...DIRECTORY.ibrahim, accountName: undefined }
      }), 201)
      expect((yield* waitForTransfer(t.token, "hm-payout")).status).toBe("Successful")
      const ask = (reference: string, upToKobo: number, actor = "rule:mr_1"): HoldUpTo => ({ reference, upToKobo, reason: "overpaid", actor })
      const requests = [
        ask(a1, 5_000), // placed in full
        ask(a2, 9_000), // more than the deposit: its applied part
        ask(a1, 5_000, "flow:pf_1"), // the same deposit again: already held
        ask(b2, 3_000), // a hold already there
        ask(a3, 6_000), // the tenant's available money runs short: what is left of it
        ask(b1, 8_000), // nothing left
        ask("hm-no-such-deposit", 1_000) // not credited
      ]

      const before = yield* snapshot(t.tenantId)
      const oneByOne = yield* sql.withTransaction(Effect.gen(function* () {
        const results = yield* Effect.forEach(requests, (q) => holds.holdUpTo(scope, q.reference, q.upToKobo, q.reason, q.actor))
        return yield* Effect.fail(new RolledBack({ value: { results, after: yield* snapshot(t.tenantId) } }))
      })).pipe(Effect.catchTag("RolledBack", (e) => Effect.succeed(e.value as { results: unknown; after: unknown })), Effect.orDie)
      expect(yield* snapshot(t.tenantId)).toEqual(before)

      const together = yield* sql.withTransaction(holds.holdUpToMany(scope, requests)).pipe(Effect.orDie)
      expect(together).toEqual(oneByOne.results)
      expect(yield* snapshot(t.tenantId)).toEqual(oneByOne.after)
      // The cases each came up (the payout left the tenant less than the account's free money).
      expect(together.map((r) => r.kind)).toEqual(["placed", "placed", "already-held", "already-held", "placed", "nothing-free", "not-credited"])
      expect(together[4]).toMatchObject({ kind: "placed", askedKobo: 6_000 })
      expect((together[4] as { heldKobo: number }).heldKobo).toBeLessThan(6_000)
      yield* assertLedgerInvariant
    }))
})
