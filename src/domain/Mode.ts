/** Test and live are separate worlds: every row carries its mode and every query filters by the caller's. */
export type Mode = "test" | "live"

/** The tenant and mode a service method acts in: what every new service method takes first. */
export interface Scope {
  readonly tenantId: string
  readonly mode: Mode
}
