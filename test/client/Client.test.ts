import { expect, layer } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { BadRequest, isProblem, makeClient, kobo, NotFound, withAccept, withToken } from "collections-service/client"
import { makeTestApp, signup } from "../support/TestApp.js"

/**
 * The package's typed client (`collections-service/client`, imported by its package name as a consumer would) against
 * the real service: a test API key's token, a virtual account created and read back as the contract's types, its
 * statement as JSON and (`withAccept("text/csv")`) as CSV text, and the problem classes for a 404 and a 400.
 */

const baseUrl = Effect.map(HttpServer.HttpServer, (s) =>
  s.address._tag === "TcpAddress" ? `http://127.0.0.1:${s.address.port}` : "")

layer(makeTestApp({ workers: false }), { timeout: 60_000 })("collections-service/client", (it) => {
  it.effect("creates a virtual account and reads it back, typed; a 404 and a 400 come back as problem classes", () =>
    Effect.gen(function* () {
      const { ownerToken } = yield* signup()
      const client = yield* makeClient({ baseUrl: yield* baseUrl })

      // The key and its token through the client too: the dashboard token, then the key's own.
      const key = yield* client.dashboard.createApiKey({ payload: { mode: "test" } }).pipe(withToken(ownerToken))
      const { accessToken } = yield* client.auth.token({ payload: { clientId: key.clientId, clientSecret: key.clientSecret } })
      const api = yield* makeClient({ baseUrl: yield* baseUrl, token: accessToken })

      const created = yield* api.virtualAccounts.create({ payload: { accountRef: "client:1.a", name: "Ada Obi", expectedAmountKobo: kobo(150_000) } })
      expect(created).toMatchObject({ accountRef: "client:1.a", name: "Ada Obi", mode: "test", paymentState: "AwaitingPayment" })
      const read = yield* api.virtualAccounts.get({ path: { accountRef: "client:1.a" } })
      const nuban: string = read.nuban
      expect(nuban).toBe(created.nuban)
      const amount: number = read.expectedAmountKobo ?? 0
      expect(amount).toBe(150_000)

      // An operation that answers JSON or CSV: the statement as the contract's type, or its CSV text with withAccept.
      const statement = yield* api.ledger.statement({ path: { accountRef: "client:1.a" }, urlParams: {} })
      if (typeof statement === "string") return expect.fail("the statement came back as text without Accept: text/csv")
      expect(statement).toMatchObject({ accountRef: "client:1.a", nuban, opening: { balanceKobo: 0 }, movements: [] })
      const csv = yield* api.ledger.statement({ path: { accountRef: "client:1.a" }, urlParams: {} }).pipe(withAccept("text/csv"))
      expect(typeof csv).toBe("string")
      expect(String(csv)).toMatch(/^date,.*\r\n/)
      expect(String(csv)).toContain("opening_balance")

      const missing = yield* Effect.flip(api.virtualAccounts.get({ path: { accountRef: "no-such-account" } }))
      expect(missing).toBeInstanceOf(NotFound)
      expect(isProblem(missing)).toBe(true)
      if (!(missing instanceof NotFound)) return
      expect(missing.code).toBe("virtual_account_not_found")
      expect(missing.message).toMatch(/no-such-account|not found/i)

      // A 400 from the service's own checks (the payload passes the client's encoding; the tenant has no such sub-merchant).
      const refused = yield* Effect.flip(api.virtualAccounts.create({ payload: { accountRef: "client-2", name: "Ada Obi", subMerchantRef: "sm-none" } }))
      expect(refused).toBeInstanceOf(BadRequest)
      if (!(refused instanceof BadRequest)) return
      expect(refused.code).toBe("unknown_sub_merchant")

      // Without a token: the middleware's 401, typed too.
      const anonymous = yield* makeClient({ baseUrl: yield* baseUrl })
      const unauthorized = yield* Effect.flip(anonymous.virtualAccounts.list({ urlParams: {} }))
      expect(unauthorized).toMatchObject({ _tag: "Unauthorized" })
    }))
})
