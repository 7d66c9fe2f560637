import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Billing } from "../../../services/billing/Billing.js"
import { Schedule } from "../../contract/Billing.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin } from "../Security.js"
import { jsonWithStatus } from "./Respond.js"

// Recurring billing: read by any caller of the tenant and mode; changed by an API key or a dashboard Owner/Admin.

export const BillingHandlers = HttpApiBuilder.group(Api, "billing", (h) =>
  Effect.gen(function* () {
    const billing = yield* Billing
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => billing.list(p, urlParams)))
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* requireApiOrOwnerAdmin
          const { created, schedule } = yield* billing.create(p, payload, actorOf(p))
          return yield* jsonWithStatus(Schedule, schedule, created ? 201 : 200)
        }))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => billing.get(p, path.id)))
      .handle("setNextAmount", ({ path, payload }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => billing.setNextAmount(p, path.id, payload.amountKobo)))
      .handle("pause", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => billing.pause(p, path.id)))
      .handle("resume", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => billing.resume(p, path.id)))
      .handle("cancel", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => billing.cancel(p, path.id)))
      .handle("periods", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => billing.periods(p, path.id, urlParams)))
  })
)
