import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { openSse } from "../checkout/SseClient.js"
import { dashboardUser, expectProblem, expectStatus } from "../support/ApiHelpers.js"
import { createAccount } from "../support/Pipeline.js"
import { call, makeTestApp } from "../support/TestApp.js"
import { assertLedgerInvariant, fund, testTenant } from "../transfers/support.js"

// PATCH /api/v1/virtual-accounts/{accountRef} (DESIGN.md "Reading the ledger, events and statements"): details and the
// amount due change, the payment state follows, the NUBAN never changes; bad input is a 400, an unknown account a 404.

const VA = "/api/v1/virtual-accounts"
const patch = (token: string, ref: string, json: unknown) => call("PATCH", `${VA}/${ref}`, { token, json })

const updatedEvents = (tenantId: string, accountRef: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ envelope: any }>`SELECT envelope FROM outbox
    WHERE tenant_id = ${tenantId} AND event_type = 'virtual_account.updated' AND subject_key = ${accountRef} ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((r) => (typeof r.envelope === "string" ? JSON.parse(r.envelope) : r.envelope).data)),
    Effect.orDie
  )

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("PATCH a virtual account", (it) => {
  it.effect("a new amount due moves the payment state; the NUBAN stays; details change; each change is an event", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const { account } = yield* fund(t, "pa-1", [6_000], { expected: 10_000 })
      const before = (yield* call("GET", `${VA}/pa-1`, { token: t.token })).body
      expect(before).toMatchObject({ paymentState: "PartiallyPaid", deficit: 4_000 })
      const states: Array<[number, string, number, number]> = [
        [6_000, "FullyPaid", 0, 0], [5_000, "Overpaid", 0, 1_000], [20_000, "PartiallyPaid", 14_000, 0]
      ]
      for (const [expectedAmountKobo, paymentState, deficit, overpayment] of states) {
        const r = yield* patch(t.token, "pa-1", { expectedAmountKobo })
        expectStatus(r, 200)
        expect(r.body).toMatchObject({ accountRef: "pa-1", nuban: account.nuban, expectedAmountKobo, amountPaidKobo: 6_000, paymentState, deficit, overpayment })
        expect((yield* call("GET", `${VA}/pa-1`, { token: t.token })).body).toEqual(r.body)
      }
      const details = yield* patch(t.token, "pa-1", { name: "Adaeze O. Okafor", email: "adaeze@example.ng", phone: "+2348031234567", expiryDateUtc: "2027-01-31T23:00:00Z" })
      expectStatus(details, 200)
      expect(details.body).toMatchObject({
        name: "Adaeze O. Okafor", email: "adaeze@example.ng", phone: "+2348031234567", expiryDateUtc: "2027-01-31T23:00:00.000Z",
        nuban: account.nuban, bankCode: before.bankCode, accountName: before.accountName, createdAt: before.createdAt, paymentState: "PartiallyPaid"
      })
      const cleared = yield* patch(t.token, "pa-1", { email: null, phone: null, expiryDateUtc: null })
      expect(cleared.body).toMatchObject({ email: null, phone: null, expiryDateUtc: null, name: "Adaeze O. Okafor" })
      // The same values again change nothing, and send nothing.
      expect((yield* patch(t.token, "pa-1", { name: "Adaeze O. Okafor" })).body).toEqual(cleared.body)
      const events = yield* updatedEvents(t.tenantId, "pa-1")
      expect(events.map((e) => e.changed)).toEqual([
        ["expectedAmountKobo"], ["expectedAmountKobo"], ["expectedAmountKobo"], ["name", "email", "phone", "expiryDateUtc"], ["email", "phone", "expiryDateUtc"]
      ])
      expect(events[0].account).toMatchObject({ paymentState: "FullyPaid", nuban: account.nuban })

      // An account with nothing paid awaits payment; an open one given an amount is no longer open.
      yield* createAccount(t.token, "pa-2", "Bola Ade", 3_000)
      expect((yield* patch(t.token, "pa-2", { expectedAmountKobo: 4_500 })).body).toMatchObject({ paymentState: "AwaitingPayment", deficit: 4_500 })
      yield* createAccount(t.token, "pa-3", "Open Payer")
      expect((yield* call("GET", `${VA}/pa-3`, { token: t.token })).body.paymentState).toBe("Open")
      expect((yield* patch(t.token, "pa-3", { expectedAmountKobo: 100 })).body).toMatchObject({ paymentState: "AwaitingPayment", expectedAmountKobo: 100 })
      yield* assertLedgerInvariant
    }))

  it.effect("bad input is a 400 problem (every field at once), unknown accounts 404, a Member 403", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "pb-1", "Kemi Ade", 5_000)
      expectProblem(yield* patch(t.token, "pb-1", {}), 400, "validation_failed")
      expectProblem(yield* patch(t.token, "pb-1", { nuban: "0123456789" }), 400, "unknown_field")
      const typo = yield* patch(t.token, "pb-1", { expectedAmountKbo: 100 })
      expectProblem(typo, 400, "unknown_field")
      expect(typo.body.message).toContain("expectedAmountKobo")
      for (const bad of [{ expectedAmountKobo: 0 }, { expectedAmountKobo: -1 }, { expectedAmountKobo: "100" }, { expectedAmountKobo: 1.5 }, { expectedAmountKobo: null },
        { name: "" }, { name: 7 }, { email: "not-an-email" }, { phone: "call me" }, { expiryDateUtc: "tomorrow" }]) {
        expectProblem(yield* patch(t.token, "pb-1", bad), 400, "validation_failed")
      }
      const many = yield* patch(t.token, "pb-1", { expectedAmountKobo: -5, email: "x", expiryDateUtc: "soon" })
      expectProblem(many, 400, "validation_failed")
      expect((many.body.errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(["email", "expectedAmountKobo", "expiryDateUtc"])
      const naira = yield* call("PATCH", `${VA}/pb-1`, { token: t.token, rawBody: "{\"expectedAmountKobo\": 1500.00}" })
      expectProblem(naira, 400, "validation_failed")
      expectProblem(yield* call("PATCH", `${VA}/pb-1`, { token: t.token, rawBody: "x=1", contentType: "text/plain" }), 415, "unsupported_media_type")
      expectProblem(yield* patch(t.token, "nope", { name: "X" }), 404, "virtual_account_not_found")
      expectProblem(yield* patch(t.ownerToken, "pb-1", { name: "X" }), 404, "virtual_account_not_found")
      const member = yield* dashboardUser(t, "Member")
      expectProblem(yield* patch(member.token, "pb-1", { name: "X" }), 403, "insufficient_role")
      expect((yield* call("GET", `${VA}/pb-1`, { token: t.token })).body).toMatchObject({ name: "Kemi Ade", expectedAmountKobo: 5_000 })
    }))

  it.scoped("an open checkout stream follows a new amount due at once", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      yield* createAccount(t.token, "pc-1", "Amaka Eze", 30_000)
      const s = yield* call("POST", "/api/v1/checkout/sessions", { token: t.token, json: { accountRef: "pc-1" } })
      expectStatus(s, 201)
      const base = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const stream = yield* Effect.acquireRelease(Effect.promise(() => openSse(`${base}${s.body.streamUrl}`)), (x) => Effect.sync(() => x.close()))
      yield* Effect.promise(() => stream.eventCount(1))
      expectStatus(yield* patch(t.token, "pc-1", { expectedAmountKobo: 45_000 }), 200)
      // Well within the 15 s heartbeat: the update comes from the event, not a re-read on the heartbeat.
      const [, update] = yield* Effect.promise(() => stream.eventCount(2, 8_000))
      expect(update!.event).toBe("update")
      expect(JSON.parse(update!.data!)).toMatchObject({ status: "awaiting_payment", amountDueKobo: 45_000, remainingKobo: 45_000 })
    }))
})
