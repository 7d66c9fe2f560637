/** Test and live are separate worlds: every row carries its mode and every query filters by the caller's. */
export type Mode = "test" | "live"

/** The tenant and mode a service method acts in: what every new service method takes first. */
export interface Scope {
  readonly tenantId: string
  readonly mode: Mode
}

/** A scope as one map key. */
export const scopeKey = (s: Scope): string => `${s.tenantId}\u0000${s.mode}`

/** Rows grouped by their tenant and mode (`scopeKey`), each group in the rows' order. */
export const byScope = <T extends Scope>(rows: ReadonlyArray<T>): Map<string, Array<T>> => {
  const out = new Map<string, Array<T>>()
  for (const r of rows) {
    const list = out.get(scopeKey(r))
    if (list) list.push(r)
    else out.set(scopeKey(r), [r])
  }
  return out
}
