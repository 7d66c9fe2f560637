import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, Unauthorized, BadGateway, BadRequest, Conflict, NotFound } from "../../contract/Problems.js"
import { Body, CaseInsensitiveLiteral, ModeParam, ModeSchema, NonEmpty, TakeParams, listOf, Timestamp } from "../../contract/Schemas.js"
import { Authentication } from "../Security.js"

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
  .annotate(OpenApi.Title, "Authentication")
  .annotate(OpenApi.Description, "Exchange an API key's client credentials for a bearer token.")
{}

const Email = Schema.Trim.pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "email must be an e-mail address" }),
  Schema.maxLength(254)
)
const Password = Schema.String.pipe(
  Schema.minLength(10, { message: () => "password must be at least 10 characters" }),
  Schema.maxLength(200, { message: () => "password must be at most 200 characters" })
)
const Role = Schema.Literal("Owner", "Admin", "Member")
export const UserView = Schema.Struct({ id: Schema.String, email: Schema.String, role: Role })
const OnboardingStatus = Schema.Literal("NotStarted", "Submitted", "Approved", "Rejected")

export const SignupResponse = Schema.Struct({
  tenantId: Schema.String,
  user: UserView,
  accessToken: Schema.String,
  tokenType: Schema.Literal("Bearer"),
  expiresIn: Schema.Int
})
export const MeResponse = Schema.Struct({
  tenant: Schema.Struct({ id: Schema.String, name: Schema.String, onboardingStatus: OnboardingStatus }),
  user: UserView,
  mode: ModeSchema
})
export const OnboardingRequest = Body({
  legalName: Schema.optional(NonEmpty("legalName")),
  rcNumber: Schema.optional(NonEmpty("rcNumber", 40)),
  address: Schema.optional(NonEmpty("address", 500)),
  contactPhone: Schema.optional(NonEmpty("contactPhone", 40)),
  website: Schema.optional(NonEmpty("website", 300))
})
export const ApiKeyView = Schema.Struct({
  id: Schema.String,
  mode: ModeSchema,
  clientId: Schema.String,
  createdAt: Timestamp,
  revokedAt: Schema.NullOr(Timestamp)
})
export const ApiKeyCreated = Schema.Struct({ id: Schema.String, mode: ModeSchema, clientId: Schema.String, clientSecret: Schema.String })
export const ProviderView = Schema.Struct({
  mode: ModeSchema,
  provider: Schema.String.annotations({ description: "`sandbox`, `paystack`, or `none` (live mode with no provider connected)." }),
  connectedAt: Schema.NullOr(Timestamp).annotations({ description: "When the real provider was connected; null for the sandbox." }),
  keyHint: Schema.NullOr(Schema.String).annotations({ description: "The last 4 characters of the connected secret key; never the key." }),
  preferredBank: Schema.NullOr(Schema.String).annotations({ description: "Paystack: the partner bank (slug) new dedicated accounts are opened at." }),
  contractCode: Schema.optional(Schema.String).annotations({ description: "Monnify: the contract code reserved accounts are made under." }),
  walletAccountNumber: Schema.optional(Schema.String).annotations({ description: "Monnify: the wallet account payouts and refunds are paid from." }),
  preferredBanks: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "Monnify: the partner banks (CBN codes) of new reserved accounts; the first account is the NUBAN." }),
  webhookUrl: Schema.String.annotations({ description: "The URL to set as the webhook URL in the provider's dashboard, for this mode." }),
  receiverPath: Schema.String,
  signatureHeader: Schema.String,
  merchantId: Schema.optional(Schema.String).annotations({ description: "Sandbox only: the tenant's merchant id at the sandbox bank." }),
  webhookSecret: Schema.optional(Schema.String).annotations({ description: "Sandbox only: the secret that signs the sandbox bank's webhooks." }),
  canonicalString: Schema.optional(Schema.String).annotations({ description: "Sandbox only: the fields the sandbox signature covers." })
})
export const ConnectProvider = Body({
  provider: CaseInsensitiveLiteral("provider", ["paystack", "monnify", "sandbox"]),
  secretKey: Schema.optional(NonEmpty("secretKey", 200)).annotations({ description: "Paystack: the secret key of the mode (sk_test_… or sk_live_…). Monnify: the client secret key." }),
  apiKey: Schema.optional(NonEmpty("apiKey", 200)).annotations({ description: "Monnify: the API key of the mode (MK_TEST_… or MK_PROD_…)." }),
  contractCode: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{6,20}$/, { message: () => "contractCode is Monnify's contract code: digits" }))),
  walletAccountNumber: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{10}$/, { message: () => "walletAccountNumber is the 10-digit account number of the Monnify wallet" }))),
  preferredBanks: Schema.optional(Schema.Array(Schema.String.pipe(Schema.pattern(/^\d{3,6}$/, { message: () => "preferredBanks are CBN bank codes such as 50515 or 035" }))).pipe(
    Schema.minItems(1, { message: () => "preferredBanks needs at least one bank code" }), Schema.maxItems(5))),
  preferredBank: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z0-9-]{2,60}$/, { message: () => "preferredBank is a Paystack bank slug such as wema-bank or titan-paystack" })))
    .annotations({ description: "Paystack: the partner bank's slug for new accounts (default test-bank in test mode, wema-bank in live mode)." })
})
const keyId = HttpApiSchema.param("id", Schema.String)

export class DashboardPublicApi extends HttpApiGroup.make("dashboardPublic")
  .add(
    HttpApiEndpoint.post("signup", "/api/v1/dashboard/signup")
      .setPayload(Body({ businessName: NonEmpty("businessName"), email: Email, password: Password }))
      .addSuccess(SignupResponse, { status: 201 })
      .addError(Conflict)
  )
  .add(
    HttpApiEndpoint.post("login", "/api/v1/dashboard/login")
      .setPayload(Body({ email: Email, password: Schema.String, mode: Schema.optional(ModeParam) }))
      .addSuccess(TokenResponse)
      .addError(Unauthorized)
  )
  .annotate(OpenApi.Title, "Dashboard sign-up and login")
  .annotate(OpenApi.Description, "Create a tenant with its first Owner, and log in to the dashboard plane.")
{}

export class DashboardApi extends HttpApiGroup.make("dashboard")
  .add(HttpApiEndpoint.get("me", "/api/v1/dashboard/me").addSuccess(MeResponse).addError(NotFound))
  .add(
    HttpApiEndpoint.post("onboarding", "/api/v1/dashboard/onboarding")
      .setPayload(OnboardingRequest)
      .addSuccess(Schema.Struct({ onboardingStatus: OnboardingStatus }))
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.get("listUsers", "/api/v1/dashboard/users").setUrlParams(TakeParams).addSuccess(listOf(UserView)))
  .add(
    HttpApiEndpoint.post("inviteUser", "/api/v1/dashboard/users")
      .setPayload(Body({ email: Email, password: Password, role: CaseInsensitiveLiteral("role", ["Admin", "Member"]) }))
      .addSuccess(UserView, { status: 201 })
      .addError(Conflict)
  )
  .add(HttpApiEndpoint.get("listApiKeys", "/api/v1/dashboard/api-keys").setUrlParams(TakeParams).addSuccess(listOf(ApiKeyView)))
  .add(
    HttpApiEndpoint.post("createApiKey", "/api/v1/dashboard/api-keys")
      .setPayload(Body({ mode: ModeParam }))
      .addSuccess(ApiKeyCreated, { status: 201 })
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.del("revokeApiKey")`/api/v1/dashboard/api-keys/${keyId}`.addSuccess(HttpApiSchema.NoContent).addError(NotFound))
  .add(HttpApiEndpoint.get("provider", "/api/v1/dashboard/provider").addSuccess(ProviderView).addError(NotFound))
  .add(
    HttpApiEndpoint.put("connectProvider", "/api/v1/dashboard/provider")
      .setPayload(ConnectProvider)
      .addSuccess(ProviderView)
      .addError(BadRequest)
      .addError(Conflict)
      .addError(BadGateway)
  )
  // Every dashboard operation checks the plane (and most the role): 403 otherwise.
  .addError(Forbidden)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Dashboard")
  .annotate(OpenApi.Description, "The signed-in tenant: its profile, onboarding, users, API keys and bank provider.")
{}
