
/** The problem codes access (tokens, users, API keys, tenants) answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const ACCESS_PROBLEMS = {
  missing_token: 401,
  invalid_token: 401,
  token_expired: 401,
  token_revoked: 401,
  user_not_found: 401,
  invalid_client: 401,
  invalid_credentials: 401,
  wrong_plane: 403,
  insufficient_role: 403,
  live_key_not_allowed: 403,
  onboarding_not_approved: 403,
  tenant_not_found: 404,
  api_key_not_found: 404,
  email_taken: 409
} as const satisfies Record<string, number>
