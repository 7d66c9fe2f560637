import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { VirtualAccounts } from "../../../services/accounts/VirtualAccounts.js"
import { Api } from "../Api.js"
import { VirtualAccount } from "../../contract/Accounts.js"
import { CurrentPrincipal, requireApiOrOwnerAdmin } from "../Security.js"
import { jsonWithStatus } from "./Respond.js"

export const VirtualAccountHandlers = HttpApiBuilder.group(Api, "virtualAccounts", (h) =>
  Effect.gen(function* () {
    const accounts = yield* VirtualAccounts
    return h
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => accounts.list(p.tenantId, p.mode, urlParams))
      )
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* CurrentPrincipal
          // From the dashboard, provisioning is always live (interface rule 2); from a key, the key's mode.
          const mode = p.plane === "dashboard" ? "live" : p.mode
          const { created, account } = yield* accounts.create(p.tenantId, mode, payload)
          return yield* jsonWithStatus(VirtualAccount, account, created ? 201 : 200)
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => accounts.get(p.tenantId, p.mode, path.accountRef)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(requireApiOrOwnerAdmin, (p) => accounts.update(p.tenantId, p.mode, path.accountRef, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => accounts.remove(p.tenantId, p.mode, path.accountRef)))
  })
)
