import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpServer } from "@effect/platform"
import { call, makeTestApp } from "../support/TestApp.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"

layer(makeTestApp(), { timeout: 60_000, excludeTestServices: true })("checkout smoke", (it) => {
  it.effect("stream sees a deposit", () =>
    Effect.gen(function* () {
      const t = yield* testTenant
      const acc = yield* createAccount(t.token, "co-1", "Chiamaka Obi", 150_000)
      const s = yield* call("POST", "/api/v1/checkout/sessions", { token: t.token, json: { accountRef: "co-1" } })
      console.log(s.status, JSON.stringify(s.body))
      const snap = yield* call("GET", s.body.snapshotUrl)
      console.log(snap.status, JSON.stringify(snap.body))
      const page = yield* call("GET", s.body.hostedUrl, { headers: { accept: "text/html" } })
      console.log(page.status, page.contentType, String(page.body).length)
      const addr = yield* HttpServer.addressFormattedWith((a) => Effect.succeed(a))
      const events: Array<string> = []
      const ctrl = new AbortController()
      const reading = Effect.promise(async () => {
        const res = await fetch(`${addr}${s.body.streamUrl}`, { signal: ctrl.signal })
        const reader = res.body!.getReader()
        const dec = new TextDecoder()
        try {
          for (;;) {
            const { value, done } = await reader.read()
            if (done) break
            events.push(dec.decode(value))
          }
        } catch {}
      })
      yield* Effect.fork(reading)
      yield* Effect.sleep("500 millis")
      yield* sendSigned(t, { accountNumber: acc.nuban, amountKobo: 150_000, senderName: "OBI CHIAMAKA" })
      yield* waitForTransactions(t.tenantId, 1)
      yield* Effect.sleep("1500 millis")
      ctrl.abort()
      console.log(events.join(""))
      expect(events.join("")).toContain("event: update")
    }))
})
