import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../services/access/ApiKeys.js"
import { Tokens } from "../../services/access/Tokens.js"
import { Users } from "../../services/access/Users.js"
import type { Principal, Role } from "../domain/Principal.js"
import { Forbidden, Unauthorized } from "../contract/Problems.js"

export class CurrentPrincipal extends Context.Tag("http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("http/Authentication", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const revoked = () => new Unauthorized({ code: "token_revoked", message: "The API key behind this token was revoked; tokens minted from it no longer work." })

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const tokens = yield* Tokens
    const keys = yield* ApiKeys
    const users = yield* Users
    return Authentication.of({
      bearer: (token) =>
        Effect.gen(function* () {
          const claims = yield* tokens.verify(Redacted.value(token))
          if (claims.plane === "api") {
            if (!(yield* keys.isActive(claims.tenantId, claims.subjectId))) return yield* revoked()
            return { tenantId: claims.tenantId, mode: claims.mode, plane: "api", keyId: claims.subjectId, userId: null, role: null } satisfies Principal
          }
          const user = yield* users.find(claims.tenantId, claims.subjectId)
          if (!user) return yield* new Unauthorized({ code: "user_not_found", message: "The dashboard user behind this token no longer exists." })
          return { tenantId: claims.tenantId, mode: claims.mode, plane: "dashboard", keyId: null, userId: user.id, role: user.role } satisfies Principal
        })
    })
  })
)

const wrongPlane = (needed: string) =>
  new Forbidden({ code: "wrong_plane", message: `This operation is only available from ${needed}.` })

/** The caller must be on the dashboard plane, and hold one of the roles when given. */
export const requireDashboard = (roles?: ReadonlyArray<Role>) =>
  Effect.flatMap(CurrentPrincipal, (p) => {
    if (p.plane !== "dashboard") return Effect.fail(wrongPlane("the dashboard (a signed-in dashboard user)"))
    if (roles && !roles.includes(p.role!)) {
      return Effect.fail(new Forbidden({ code: "insufficient_role", message: `This operation needs a dashboard ${roles.join(" or ")}; you are ${p.role}.` }))
    }
    return Effect.succeed(p)
  })

export const requireOwnerOrAdmin = requireDashboard(["Owner", "Admin"])

/** API keys, or dashboard Owner/Admin (transfer initiation and similar). */
export const requireApiOrOwnerAdmin = Effect.flatMap(CurrentPrincipal, (p) =>
  p.plane === "api" ? Effect.succeed(p) : requireDashboard(["Owner", "Admin"])
)
