import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { BankDirectory } from "../../../services/transfers/BankDirectory.js"
import { Payouts } from "../../../services/transfers/Payouts.js"
import { Transfer } from "../../contract/Transfers.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin } from "../Security.js"
import { jsonWithStatus } from "./Respond.js"

// Money out: payouts, the bank list and name enquiry, the balance, and escrow holds. Refunds live with the
// transactions group (DepositHandlers.ts), as the interface puts them under /transactions.

export const TransfersHandlers = HttpApiBuilder.group(Api, "transfers", (h) =>
  Effect.gen(function* () {
    const payouts = yield* Payouts
    const directory = yield* BankDirectory
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => payouts.list(p, urlParams)))
      .handle("banks", () => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(directory.banks(p), (b) => ({ data: b.banks, hasMore: false }))))
      .handle("lookup", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => directory.lookup(p, payload.accountNumber, payload.bankCode)))
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* requireApiOrOwnerAdmin
          const { created, transfer } = yield* payouts.create(p, payload, p.plane === "api" ? "api" : "dashboard", actorOf(p))
          return yield* jsonWithStatus(Transfer, transfer, created ? 201 : 200)
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => payouts.get(p, path.merchantTxRef)))
      .handle("balance", () => Effect.flatMap(CurrentPrincipal, (p) => payouts.balance(p)))
  })
)
