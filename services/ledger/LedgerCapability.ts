import { LEDGER_PROBLEMS } from "../../src/contract/Ledger.js"
import { capability, Stage } from "../Capability.js"
import { Ledger } from "./Ledger.js"
import { LEDGER_DOCS } from "./LedgerDocs.js"
import { LEDGER_EXAMPLES } from "./LedgerExamples.js"
import { LedgerReads } from "./LedgerReads.js"

/** The double-entry ledger every money movement writes to, and reading it back (entries, statements). */
export const LedgerCapability = capability({
  name: "ledger",
  services: [[Stage.stores, Ledger.Default], [Stage.reads, LedgerReads.Default]],
  docs: LEDGER_DOCS,
  examples: LEDGER_EXAMPLES,
  problems: LEDGER_PROBLEMS
})
