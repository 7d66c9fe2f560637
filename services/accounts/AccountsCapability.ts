import { ACCOUNTS_PROBLEMS } from "../../src/contract/Accounts.js"
import { capability, Stage } from "../Capability.js"
import { ACCOUNTS_DOCS } from "./AccountsDocs.js"
import { VirtualAccounts } from "./VirtualAccounts.js"
import { ACCOUNTS_EXAMPLES } from "./AccountsExamples.js"

/** Accounts: one dedicated virtual account (NUBAN) per customer, with its expected amount and payment state. */
export const AccountsCapability = capability({
  name: "accounts",
  services: [[Stage.stores, VirtualAccounts.Default]],
  docs: ACCOUNTS_DOCS,
  examples: ACCOUNTS_EXAMPLES,
  problems: ACCOUNTS_PROBLEMS
})
