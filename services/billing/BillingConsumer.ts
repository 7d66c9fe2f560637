import { Effect, Layer } from "effect"
import { BILLING } from "../outbox/Registry.js"
import { type ConsumedEvent, type Consumer, makeConsumerRunner } from "../outbox/Runner.js"
import { Billing } from "./Billing.js"

/**
 * Billing at payment time: the outbox consumer that reacts to deposits (`deposit.reconciled`, reversals included) and
 * review decisions (`transaction.reviewed`). Each event names its account by its subject key (the accountRef); the batch's
 * accounts that have a live schedule with something to do are brought up to billing time in the runner's transaction
 * (`Billing.syncAccounts`): a period the deposit paid becomes `Paid` with `paidAt`, and `billing.period.paid` is staged,
 * a pass after the deposit commits. The accounts with no schedule cost one index probe each and are not locked; the
 * reconciler's own transaction does no billing work. The billing clock's pass stays as the safety net.
 */
export const handleBilling = (events: ReadonlyArray<ConsumedEvent>) =>
  Effect.flatMap(Billing, (billing) => billing.syncAccounts(events.map((e) => ({ tenantId: e.tenantId, mode: e.mode, accountRef: e.subjectKey })))).pipe(
    // Every event of the batch is done (a number would tell the runner how many, from the first, it handled).
    Effect.asVoid
  )

export const billingConsumer: Consumer<Billing> = { ...BILLING, handle: handleBilling }

/**
 * How often the consumer looks (when the last pass found less than a full batch). A second, as insights: fewer, fuller
 * batches cost the deposit path less CPU on a small machine than a pass every 200 ms (docs/performance.md), and a paid
 * event a second after the deposit is "at once" for a tenant.
 */
export const BILLING_CONSUMER_POLL_MS = 1_000

/** The billing consumer's loop, for as long as the layer lives (every worker process; its passes take turns). */
export const BillingConsumerLive = Layer.scopedDiscard(
  Effect.flatMap(makeConsumerRunner(billingConsumer, { pollMs: BILLING_CONSUMER_POLL_MS }), (r) => r.start).pipe(
    Effect.annotateLogs({ component: "billing" })
  )
)
