import type { Mode } from "./Mode.js"

export type Plane = "api" | "dashboard"
export type Role = "Owner" | "Admin" | "Member"

/** Who is calling: resolved from a bearer token on every request. */
export interface Principal {
  readonly tenantId: string
  readonly mode: Mode
  readonly plane: Plane
  readonly keyId: string | null
  readonly userId: string | null
  readonly role: Role | null
}

/** The audit actor string for a principal. */
export const actorOf = (p: Principal): string => (p.plane === "api" ? `key:${p.keyId}` : `user:${p.userId}`)
