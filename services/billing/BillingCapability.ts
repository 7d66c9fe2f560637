import { BILLING_PROBLEMS } from "../../src/contract/Billing.js"
import { capability, Stage } from "../Capability.js"
import { BILLING } from "../outbox/Registry.js"
import { Billing, BillingClock } from "./Billing.js"
import { BillingConsumerLive } from "./BillingConsumer.js"
import { BILLING_DOCS } from "./BillingDocs.js"
import { BillingPassesLive } from "./BillingPasses.js"
import { BILLING_EXAMPLES } from "./BillingExamples.js"

/** Billing: recurring schedules and their periods, on the Lagos calendar and the sandbox clock. */
export const BillingCapability = capability({
  name: "billing",
  services: [
    [Stage.base, BillingClock.Default],
    [Stage.features, Billing.Default]
  ],
  workers: [BillingPassesLive, BillingConsumerLive],
  consumers: [BILLING],
  docs: BILLING_DOCS,
  examples: BILLING_EXAMPLES,
  problems: BILLING_PROBLEMS
})
