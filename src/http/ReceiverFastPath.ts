import { Cause, Effect, Exit, FiberSet, Layer, Metric } from "effect"
import type * as http from "node:http"
import { Receiver } from "../../services/deposits/Receiver.js"
import { PAYSTACK_SIGNATURE_HEADER, PaystackInbound } from "../../services/providers/PaystackInbound.js"
import { MONNIFY_SIGNATURE_HEADER, MonnifyInbound } from "../../services/providers/MonnifyInbound.js"
import { SIGNATURE_HEADER } from "../../services/deposits/SandboxEvent.js"
import { isDatabaseUnavailable, writeDatabaseUnavailable } from "./DatabaseUnavailable.js"
import { invalidTextInJson, invalidTextInUrl } from "./InputGuard.js"
import { FastPaths } from "./NodeServer.js"
import { tracingOn } from "../TraceContext.js"
import { PROBLEM_STATUS } from "../contract/Problems.js"
import { INTERNAL_ERROR, MAX_BODY_BYTES, PROBLEM_JSON, problemDocument, TOO_LARGE } from "./Problem.js"

/** `POST /webhooks/{provider}` and `POST /api/v1/webhooks/{provider}`, as the HttpApi routes them (a query is ignored). */
const RECEIVER_ROUTE = /^\/(?:api\/v1\/)?webhooks\/([^/?#]+)(?:\?.*)?$/

const send = (res: http.ServerResponse, status: number, contentType: string, body: unknown, close = false) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(text),
    ...(close ? { connection: "close" } : {})
  })
  res.end(text)
}

const sendProblem = (res: http.ServerResponse, url: string, status: number, detail: { readonly code: string; readonly message: string }, close = false) =>
  send(res, status, PROBLEM_JSON, problemDocument(status, detail, url), close)

/** Requests the fast path took (an operator's check that it is on; the HttpApi handler serves them otherwise). */
export const fastPathRequests = Metric.counter("receiver_fast_path_requests", { description: "Provider webhooks served by the receiver's fast path" })

/**
 * The bank provider's deposit webhooks without the HttpApi layers: read the body (at most 1 MiB), hand it to the same
 * receiver the HttpApi handler calls, and answer exactly as the app would (200 `{result, reference}` after the inbox
 * commit, or the same problem documents). The HttpApi router, schema and middleware around this one call were a large
 * share of the service's CPU per deposit (docs/performance.md, "Receiver fast path"). `Receiver.receiveNow` answers most webhooks without a fiber; what it
 * leaves runs `Receiver.receive` as a fiber of a FiberSet. Stopping the service interrupts those fibers and the
 * receiver's committers, and an interrupted request is answered 503 so the provider retries (the receiver is
 * idempotent). With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT) it stands aside: the webhooks then go through the HttpApi,
 * whose server span (and the receiver's) starts each deposit's trace.
 */
export const ReceiverFastPathLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    if (yield* tracingOn) return
    const receiver = yield* Receiver
    const paystack = yield* PaystackInbound
    const monnify = yield* MonnifyInbound
    const fastPaths = yield* FastPaths
    const run = yield* FiberSet.makeRuntime<never>()

    const respond = (req: http.IncomingMessage, res: http.ServerResponse, exit: Exit.Exit<unknown, unknown>) => {
      if (res.writableEnded || res.destroyed) return
      const url = req.url ?? "/"
      if (Exit.isSuccess(exit)) return send(res, 200, "application/json", exit.value)
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "Some") {
        const e = failure.value as { readonly _tag?: string; readonly code?: string; readonly message?: string }
        const status = (PROBLEM_STATUS as Readonly<Record<string, number>>)[e._tag ?? ""]
        if (status !== undefined && typeof e.code === "string" && typeof e.message === "string") {
          return sendProblem(res, url, status, { code: e.code, message: e.message })
        }
      }
      if (Cause.isInterruptedOnly(exit.cause)) {
        return sendProblem(res, url, 503, { code: "shutting_down", message: "The service is stopping; send the webhook again." }, true)
      }
      if (isDatabaseUnavailable(exit.cause)) return writeDatabaseUnavailable(res, url)
      run(Effect.logError(`request answered 500: ${req.method} ${url.split("?")[0]}`, exit.cause))
      sendProblem(res, url, 500, INTERNAL_ERROR)
    }

    const answer = (req: http.IncomingMessage, res: http.ServerResponse, provider: string, body: string) => {
      // Before the signature check, as the HttpApi path does (one scan; a parse only when the body holds a \u escape).
      const invalid = invalidTextInJson(body)
      if (invalid) return sendProblem(res, req.url ?? "/", 400, invalid)
      if (provider === "paystack" || provider === "monnify") {
        // Real providers' webhooks are few next to the sandbox's benchmark load: the full Effect path.
        const h = req.headers[provider === "paystack" ? PAYSTACK_SIGNATURE_HEADER : MONNIFY_SIGNATURE_HEADER]
        const signature = typeof h === "string" ? h : undefined
        run(provider === "paystack" ? paystack.receive(body, signature) : monnify.receive(body, signature)).addObserver((exit) => respond(req, res, exit))
        return
      }
      const header = req.headers[SIGNATURE_HEADER]
      const signature = typeof header === "string" ? header : undefined
      // Mostly answered without a fiber; the full Effect path for what it leaves (a merchant seen for the first time).
      if (receiver.receiveNow(provider, body, signature, (exit) => respond(req, res, exit))) return
      run(receiver.receive(provider, body, signature)).addObserver((exit) => respond(req, res, exit))
    }

    yield* fastPaths.install((req, res) => {
      if (req.method !== "POST") return false
      const m = RECEIVER_ROUTE.exec(req.url ?? "")
      if (!m) return false
      let provider: string
      try {
        provider = decodeURIComponent(m[1]!)
      } catch {
        return false
      }
      const url = req.url!
      if (invalidTextInUrl(url)) return false // the app's middleware answers it (400 invalid_text)
      fastPathRequests.unsafeUpdate(1, [])
      if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
        sendProblem(res, url, 413, TOO_LARGE, true)
        req.resume()
        return true
      }
      const chunks: Array<Buffer> = []
      let size = 0
      let over = false
      req.on("data", (chunk: Buffer) => {
        if (over) return
        size += chunk.length
        if (size > MAX_BODY_BYTES) {
          over = true
          chunks.length = 0
          sendProblem(res, url, 413, TOO_LARGE, true)
        } else chunks.push(chunk)
      })
      req.on("end", () => over || answer(req, res, provider, Buffer.concat(chunks, size).toString("utf8")))
      req.on("error", () => over || res.destroy())
      return true
    })
  })
)
