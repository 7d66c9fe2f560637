import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { ApiKeys } from "../../../services/access/ApiKeys.js"
import { ProviderSetup } from "../../../services/providers/ProviderSetup.js"
import { actorOf } from "../../domain/Principal.js"
import { Tenants } from "../../../services/access/Tenants.js"
import { Users } from "../../../services/access/Users.js"
import { Api } from "../Api.js"
import { requireDashboard, requireOwnerOrAdmin } from "../Security.js"
import { iso } from "./Respond.js"

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (h) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    // The key's tenant always exists (a foreign key): a NotFound here would be a broken database, not a client error.
    return h.handle("token", ({ payload }) => keys.exchange(payload.clientId, payload.clientSecret).pipe(Effect.catchTag("NotFound", Effect.die)))
  })
)

export const DashboardPublicHandlers = HttpApiBuilder.group(Api, "dashboardPublic", (h) =>
  Effect.gen(function* () {
    const users = yield* Users
    return h
      .handle("signup", ({ payload }) => users.signup(payload))
      .handle("login", ({ payload }) => users.login({ email: payload.email, password: payload.password, mode: payload.mode ?? "live" }))
  })
)

export const DashboardHandlers = HttpApiBuilder.group(Api, "dashboard", (h) =>
  Effect.gen(function* () {
    const users = yield* Users
    const tenants = yield* Tenants
    const keys = yield* ApiKeys
    const setup = yield* ProviderSetup
    /** The origin the caller reached us at (PUBLIC_URL overrides it): the base of the webhook URL to paste at the provider. */
    const originOf = Effect.map(HttpServerRequest.HttpServerRequest, (req) => {
      const proto = (req.headers["x-forwarded-proto"] ?? "http").split(",")[0]!.trim()
      const host = req.headers["x-forwarded-host"] ?? req.headers.host ?? "localhost"
      return `${proto === "https" ? "https" : "http"}://${host.split(",")[0]!.trim()}`
    })
    return h
      .handle("me", () =>
        Effect.gen(function* () {
          const p = yield* requireDashboard()
          const tenant = yield* tenants.get(p.tenantId)
          const user = (yield* users.find(p.tenantId, p.userId!))!
          return {
            tenant: { id: tenant.id, name: tenant.name, onboardingStatus: tenant.onboardingStatus },
            user: { id: user.id, email: user.email, role: user.role },
            mode: p.mode
          }
        })
      )
      .handle("onboarding", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* requireOwnerOrAdmin
          const tenant = yield* tenants.get(p.tenantId)
          if (tenant.onboardingStatus === "Approved") return { onboardingStatus: tenant.onboardingStatus }
          yield* tenants.setOnboarding(p.tenantId, "Submitted", payload)
          yield* tenants.audit({ tenantId: p.tenantId, mode: null, actor: `user:${p.userId}`, action: "onboarding.submitted", subject: p.tenantId, details: payload })
          return { onboardingStatus: "Submitted" as const }
        })
      )
      .handle("listUsers", ({ urlParams }) =>
        Effect.gen(function* () {
          const p = yield* requireDashboard()
          const page = yield* users.list(p.tenantId, urlParams)
          return { data: page.data.map((u) => ({ id: u.id, email: u.email, role: u.role })), hasMore: page.hasMore }
        })
      )
      .handle("inviteUser", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* requireOwnerOrAdmin
          const u = yield* users.invite(p.tenantId, payload)
          return { id: u.id, email: u.email, role: u.role }
        })
      )
      .handle("listApiKeys", ({ urlParams }) =>
        Effect.gen(function* () {
          const p = yield* requireOwnerOrAdmin
          const page = yield* keys.list(p.tenantId, urlParams)
          const data = page.data.map((k) => ({ id: k.id, mode: k.mode, clientId: k.clientId, createdAt: k.createdAt.toISOString(), revokedAt: iso(k.revokedAt) }))
          return { data, hasMore: page.hasMore }
        })
      )
      .handle("createApiKey", ({ payload }) =>
        Effect.flatMap(requireOwnerOrAdmin, (p) => keys.create(p.tenantId, payload.mode))
      )
      .handle("revokeApiKey", ({ path }) =>
        Effect.flatMap(requireOwnerOrAdmin, (p) => keys.revoke(p.tenantId, path.id))
      )
      .handle("provider", () =>
        Effect.gen(function* () {
          const p = yield* requireOwnerOrAdmin
          return yield* setup.view(p, yield* originOf)
        })
      )
      .handle("connectProvider", ({ payload }) =>
        Effect.gen(function* () {
          const p = yield* requireOwnerOrAdmin
          return yield* setup.connect(p, payload, actorOf(p), yield* originOf)
        })
      )
  })
)
