import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import { ProviderCircuits, makeProviderHttp } from "../../services/providers/ProviderHttp.js"
import { startPaystackFake } from "../fakes/PaystackFake.js"
import { newSecretKey } from "./support.js"

/** ProviderHttp against the fake Paystack: what it retries, what it never re-sends, the 429 back-off, and the circuit. */
const fake = await startPaystackFake()
afterAll(() => fake.close())

layer(ProviderCircuits.Default, { timeout: 30_000, excludeTestServices: true })("provider calls", (it) => {
  const client = (secretKey: string, baseUrl = fake.url) =>
    makeProviderHttp({
      provider: "paystack", baseUrl, timeoutMs: 500, backoffMs: 10,
      authorization: Effect.succeed(Redacted.make(`Bearer ${secretKey}`))
    })

  it.effect("a read is retried after a 5xx; a write is sent once; a 429 is backed off and sent again; no key in an error", () =>
    Effect.gen(function* () {
      const key = newSecretKey("test")
      fake.addIntegration({ secretKey: key })
      const http = yield* client(key)
      const before = fake.calls("bank.list").length
      fake.fault("bank.list", "5xx", 2)
      const read = yield* http.send({ method: "GET", path: "/bank", query: { perPage: 1 }, idempotent: true, what: "bank list" })
      expect(read.status).toBe(200)
      expect(fake.calls("bank.list").length - before).toBe(3)

      fake.fault("transferrecipient.create", "5xx", 1)
      const body = { type: "nuban", name: "ADAEZE OKAFOR", account_number: "0123456785", bank_code: "058", currency: "NGN" }
      const write = yield* Effect.either(http.send({ method: "POST", path: "/transferrecipient", body, idempotent: false, what: "transfer recipient" }))
      expect(Either.isLeft(write)).toBe(true)
      expect(fake.calls("transferrecipient.create")).toHaveLength(1)
      const reason = Either.isLeft(write) ? write.left.reason : ""
      expect(reason).toBe("paystack transfer recipient: answered 500")
      expect(reason).not.toContain(key)

      fake.fault("transferrecipient.create", "429", 2)
      const limited = yield* http.send({ method: "POST", path: "/transferrecipient", body, idempotent: false, what: "transfer recipient" })
      expect(limited.status).toBe(201)
      expect(fake.calls("transferrecipient.create")).toHaveLength(4)

      fake.fault("bank.list", "hang", 1)
      const hung = yield* http.send({ method: "GET", path: "/bank", query: { perPage: 1 }, idempotent: true, what: "bank list" })
      expect(hung.status).toBe(200)
      fake.clearFaults()
    }))

  it.effect("after repeated failures the circuit fails fast without calling the provider; another host has its own circuit", () =>
    Effect.gen(function* () {
      // A port nothing listens on: every call is a refused connection.
      const http = yield* client(newSecretKey("test"), "http://127.0.0.1:9")
      for (let i = 0; i < 2; i++) {
        const r = yield* Effect.either(http.send({ method: "GET", path: "/bank", idempotent: true, what: "bank list" }))
        expect(Either.isLeft(r)).toBe(true)
      }
      const circuits = yield* ProviderCircuits
      const state = yield* circuits.state("paystack|http://127.0.0.1:9")
      expect(state.openUntil).toBeGreaterThan(Date.now())
      const fast = yield* Effect.either(http.send({ method: "GET", path: "/bank", idempotent: true, what: "bank list" }))
      expect(Either.isLeft(fast) && fast.left.reason).toMatch(/circuit is open/)
      // Another base URL (another provider host) has its own circuit.
      const key = newSecretKey("test")
      fake.addIntegration({ secretKey: key })
      expect((yield* (yield* client(key)).send({ method: "GET", path: "/bank", idempotent: true, what: "bank list" })).status).toBe(200)
    }))
})
