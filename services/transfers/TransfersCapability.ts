import { Layer } from "effect"
import { TRANSFERS_PROBLEMS } from "../../src/contract/Transfers.js"
import { capability, Stage } from "../Capability.js"
import { BankDirectory } from "./BankDirectory.js"
import { Holds } from "./Holds.js"
import { HoldStore } from "./HoldStore.js"
import { TransferOutcomes } from "./Outcomes.js"
import { PayoutCaps } from "./PayoutCaps.js"
import { Payouts } from "./Payouts.js"
import { Refunds } from "./Refunds.js"
import { TransferCompleterLive, TransferDispatch } from "./TransferDispatch.js"
import { TRANSFERS_DOCS } from "./TransfersDocs.js"
import { TransferStore } from "./TransferStore.js"
import { TRANSFERS_EXAMPLES } from "./TransfersExamples.js"

/** Transfers: payouts with name enquiry, refunds of overpayment, holds, and the completer that settles their outcomes. */
export const TransfersCapability = capability({
  name: "transfers",
  services: [
    [Stage.stores, Layer.mergeAll(TransferStore.Default, HoldStore.Default, PayoutCaps.Default)],
    [Stage.outcomes, TransferOutcomes.Default],
    [Stage.deposits, Layer.mergeAll(TransferDispatch.Default, BankDirectory.Default)],
    [Stage.moneyOut, Layer.mergeAll(Payouts.Default, Holds.Default)],
    [Stage.features, Refunds.Default]
  ],
  workers: [TransferCompleterLive],
  docs: TRANSFERS_DOCS,
  examples: TRANSFERS_EXAMPLES,
  problems: TRANSFERS_PROBLEMS
})
