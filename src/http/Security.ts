import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect } from "effect"
import type { Principal, Role } from "../domain/Principal.js"
import { Forbidden, Unauthorized } from "../contract/Problems.js"

/**
 * The API definition's security (the bearer scheme and what it provides) and the role checks handlers use. Browser-safe:
 * the API definition (src/http/Api.ts) imports it and is bundled into the typed client, so the implementation that
 * verifies a token against the services lives in AuthenticationLive.ts.
 */

export class CurrentPrincipal extends Context.Tag("http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("http/Authentication", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

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
