import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Clock, Effect } from "effect"
import { Receiver } from "../../../services/deposits/Receiver.js"
import { PAYSTACK_SIGNATURE_HEADER, PaystackInbound } from "../../../services/provider/PaystackInbound.js"
import { MONNIFY_SIGNATURE_HEADER, MonnifyInbound } from "../../../services/provider/MonnifyInbound.js"
import { Reviews } from "../../../services/deposits/Reviews.js"
import { newSessionId, REVERSAL_EVENT, INFLOW_EVENT, SIGNATURE_HEADER } from "../../../services/deposits/SandboxEvent.js"
import { Tenants } from "../../../services/Tenants.js"
import { Refunds } from "../../../services/transfers/Refunds.js"
import { Transactions } from "../../../services/Transactions.js"
import { VirtualAccounts } from "../../../services/VirtualAccounts.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { Billing } from "../../../services/billing/Billing.js"
import { BadRequest, Forbidden } from "../../contract/Problems.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin, requireOwnerOrAdmin } from "../Security.js"
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

export const SandboxHandlers = HttpApiBuilder.group(Api, "sandbox", (h) =>
  Effect.gen(function* () {
    const receiver = yield* Receiver
    const tenants = yield* Tenants
    const accounts = yield* VirtualAccounts
    const transactions = yield* Transactions
    const billing = yield* Billing
    return h
      .handle("clock", () => Effect.flatMap(CurrentPrincipal, (p) => billing.sandboxTime(p)))
      .handle("advanceClock", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => billing.advanceSandbox(p, payload.seconds)))
      .handle("simulateDeposit", ({ payload }) =>
      Effect.gen(function* () {
        const p = yield* CurrentPrincipal
        if (p.plane !== "api") return yield* new Forbidden({ code: "wrong_plane", message: "The simulator takes a test API key token." })
        if (p.mode !== "test") return yield* new Forbidden({ code: "live_key_not_allowed", message: "The simulator is sandbox-only: use a test API key, never a live one." })
        const account = yield* accounts.get(p.tenantId, p.mode, payload.accountRef)
        const creds = yield* tenants.providerFor(p.tenantId, p.mode)
        const now = new Date(yield* Clock.currentTimeMillis)
        const latest = payload.reversal
          ? (yield* transactions.list(p.tenantId, p.mode, { accountRef: payload.accountRef, status: "Completed", take: 50 })).data.find((t) => t.amountKobo > 0 && t.reconciliationStatus !== "Reversal")
          : undefined
        return yield* receiver.accept(creds, {
          event: payload.reversal ? REVERSAL_EVENT : INFLOW_EVENT,
          merchantId: creds.merchantId,
          sessionId: newSessionId(now),
          accountNumber: account.nuban,
          amountKobo: payload.amountKobo,
          senderName: payload.senderName ?? "SANDBOX PAYER",
          senderAccountNumber: payload.senderAccountNumber ?? null,
          senderBankCode: payload.senderBankCode ?? null,
          narration: payload.narration ?? null,
          paidAt: now.toISOString(),
          reversedSessionId: latest?.reference ?? null
        })
      })
    )
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
