import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SettlementConfig } from "../../../services/settlement/SettlementConfig.js"
import { SubMerchants } from "../../../services/settlement/SubMerchants.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin, requireOwnerOrAdmin } from "../Security.js"
import { Holds } from "../../../services/transfers/Holds.js"
import { Settlements } from "../../../services/settlement/Settlements.js"

// Sub-merchants and the settlement settings (account, autoSettle, minimum, split plan): read by any caller of the
// tenant and mode; changed by an API key or a dashboard Owner/Admin. Settlements themselves: MoneyOutHandlers.ts.

export const SubMerchantsHandlers = HttpApiBuilder.group(Api, "subMerchants", (h) =>
  Effect.gen(function* () {
    const subMerchants = yield* SubMerchants
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => subMerchants.list(p, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => subMerchants.create(p, payload, actorOf(p))))
      .handle("setPayout", ({ path, payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => subMerchants.setPayout(p, path.id, payload, actorOf(p))))
      .handle("balance", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => subMerchants.balance(p, path.id)))
  })
)

export const SettingsHandlers = HttpApiBuilder.group(Api, "settings", (h) =>
  Effect.gen(function* () {
    const config = yield* SettlementConfig
    return h
      .handle("getSettlement", () => Effect.flatMap(CurrentPrincipal, (p) => config.get(p)))
      .handle("putSettlement", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => config.put(p, payload, actorOf(p))))
      .handle("getSplits", () => Effect.flatMap(CurrentPrincipal, (p) => config.getSplits(p)))
      .handle("putSplits", ({ payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => config.putSplits(p, payload.splits, actorOf(p))))
  })
)

export const SettlementsHandlers = HttpApiBuilder.group(Api, "settlements", (h) =>
  Effect.gen(function* () {
    const holds = yield* Holds
    const settlements = yield* Settlements
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => settlements.list(p, urlParams)))
      .handle("run", () => Effect.flatMap(requireOwnerOrAdmin, (p) => settlements.runNow(p)))
      .handle("hold", ({ path, payload }) =>
        Effect.flatMap(requireApiOrOwnerAdmin, (p) => holds.hold(p, path.ref, { amountKobo: payload?.amountKobo, reason: payload?.reason }, actorOf(p))))
      .handle("release", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => holds.release(p, path.ref, actorOf(p))))
  })
)
