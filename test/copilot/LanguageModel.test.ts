import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as http from "node:http"
import { afterAll } from "vitest"
import type { AddressInfo } from "node:net"
import { acceptRephrasing, CopilotLlmSettings } from "../../services/copilot/LanguageModel.js"
import { expectStatus } from "../support/ApiHelpers.js"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"
import { ask } from "./support.js"

// The copilot's LanguageModel port against a fake OpenAI-compatible server on 127.0.0.1 that this test starts: off by
// default (never called); on, its rephrasing is used only when every number in it is the answer's, and a timeout, a
// 500 or a malformed reply keeps the deterministic answer. The request carries the deterministic answer and its
// figures only.

interface Seen { readonly path: string; readonly authorization: string | undefined; readonly body: any }
type Reply = { readonly status: number; readonly body: string; readonly delayMs?: number }
let behaviour: (answer: string) => Reply = () => ({ status: 500, body: "{}" })
const seen: Array<Seen> = []

const completion = (content: string): Reply => ({ status: 200, body: JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }) })

const server = http.createServer((req, res) => {
  let raw = ""
  req.on("data", (c) => (raw += c))
  req.on("end", () => {
    let body: any = raw
    try { body = JSON.parse(raw) } catch { /* recorded as text */ }
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization, body })
    const answer = (() => { try { return JSON.parse(body.messages[1].content).answer as string } catch { return "" } })()
    const reply = behaviour(answer)
    setTimeout(() => {
      if (res.destroyed) return
      res.writeHead(reply.status, { "content-type": "application/json" })
      res.end(reply.body)
    }, reply.delayMs ?? 0)
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const port = (server.address() as AddressInfo).port
const TIMEOUT_MS = 600
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** One tenant whose test mode collected ₦2,000.00 in one deposit today. */
const seed = Effect.gen(function* () {
  const t = yield* testTenant
  const va = yield* createAccount(t.token, "LLM-1", "Bisi Adebayo", 500_000)
  expect((yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 200_000, senderName: "BISI ADEBAYO" })).status).toBe(200)
  yield* waitForTransactions(t.tenantId, 1)
  return t
})
const QUESTION = "How much did we collect today?"
const DETERMINISTIC = /^Collections today \(.*\): ₦2,000\.00 from 1 deposit\./

layer(makeTestApp(), { timeout: 120_000, excludeTestServices: true })("the language model, off by default", (it) => {
  it.effect("no COPILOT_LLM_URL: the deterministic answer, rephrased false, and the model is never called", () =>
    Effect.gen(function* () {
      behaviour = (a) => completion(`Rephrased: ${a}`)
      seen.length = 0
      const t = yield* seed
      const r = yield* ask(t.testOwnerToken, QUESTION)
      expectStatus(r, 200)
      expect(r.body.answer).toMatch(DETERMINISTIC)
      expect(r.body.rephrased).toBe(false)
      expect(seen).toHaveLength(0)
    }))
})

const settings = Layer.succeed(CopilotLlmSettings, { url: `http://127.0.0.1:${port}/v1`, model: "fake-model", apiKey: Redacted.make("sk-fake-key"), timeoutMs: TIMEOUT_MS })

layer(makeTestApp().pipe(Layer.provide(settings)), { timeout: 120_000, excludeTestServices: true })("the language model, on", (it) => {
  const tenant = Effect.cached(seed).pipe(Effect.runSync)
  const askWith = (reply: (answer: string) => Reply) =>
    Effect.gen(function* () {
      const t = yield* tenant
      behaviour = reply
      seen.length = 0
      const started = Date.now()
      const r = yield* ask(t.testOwnerToken, QUESTION)
      expectStatus(r, 200)
      expect(r.body.intent).toBe("collections_summary")
      expect(r.body.figures).toMatchObject({ collectedKobo: 200_000, depositCount: 1 })
      return { r, t, ms: Date.now() - started }
    })

  it.effect("a rephrasing whose numbers are the answer's is used; the request carries only the answer and its figures", () =>
    Effect.gen(function* () {
      const { r, t } = yield* askWith((a) => completion(`Good news! ${a.replace("Collections", "Your collections")}`))
      expect(r.body.rephrased).toBe(true)
      expect(r.body.answer).toMatch(/^Good news! Your collections today \(.*\): ₦2,000\.00 from 1 deposit\./)
      expect(seen).toHaveLength(1)
      const req = seen[0]!
      expect(req.path).toBe("/v1/chat/completions")
      expect(req.authorization).toBe("Bearer sk-fake-key")
      expect(req.body.model).toBe("fake-model")
      expect(req.body.messages).toHaveLength(2)
      expect(req.body.messages[0].role).toBe("system")
      const user = JSON.parse(req.body.messages[1].content)
      expect(Object.keys(user).sort()).toEqual(["answer", "figures"])
      expect(user.answer).toMatch(DETERMINISTIC)
      expect(user.figures).toEqual(r.body.figures)
      // Not the question, not the tenant, not the references.
      const sent = JSON.stringify(req.body)
      for (const secret of [QUESTION, t.tenantId, "LLM-1", "Bisi"]) expect(sent).not.toContain(secret)
      // The same numbers written another way are still the answer's numbers.
      const loose = yield* askWith(() => completion("Today you collected ₦2,000 from 1 deposit."))
      expect(loose.r.body).toMatchObject({ rephrased: true, answer: "Today you collected ₦2,000 from 1 deposit." })
    }))

  it.effect("a rephrasing that invents a number is rejected: the deterministic answer stays", () =>
    Effect.gen(function* () {
      for (const invented of ["Today you collected ₦2,500.00 from 1 deposit.", "You collected ₦2,000.00 from 3 deposits.", "₦2,000.00 came in; expect ₦9,999.99 tomorrow."]) {
        const { r } = yield* askWith(() => completion(invented))
        expect(r.body.rephrased, invented).toBe(false)
        expect(r.body.answer).toMatch(DETERMINISTIC)
        expect(seen).toHaveLength(1)
      }
    }))

  it.effect("a timeout, a 500, a malformed or empty reply keep the deterministic answer", () =>
    Effect.gen(function* () {
      const slow = yield* askWith((a) => ({ ...completion(`Slowly: ${a}`), delayMs: TIMEOUT_MS * 4 }))
      expect(slow.r.body.rephrased).toBe(false)
      expect(slow.r.body.answer).toMatch(DETERMINISTIC)
      expect(slow.ms).toBeLessThan(TIMEOUT_MS * 3)
      for (const reply of [
        { status: 500, body: JSON.stringify({ error: { message: "overloaded" } }) },
        { status: 200, body: "not json at all" },
        { status: 200, body: JSON.stringify({ choices: [] }) },
        completion("   ")
      ]) {
        const { r } = yield* askWith(() => reply)
        expect(r.body.rephrased, reply.body).toBe(false)
        expect(r.body.answer).toMatch(DETERMINISTIC)
      }
    }))
})

// The acceptance rule on its own.
layer(Layer.empty)("acceptRephrasing", (it) => {
  it("numbers are compared as numbers; kobo figures count in naira, basis points as percentages", () => {
    const request = { answer: "Collection rate so far: 75.00% (₦750.00 collected of ₦1,000.00 expected).", figures: { collectionRateBps: 7500, collectedKobo: 75_000, expectedKobo: 100_000 } }
    expect(acceptRephrasing("You have collected 75% of what you expected: ₦750 of ₦1,000.", request)).toBe(true)
    expect(acceptRephrasing("You have collected 75% of ₦1,000.00, that is ₦750.00.", request)).toBe(true)
    expect(acceptRephrasing("You have collected 7500 bps.", request)).toBe(false) // not how the answer writes it
    expect(acceptRephrasing("You have collected ₦75,000.", request)).toBe(false) // kobo read as naira
    expect(acceptRephrasing("You have collected 76% so far.", request)).toBe(false)
    expect(acceptRephrasing("", request)).toBe(false)
    expect(acceptRephrasing("x".repeat(1_000), request)).toBe(false)
  })
})
