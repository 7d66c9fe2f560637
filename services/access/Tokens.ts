import { Clock, Effect } from "effect"
import { errors as JoseErrors, jwtVerify, SignJWT } from "jose"
import type { Mode } from "../../src/domain/Mode.js"
import type { Plane } from "../../src/domain/Principal.js"
import { Unauthorized } from "../../src/contract/Problems.js"
import { Keys } from "./Keys.js"

export const TOKEN_TTL_SECONDS = 3600
const ISSUER = "collections"
const AUDIENCE = "collections-api"

export interface TokenClaims {
  readonly tenantId: string
  readonly mode: Mode
  readonly plane: Plane
  /** The API key (api plane) or the dashboard user (dashboard plane) the token was minted for. */
  readonly subjectId: string
}

const invalid = (message: string) => new Unauthorized({ code: "invalid_token", message })

/** HS256 bearer tokens via jose. Time comes from the Effect Clock so tests move it with TestClock. */
export class Tokens extends Effect.Service<Tokens>()("services/Tokens", {
  effect: Effect.gen(function* () {
    const { tokenSigningKey } = yield* Keys

    const mint = Effect.fn("Tokens.mint")(function* (claims: TokenClaims) {
      const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const accessToken = yield* Effect.promise(() =>
        new SignJWT({ tid: claims.tenantId, mode: claims.mode, plane: claims.plane })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setSubject(claims.subjectId)
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setIssuedAt(nowSeconds)
          .setExpirationTime(nowSeconds + TOKEN_TTL_SECONDS)
          .sign(tokenSigningKey)
      )
      return { accessToken, tokenType: "Bearer" as const, expiresIn: TOKEN_TTL_SECONDS }
    })

    const verify = Effect.fn("Tokens.verify")(function* (token: string) {
      if (token === "") return yield* new Unauthorized({ code: "missing_token", message: "Send Authorization: Bearer <accessToken>." })
      const now = yield* Clock.currentTimeMillis
      const result = yield* Effect.tryPromise({
        try: () =>
          jwtVerify(token, tokenSigningKey, {
            issuer: ISSUER,
            audience: AUDIENCE,
            algorithms: ["HS256"],
            currentDate: new Date(now),
            clockTolerance: 0,
            // A token that never expires is never valid here: every token we mint carries exp.
            requiredClaims: ["exp", "iat", "sub"]
          }),
        catch: (e) =>
          e instanceof JoseErrors.JWTExpired
            ? new Unauthorized({ code: "token_expired", message: "The access token has expired; request a new one at POST /api/v1/auth/token." })
            : e instanceof JoseErrors.JWTClaimValidationFailed && e.claim === "exp"
              ? invalid("The access token has no expiry (exp claim); request a new one at POST /api/v1/auth/token.")
              : invalid("The access token is malformed or its signature is invalid.")
      })
      const p = result.payload
      const mode = p.mode === "test" || p.mode === "live" ? p.mode : undefined
      const plane = p.plane === "api" || p.plane === "dashboard" ? p.plane : undefined
      if (typeof p.tid !== "string" || !mode || !plane || typeof p.sub !== "string") {
        return yield* invalid("The access token lacks required claims.")
      }
      return { tenantId: p.tid, mode, plane, subjectId: p.sub } satisfies TokenClaims
    })

    return { mint, verify } as const
  })
}) {}
