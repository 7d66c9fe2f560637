import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { PUBLIC_EVENT_TYPES } from "../../src/contract/Events.js"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { assertLedgerInvariant, createAccount, testTenant } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

/**
 * `GET /api/v1/events` and `GET /api/v1/events/{id}` on the real service (Postgres, NATS, the workers): the public
 * events of the caller's tenant and mode, the envelope as webhooks carry it, newest first, 30 days, never internal ones.
 */

type Tenant = Effect.Effect.Success<typeof testTenant>

/** A tenant with an account and `n` reconciled sandbox deposits (one `deposit.reconciled` each), and its outbox rows. */
const tenantWithDeposits = (n: number) =>
  Effect.gen(function* () {
    const t = yield* testTenant
    const ref = `ev-${crypto.randomBytes(3).toString("hex")}`
    yield* createAccount(t.token, ref, "Ngozi Eze")
    for (let i = 1; i <= n; i++) {
      const r = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token: t.token, json: { accountRef: ref, amountKobo: 10_000 * i, senderName: "EZE NGOZI" } })
      expectStatus(r, 200)
    }
    const sql = yield* SqlClient.SqlClient
    yield* waitFor(`${n} deposit.reconciled events of ${t.tenantId}`,
      sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type = 'deposit.reconciled'`.pipe(Effect.map((r) => r[0]!.n)),
      { until: (c) => c >= n, timeoutMs: 30_000 })
    return { t, ref }
  })

/** Stages a row in the outbox directly (a type, a mode, an age), as Outbox.stage would write it. */
const insertEvent = (t: Pick<Tenant, "tenantId">, type: string, mode: "test" | "live", ageDays = 0) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = `evt_${crypto.randomBytes(8).toString("hex")}`
    const createdAt = new Date(Date.now() - ageDays * 86_400_000)
    const envelope = JSON.stringify({ id, type, createdAt: createdAt.toISOString(), mode, data: { accountId: "va_x" } })
    yield* sql`INSERT INTO outbox (event_id, tenant_id, mode, event_type, subject_key, envelope, created_at)
      VALUES (${id}, ${t.tenantId}, ${mode}, ${type}, 'x', ${envelope}::json, ${createdAt})`
    return id
  })

const list = (token: string, query = "") => call("GET", `/api/v1/events${query}`, { token })

layer(makeTestApp(), { timeout: 90_000, excludeTestServices: true })("GET /api/v1/events", (it) => {
  it.effect("lists the tenant's public events newest first, each the envelope its webhooks carry, and gets one by id", () =>
    Effect.gen(function* () {
      const { t, ref } = yield* tenantWithDeposits(3)
      const r = yield* list(t.token)
      expectStatus(r, 200)
      expect(r.body.hasMore).toBe(false)
      expect(r.body.data.map((e: any) => e.type)).toEqual(["deposit.reconciled", "deposit.reconciled", "deposit.reconciled"])
      // Newest first: the last deposit (30,000 kobo) comes first.
      expect(r.body.data.map((e: any) => e.data.transaction.amountKobo)).toEqual([30_000, 20_000, 10_000])
      const first = r.body.data[0]
      expect(Object.keys(first)).toEqual(["id", "type", "createdAt", "mode", "data"])
      expect(first).toMatchObject({ mode: "test", data: { transaction: { accountRef: ref }, account: { accountRef: ref } } })
      // The same envelope as staged (what a webhook delivery sends), data and all.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ envelope: string }>`SELECT envelope::text AS envelope FROM outbox WHERE event_id = ${first.id}`
      expect(first).toEqual(JSON.parse(row!.envelope))
      const one = yield* call("GET", `/api/v1/events/${first.id}`, { token: t.token })
      expectStatus(one, 200)
      expect(one.body).toEqual(first)
      // The dashboard's Owner in test mode reads them too; a Member does not (as webhook endpoints).
      expect((yield* list(t.testOwnerToken)).body.data).toHaveLength(3)
      const member = (yield* dashboardUser(t, "Member")).token
      expectProblem(yield* list(member), 403, "insufficient_role")
      expectProblem(yield* call("GET", `/api/v1/events/${first.id}`, { token: member }), 403, "insufficient_role")
      expect((yield* call("GET", "/api/v1/events")).status).toBe(401)
      yield* assertLedgerInvariant
    }))

  it.effect("pages with take and startingAfter; take is bounded; an unknown key or parameter is a 400", () =>
    Effect.gen(function* () {
      const { t } = yield* tenantWithDeposits(3)
      const all = (yield* list(t.token)).body.data.map((e: any) => e.id)
      const p1 = yield* list(t.token, "?take=2")
      expectStatus(p1, 200)
      expect(p1.body.data.map((e: any) => e.id)).toEqual(all.slice(0, 2))
      expect(p1.body.hasMore).toBe(true)
      const p2 = yield* list(t.token, `?take=2&startingAfter=${p1.body.data[1].id}`)
      expect(p2.body.data.map((e: any) => e.id)).toEqual(all.slice(2))
      expect(p2.body.hasMore).toBe(false)
      expect((yield* list(t.token, "?take=100000")).body.data).toHaveLength(3)
      expectProblem(yield* list(t.token, "?startingAfter=evt_nope"), 400, "unknown_starting_after")
      expectProblem(yield* list(t.token, "?take=0"), 400, "validation_failed")
      expectProblem(yield* list(t.token, "?take=abc"), 400, "validation_failed")
      expectProblem(yield* list(t.token, "?tpye=deposit.reconciled"), 400, "unknown_parameter")
    }))

  it.effect("filters by type (any case); an unknown or internal type is a 400 naming the public ones", () =>
    Effect.gen(function* () {
      const { t } = yield* tenantWithDeposits(2)
      yield* insertEvent(t, "transfer.failed", "test")
      expect((yield* list(t.token)).body.data).toHaveLength(3)
      const deposits = yield* list(t.token, "?type=deposit.reconciled")
      expect(deposits.body.data.map((e: any) => e.type)).toEqual(["deposit.reconciled", "deposit.reconciled"])
      expect((yield* list(t.token, "?type=TRANSFER.FAILED")).body.data.map((e: any) => e.type)).toEqual(["transfer.failed"])
      expect((yield* list(t.token, "?type=settlement.paid")).body).toEqual({ data: [], hasMore: false })
      for (const bad of ["deposit.recon", "internal.insights.account", ""]) {
        const r = yield* list(t.token, `?type=${encodeURIComponent(bad)}`)
        expectProblem(r, 400, "validation_failed")
        for (const type of PUBLIC_EVENT_TYPES) expect(JSON.stringify(r.body), bad).toContain(type)
      }
    }))

  it.effect("never shows internal events, in the list or by id", () =>
    Effect.gen(function* () {
      const { t } = yield* tenantWithDeposits(1)
      const internal = yield* insertEvent(t, "internal.insights.account", "test")
      const sql = yield* SqlClient.SqlClient
      // Creating the account staged internal events of its own as well.
      const [staged] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE tenant_id = ${t.tenantId} AND event_type LIKE 'internal.%'`
      expect(staged!.n).toBeGreaterThanOrEqual(2)
      const r = yield* list(t.token, "?take=500")
      expect(r.body.data.map((e: any) => e.type)).toEqual(["deposit.reconciled"])
      expectProblem(yield* call("GET", `/api/v1/events/${internal}`, { token: t.token }), 404, "event_not_found")
      expectProblem(yield* list(t.token, `?startingAfter=${internal}`), 400, "unknown_starting_after")
    }))

  it.effect("shows only the caller's tenant and mode: a live token sees none of the test events, nor another tenant any", () =>
    Effect.gen(function* () {
      const { t } = yield* tenantWithDeposits(1)
      const testEvent = (yield* list(t.token)).body.data[0].id as string
      const liveEvent = yield* insertEvent(t, "transfer.successful", "live")
      // The Owner's dashboard token acts in live mode: only the live event.
      const live = yield* list(t.ownerToken)
      expectStatus(live, 200)
      expect(live.body.data.map((e: any) => e.id)).toEqual([liveEvent])
      expectProblem(yield* call("GET", `/api/v1/events/${testEvent}`, { token: t.ownerToken }), 404, "event_not_found")
      expect((yield* list(t.token)).body.data.map((e: any) => e.id)).toEqual([testEvent])
      expectProblem(yield* call("GET", `/api/v1/events/${liveEvent}`, { token: t.token }), 404, "event_not_found")
      // Another tenant, same mode: nothing of the first's.
      const other = yield* testTenant
      expect((yield* list(other.token)).body).toEqual({ data: [], hasMore: false })
      expectProblem(yield* call("GET", `/api/v1/events/${testEvent}`, { token: other.token }), 404, "event_not_found")
      expectProblem(yield* list(other.token, `?startingAfter=${testEvent}`), 400, "unknown_starting_after")
      expectProblem(yield* call("GET", "/api/v1/events/evt_unknown", { token: t.token }), 404, "event_not_found")
    }))

  it.effect("shows only the last 30 days", () =>
    Effect.gen(function* () {
      const { t } = yield* tenantWithDeposits(2)
      const sql = yield* SqlClient.SqlClient
      const [older, newer] = (yield* list(t.token)).body.data.map((e: any) => e.id).reverse()
      yield* sql`UPDATE outbox SET created_at = now() - interval '31 days' WHERE event_id = ${older}`
      const within = yield* insertEvent(t, "settlement.paid", "test", 29)
      const r = yield* list(t.token)
      expect(r.body.data.map((e: any) => e.id)).toEqual([newer, within])
      expectProblem(yield* call("GET", `/api/v1/events/${older}`, { token: t.token }), 404, "event_not_found")
      expectStatus(yield* call("GET", `/api/v1/events/${within}`, { token: t.token }), 200)
      expectProblem(yield* list(t.token, `?startingAfter=${older}`), 400, "unknown_starting_after")
    }))
})
