import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Metric, Scope } from "effect"
import { Receiver } from "../../services/deposits/Receiver.js"
import { signSandboxEvent } from "../../services/deposits/SandboxEvent.js"
import { MAX_BODY_BYTES } from "../../src/http/Problem.js"
import { fastPathRequests } from "../../src/http/ReceiverFastPath.js"
import { callWithHeaders, createAccount, eventBody, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { makeTestApp } from "../support/TestApp.js"

/** Every case the receiver answers, with what differs between two apps (ids, references) blanked out. */
const scenario = Effect.gen(function* () {
  const t = yield* testTenant
  const va = yield* createAccount(t.token, "fees", "John Adeyemi", 150_000)
  const blank = (r: { status: number; contentType: string; body: any }, reference?: string) => ({
    status: r.status,
    contentType: r.contentType.split(";")[0],
    body: typeof r.body === "object" && r.body !== null && reference !== undefined && r.body.reference === reference ? { ...r.body, reference: "<ref>" } : r.body
  })
  const answers: Record<string, unknown> = {}

  const first = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 100_000 })
  answers.processed = blank(first, first.sessionId)
  const body = eventBody(t, { accountNumber: va.nuban, amountKobo: 100_000, sessionId: first.sessionId })
  answers.duplicate = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(body), { "x-sandbox-signature": signSandboxEvent(t.webhookSecret, body) }), first.sessionId)
  const v1 = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 50_000 }, "/api/v1/webhooks/sandbox")
  answers.v1Path = blank(v1, v1.sessionId)
  const query = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 1_000 }, "/webhooks/sandbox?attempt=2")
  answers.queryString = blank(query, query.sessionId)
  const unmatched = yield* sendSigned(t, { accountNumber: "0000000000", amountKobo: 5_000 })
  answers.unmatched = blank(unmatched, unmatched.sessionId)
  const ignored = yield* sendSigned(t, { accountNumber: va.nuban, amountKobo: 5_000, event: "transfer.outbound" })
  answers.ignored = blank(ignored, ignored.sessionId)

  const signedOther = eventBody(t, { accountNumber: va.nuban, amountKobo: 7_000 })
  answers.badSignature = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(signedOther), { "x-sandbox-signature": "0".repeat(64) }))
  answers.noSignature = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", JSON.stringify(signedOther), {}))
  answers.malformedJson = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", "{not json", { "x-sandbox-signature": "x" }))
  answers.unknownProvider = blank(yield* callWithHeaders("POST", "/webhooks/acme", JSON.stringify(signedOther), { "x-sandbox-signature": "x" }))
  // Invalid text is refused before the signature, by both paths alike (the URL case is left to the app by the fast path).
  const nul = JSON.stringify({ ...signedOther, narration: "a\u0000b" })
  answers.nulUnsigned = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", nul, {}))
  answers.loneSurrogate = blank(yield* callWithHeaders("POST", "/api/v1/webhooks/sandbox", nul.replace("\\u0000", "\\ud800"), { "x-sandbox-signature": "x" }))
  answers.nulInPath = blank(yield* callWithHeaders("POST", "/webhooks/sand%00box", JSON.stringify(signedOther), {}))
  answers.tooLarge = blank(yield* callWithHeaders("POST", "/webhooks/sandbox", "x".repeat(MAX_BODY_BYTES + 1), { "x-sandbox-signature": "x" }))
  const client = yield* HttpClient.HttpClient
  const get = yield* client.execute(HttpClientRequest.get("/webhooks/sandbox")).pipe(Effect.flatMap((r) => Effect.map(r.json, (b) => ({ status: r.status, contentType: r.headers["content-type"] ?? "", body: b }))), Effect.scoped, Effect.orDie)
  answers.wrongMethod = blank(get)
  expect(answers.nulUnsigned).toMatchObject({ status: 400, body: { code: "invalid_text" } })
  expect(answers.loneSurrogate).toMatchObject({ status: 400, body: { code: "invalid_text" } })
  expect(answers.nulInPath).toMatchObject({ status: 400, body: { code: "invalid_text" } })

  yield* waitForTransactions(t.tenantId, 4)
  return answers
})

describe("the receiver's fast path", () => {
  it.live("answers every case exactly as the HttpApi handler does", () =>
    Effect.gen(function* () {
      const taken = Metric.value(fastPathRequests).pipe(Effect.map((s) => s.count))
      const before = yield* taken
      const fast = yield* scenario.pipe(Effect.provide(makeTestApp()))
      const between = yield* taken
      const api = yield* scenario.pipe(Effect.provide(makeTestApp({ fastPath: false })))
      // The first app's webhooks (all but the GET) went through the fast path; the second app's through HttpApi.
      expect(between - before).toBe(13)
      expect((yield* taken) - between).toBe(0)
      expect(fast).toEqual(api)
      // And what that is, so the comparison is not between two wrong answers.
      expect(fast.processed).toEqual({ status: 200, contentType: "application/json", body: { result: "processed", reference: "<ref>" } })
      expect(fast.duplicate).toEqual({ status: 200, contentType: "application/json", body: { result: "duplicate", reference: "<ref>" } })
      expect(fast.v1Path).toMatchObject({ status: 200, body: { result: "processed" } })
      expect(fast.queryString).toMatchObject({ status: 200, body: { result: "processed" } })
      expect(fast.unmatched).toMatchObject({ status: 200, body: { result: "unmatched" } })
      expect(fast.ignored).toMatchObject({ status: 200, body: { result: "ignored" } })
      expect(fast.badSignature).toMatchObject({ status: 401, contentType: "application/problem+json", body: { code: "invalid_signature", instance: "/webhooks/sandbox" } })
      expect(fast.noSignature).toMatchObject({ status: 401, body: { code: "invalid_signature" } })
      expect(fast.malformedJson).toMatchObject({ status: 400, contentType: "application/problem+json", body: { code: "malformed_request" } })
      expect(fast.unknownProvider).toMatchObject({ status: 404, body: { code: "unknown_provider", type: "urn:collections:problem:unknown_provider", title: "Not Found" } })
      expect(fast.tooLarge).toMatchObject({ status: 413, contentType: "application/problem+json", body: { code: "payload_too_large", status: 413 } })
      expect((fast.wrongMethod as { status: number }).status).toBeGreaterThanOrEqual(404)
    }), { timeout: 120_000 })

  it.live("answers without a fiber once the merchant is known, and a webhook that comes as the service stops is interrupted (503), not dropped", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const app = yield* Layer.buildWithScope(makeTestApp(), scope)
      const receiver = Context.get(app, Receiver)
      const t = yield* testTenant.pipe(Effect.provide(app))
      const va = yield* createAccount(t.token, "stop", "John Adeyemi", 150_000).pipe(Effect.provide(app))
      const now = (body: Record<string, unknown>) =>
        Effect.async<Exit.Exit<unknown, unknown> | "not taken">((resume) => {
          const taken = receiver.receiveNow("sandbox", JSON.stringify(body), signSandboxEvent(t.webhookSecret, body), (exit) => resume(Effect.succeed(exit)))
          if (!taken) resume(Effect.succeed("not taken"))
        })

      // A merchant not seen yet: left to the Effect path, which then keeps its credentials.
      const first = eventBody(t, { accountNumber: va.nuban, amountKobo: 10_000 })
      expect(yield* now(first)).toBe("not taken")
      expect(yield* receiver.receive("sandbox", JSON.stringify(first), signSandboxEvent(t.webhookSecret, first))).toEqual({ result: "processed", reference: first.sessionId })
      const second = eventBody(t, { accountNumber: va.nuban, amountKobo: 20_000 })
      expect(yield* now(second)).toEqual(Exit.succeed({ result: "processed", reference: second.sessionId }))

      yield* Scope.close(scope, Exit.void)
      const late = yield* now(eventBody(t, { accountNumber: va.nuban, amountKobo: 30_000 }))
      expect(late !== "not taken" && Exit.isFailure(late) && Cause.isInterruptedOnly(late.cause)).toBe(true)
    }), { timeout: 120_000 })
})
