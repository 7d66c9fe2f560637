import { capability, Stage } from "../Capability.js"
import { Ledger } from "./Ledger.js"

/** The double-entry ledger every money movement writes to. */
export const LedgerCapability = capability({
  name: "ledger",
  services: [[Stage.stores, Ledger.Default]]
})
