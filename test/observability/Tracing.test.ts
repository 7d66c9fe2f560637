import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { tracingOn } from "../../src/TraceContext.js"
import { tracingLayer } from "../../src/TracingSdk.js"
import { apiToken, call, makeTestApp, signup } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

/**
 * Traces (issue 34, part 5; docs/operations.md, "Traces"). One simulated deposit through the real service (real
 * Postgres, real NATS), traced through the very layer the service uses (src/TracingSdk.ts's tracingLayer, here with an
 * in-memory exporter instead of OTLP): its HTTP request, the receiver's inbox write, the NATS publish, the reconciler's
 * batch and a consumer's batch are spans of ONE trace, each asynchronous hop a parent-child link across the hop.
 */
const exporter = new InMemorySpanExporter()

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)
const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((s) => s.name === name)
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId

layer(makeTestApp({ tracing: tracingLayer(new SimpleSpanProcessor(exporter), "collections-test") }), { timeout: 120_000, excludeTestServices: true })(
  "traces with an exporter",
  (it) => {
    it.effect("one simulated deposit: HTTP, inbox write, NATS publish, reconciler and consumers in one trace", () =>
      Effect.gen(function* () {
        expect(yield* tracingOn).toBe(true)
        const { ownerToken } = yield* signup()
        const { token } = yield* apiToken(ownerToken, "test")
        expect((yield* call("POST", "/api/v1/virtual-accounts", { token, json: { accountRef: "traced-1", name: "Ada Obi", expectedAmountKobo: 50_000 } })).status).toBe(201)
        exporter.reset()

        const sim = yield* call("POST", "/api/v1/sandbox/simulate/deposit", { token, json: { accountRef: "traced-1", amountKobo: 50_000, senderName: "ADA OBI" } })
        expect(sim.status).toBe(200)
        const server = yield* waitFor("the simulate request's server span", Effect.sync(() =>
          exporter.getFinishedSpans().find((s) => s.name === "http.server POST" && s.attributes["url.path"] === "/api/v1/sandbox/simulate/deposit")))
        if (server === undefined) return yield* Effect.dieMessage("unreachable: waitFor gives a found span")
        const traceId = server.spanContext().traceId

        // The deposit's trace reaches a consumer: the relay (every event) handles deposit.reconciled in it.
        const spans = yield* waitFor("a consumer's batch in the deposit's trace", Effect.sync(() => spansOf(traceId)), {
          until: (ss) => named(ss, "ConsumerRunner.batch").some((s) => s.attributes.consumer === "relay"),
          timeoutMs: 30_000
        })
        const one = (name: string) => {
          const found = named(spans, name)
          expect(found.length, `${name} spans in the trace: ${spans.map((s) => s.name).join(", ")}`).toBeGreaterThan(0)
          return found[0]!
        }
        // HTTP -> the receiver (in the request).
        const accept = one("Receiver.accept")
        // The inbox commit, on a committer fiber: a child of the request's Receiver.accept, holding the inbox write.
        const commit = one("Receiver.commit")
        expect(parentOf(commit)).toBe(accept.spanContext().spanId)
        const inbox = one("Inbox.insertMany")
        expect(parentOf(inbox)).toBe(commit.spanContext().spanId)
        expect(spans.some((s) => s.name === "sql.execute" && parentOf(s) === inbox.spanContext().spanId)).toBe(true)
        // The NATS publish, in the commit; the message's traceparent header names the receiver's span ...
        const publish = one("DepositBus.publish")
        expect(parentOf(publish)).toBe(commit.spanContext().spanId)
        expect(publish.attributes["messaging.system"]).toBe("nats")
        // ... so the reconciler's batch (another fiber, through JetStream) is its child.
        const batch = one("Reconciler.batch")
        expect(parentOf(batch)).toBe(accept.spanContext().spanId)
        expect(batch.attributes["messaging.system"]).toBe("nats")
        const reconcile = one("Reconciler.reconcileBatch")
        expect(parentOf(reconcile)).toBe(batch.spanContext().spanId)
        // The staged events carry the reconcile span's context (outbox.traceparent) to each consumer's batch span.
        const consumers = named(spans, "ConsumerRunner.batch")
        for (const c of consumers) expect(parentOf(c)).toBe(reconcile.spanContext().spanId)
        expect(consumers.map((c) => c.attributes.consumer)).toContain("relay")
        // And every one of them is in the request's trace.
        for (const s of [server, accept, commit, inbox, publish, batch, reconcile, ...consumers]) expect(s.spanContext().traceId).toBe(traceId)
      }))
  }
)
