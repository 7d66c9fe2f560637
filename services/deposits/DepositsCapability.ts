import { Layer } from "effect"
import { DEPOSITS_PROBLEMS } from "../../src/contract/Deposits.js"
import { capability, Stage } from "../Capability.js"
import { DEPOSITS_DOCS } from "./DepositsDocs.js"
import { Inbox } from "./Inbox.js"
import { InboxSweeperLive } from "./InboxSweeper.js"
import { Receiver } from "./Receiver.js"
import { Reconciler } from "./Reconciler.js"
import { Reviews } from "./Reviews.js"
import { Transactions } from "./Transactions.js"
import { DEPOSITS_EXAMPLES } from "./DepositsExamples.js"

/**
 * Deposits: the receiver and its inbox, the reconciler, reviews and the transactions they write. The reconciler's own
 * fibers (services/deposits/ReconcilerWorkers.ts) run apart from the other workers (src/Services.ts `ThreadWorkersLive`),
 * on a thread of their own when there is one.
 */
export const DepositsCapability = capability({
  name: "deposits",
  services: [
    [Stage.stores, Layer.mergeAll(Inbox.Default, Transactions.Default)],
    [Stage.deposits, Layer.mergeAll(Receiver.Default, Reconciler.Default, Reviews.Default)]
  ],
  workers: [InboxSweeperLive],
  docs: DEPOSITS_DOCS,
  examples: DEPOSITS_EXAMPLES,
  problems: DEPOSITS_PROBLEMS
})
