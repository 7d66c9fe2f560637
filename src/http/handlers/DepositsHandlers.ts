import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Receiver } from "../../../services/deposits/Receiver.js"
import { PAYSTACK_SIGNATURE_HEADER, PaystackInbound } from "../../../services/providers/PaystackInbound.js"
import { MONNIFY_SIGNATURE_HEADER, MonnifyInbound } from "../../../services/providers/MonnifyInbound.js"
import { Reviews } from "../../../services/deposits/Reviews.js"
import { SIGNATURE_HEADER } from "../../../services/deposits/SandboxEvent.js"
import { Refunds } from "../../../services/transfers/Refunds.js"
import { Transactions } from "../../../services/deposits/Transactions.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { BadRequest } from "../../contract/Problems.js"
import { CurrentPrincipal, requireOwnerOrAdmin } from "../Security.js"
import { invalidTextInJson } from "../InputGuard.js"

export const ReceiverHandlers = HttpApiBuilder.group(Api, "receiver", (h) =>
  Effect.gen(function* () {
    const receiver = yield* Receiver
    const paystack = yield* PaystackInbound
    const monnify = yield* MonnifyInbound
    const receive = ({ path, request }: { path: { provider: string }; request: HttpServerRequest.HttpServerRequest }) =>
      Effect.gen(function* () {
        const body = yield* request.text.pipe(
          Effect.mapError(() => new BadRequest({ code: "malformed_request", message: "The webhook body could not be read (at most 1 MiB)." }))
        )
        // Also refused by the global middleware; checked here too so this handler alone answers as the fast path does.
        const invalid = invalidTextInJson(body)
        if (invalid) return yield* new BadRequest(invalid)
        if (path.provider === "paystack") return yield* paystack.receive(body, request.headers[PAYSTACK_SIGNATURE_HEADER])
        if (path.provider === "monnify") return yield* monnify.receive(body, request.headers[MONNIFY_SIGNATURE_HEADER])
        return yield* receiver.receive(path.provider, body, request.headers[SIGNATURE_HEADER])
      })
    return h.handleRaw("receive", receive).handleRaw("receiveV1", receive)
  })
)

export const TransactionsHandlers = HttpApiBuilder.group(Api, "transactions", (h) =>
  Effect.gen(function* () {
    const transactions = yield* Transactions
    const reviews = yield* Reviews
    const refunds = yield* Refunds
    return h
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => transactions.list(p.tenantId, p.mode, urlParams))
      )
      .handle("summary", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => transactions.summary(p.tenantId, p.mode, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => transactions.get(p.tenantId, p.mode, path.reference)))
      .handle("review", ({ path, payload }) =>
        Effect.flatMap(requireOwnerOrAdmin, (p) =>
          reviews.decide(p, path.reference, { decision: payload.decision, note: payload.note ?? null, accountRef: payload.accountRef ?? null }, actorOf(p)))
      )
      .handle("refund", ({ path, payload }) =>
        Effect.flatMap(requireOwnerOrAdmin, (p) => refunds.refund(p, path.reference, payload ?? {}, actorOf(p))))
  })
)
