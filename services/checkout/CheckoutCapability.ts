import { CHECKOUT_PROBLEMS } from "../../src/contract/Checkout.js"
import { capability, Stage } from "../Capability.js"
import { Checkout, CheckoutClock } from "./Checkout.js"
import { CHECKOUT_DOCS } from "./CheckoutDocs.js"
import { CHECKOUT_EXAMPLES } from "./CheckoutExamples.js"

/** Checkout: sessions, the payer's live stream and hosted page. */
export const CheckoutCapability = capability({
  name: "checkout",
  services: [
    [Stage.base, CheckoutClock.Default],
    [Stage.features, Checkout.Default]
  ],
  docs: CHECKOUT_DOCS,
  examples: CHECKOUT_EXAMPLES,
  problems: CHECKOUT_PROBLEMS
})
