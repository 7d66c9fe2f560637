import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { Receiver } from "../../../services/deposits/Receiver.js"
import { newSessionId, REVERSAL_EVENT, INFLOW_EVENT } from "../../../services/deposits/SandboxEvent.js"
import { Tenants } from "../../../services/access/Tenants.js"
import { Transactions } from "../../../services/deposits/Transactions.js"
import { VirtualAccounts } from "../../../services/accounts/VirtualAccounts.js"
import { Api } from "../Api.js"
import { Billing } from "../../../services/billing/Billing.js"
import { Forbidden } from "../../contract/Problems.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin } from "../Security.js"

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
