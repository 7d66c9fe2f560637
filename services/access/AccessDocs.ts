import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

/** Access: tokens, sign-up and sign-in, users and API keys (the dashboard plane). */
export const ACCESS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "auth.token": doc("Exchange an API key for a bearer token", "credentials", "Send the key's `clientId` and `clientSecret`; the answer's `accessToken` is valid 3600 s and carries the tenant, the key's mode and the API plane. A revoked key gets 401."),
  "dashboardPublic.signup": doc("Sign up a business", "public", "Creates the tenant and its Owner and answers a dashboard token (live mode)."),
  "dashboardPublic.login": doc("Sign in a dashboard user", "credentials", "Answers a dashboard-plane token. `mode` is `live` (default) or `test` (any case); the token acts in that mode."),
  "dashboard.me": doc("The signed-in user, tenant and mode", "dashboard"),
  "dashboard.onboarding": doc("Submit onboarding details", "ownerAdmin", "Moves onboarding to `Submitted`; an operator approves it with the CLI (`collections tenants approve`)."),
  "dashboard.listUsers": doc("List dashboard users", "dashboard", PAGE),
  "dashboard.inviteUser": doc("Invite a dashboard user", "ownerAdmin", "Creates an Admin or Member (`role` in any case) with the given password."),
  "dashboard.listApiKeys": doc("List API keys", "ownerAdmin", `Both modes; secrets are never shown again. ${PAGE}`),
  "dashboard.createApiKey": doc("Create an API key", "ownerAdmin", "`mode` is `test` or `live` (any case). The `clientSecret` is shown only in this answer. Live keys need approved onboarding (403 before)."),
  "dashboard.revokeApiKey": doc("Revoke an API key", "ownerAdmin", "Tokens minted from the key stop working at once.")
}
