
/** The problem codes bank providers (connection, router, sandbox) answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const PROVIDERS_PROBLEMS = {
  provider_credentials_invalid: 400,
  provider_mode_mismatch: 400,
  sandbox_not_live: 401,
  provider_in_use: 409,
  provider_not_connected: 409,
  provider_unavailable: 502
} as const satisfies Record<string, number>
