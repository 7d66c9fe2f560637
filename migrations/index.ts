import type { Effect } from "effect"
import m0001 from "./0001_tenancy.js"
import m0002 from "./0002_virtual_accounts.js"

/** Forward-only, numbered; never edit one that has landed. Loaded by Migrator.fromRecord. */
export const migrations: Record<string, Effect.Effect<unknown, unknown, any>> = {
  "0001_tenancy": m0001,
  "0002_virtual_accounts": m0002
}
