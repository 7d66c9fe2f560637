import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, Unauthorized } from "../../contract/Problems.js"
import { Body } from "../../contract/Schemas.js"

export const TokenResponse = Schema.Struct({
  accessToken: Schema.String,
  tokenType: Schema.Literal("Bearer"),
  expiresIn: Schema.Int
}).annotations({ identifier: "TokenResponse" })

export const TokenRequest = Body({
  clientId: Schema.String.pipe(Schema.minLength(1, { message: () => "clientId is required" })),
  clientSecret: Schema.String.pipe(Schema.minLength(1, { message: () => "clientSecret is required" }))
})

export class AuthApi extends HttpApiGroup.make("auth")
  .add(HttpApiEndpoint.post("token", "/api/v1/auth/token").setPayload(TokenRequest).addSuccess(TokenResponse)
    // 401 unknown or revoked key or wrong secret; 403 a live key of a tenant whose onboarding is not approved.
    .addError(Unauthorized).addError(Forbidden))
{}
