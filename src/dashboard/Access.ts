import type { Onboarding, Role } from "./Session.js"

/**
 * What a dashboard user may do, as the API decides it (src/http/OperationDocs.ts and services/<capability>/*.ts): actions
 * the API would refuse with 403 are not offered. "any" operations are open to every role; "dashboard" ones too;
 * "ownerAdmin" and "apiOrOwnerAdmin" ones need an Owner or Admin when called with a dashboard token.
 */
export type Action =
  | "onboarding" | "inviteUser" | "apiKeys" | "provider"
  | "review" | "refund" | "hold" | "lookup" | "payout"
  | "webhooks" | "rulesWrite" | "flowsWrite" | "subMerchantsWrite" | "settlementWrite" | "settlementRun"
  | "billingWrite" | "sandboxClock" | "events"

const OWNER_ADMIN: ReadonlySet<Action> = new Set<Action>([
  "onboarding", "inviteUser", "apiKeys", "provider", "review", "refund", "hold", "lookup", "payout", "webhooks",
  "rulesWrite", "flowsWrite", "subMerchantsWrite", "settlementWrite", "settlementRun", "billingWrite", "sandboxClock",
  "events"
])

export const can = (role: Role | undefined, action: Action): boolean =>
  role !== undefined && (role === "Owner" || role === "Admin" || !OWNER_ADMIN.has(action))

/** Live keys and live accounts need approved onboarding (403 before). */
export const liveUnlocked = (status: Onboarding | undefined) => status === "Approved"
