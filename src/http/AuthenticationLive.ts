import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../services/access/ApiKeys.js"
import { Tokens } from "../../services/access/Tokens.js"
import { Users } from "../../services/access/Users.js"
import type { Principal } from "../domain/Principal.js"
import { Unauthorized } from "../contract/Problems.js"
import { Authentication } from "./Security.js"

/** The bearer check behind `Authentication` (src/http/Security.ts): server-only, kept apart from the API definition. */

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

