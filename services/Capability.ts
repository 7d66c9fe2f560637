import type { Layer } from "effect"
import type { OperationDoc } from "../src/contract/OperationDoc.js"
import type { OperationExamples } from "../src/contract/OperationExample.js"
import type { Subscription } from "./outbox/Registry.js"

/**
 * Where a capability's services sit in the service graph. `src/Services.ts` merges every capability's layers of one
 * stage and provides each stage with everything below it, so a layer may use any service of a lower stage (never one
 * of its own stage or above). Put a new service at the lowest stage above everything it uses.
 */
export const Stage = {
  /** Keys, clocks and fault switches: need only the configuration. */
  base: 0,
  /** Tenants, tokens, the bank provider port, the buses, the outbox. */
  platform: 1,
  /** The provider router (per tenant and mode). */
  providers: 2,
  /** Stores and plain reads: users, API keys, accounts, inbox, transactions, ledger, transfers, holds. */
  stores: 3,
  /** Settlement rows (the transfer outcomes write them). */
  settlementRows: 4,
  /** Transfer outcomes. */
  outcomes: 5,
  /** The deposit path (receiver, reconciler, reviews) and transfer dispatch. */
  deposits: 6,
  /** Provider credits (inbound money from Paystack and Monnify). */
  credits: 7,
  /** Provider webhooks, sync and set-up. */
  inbound: 8,
  /** Sub-merchants. */
  subMerchants: 9,
  /** Payouts, holds, automation rows, settlement settings. */
  moneyOut: 10,
  /** What builds on money out: refunds, rules and flows, settlements, checkout, billing. */
  features: 11,
  /** Reads across capabilities: insights and the copilot's reads. */
  reads: 12,
  /** The copilot. */
  answers: 13
} as const
export type Stage = (typeof Stage)[keyof typeof Stage]

/** A capability's services at one stage. */
export type Staged = readonly [stage: Stage, layer: Layer.Layer<any, any, any>]

/**
 * One capability's manifest: what the service registers for it. The registration lists (the service graph, the
 * workers, the outbox's consumers, the OpenAPI operation docs, the problem codes) all read `CAPABILITIES`
 * (services/Capabilities.ts), so a new capability adds its manifest there and nowhere else.
 */
export interface Capability {
  /** One lower-case word, the same in every layer: the folder `services/<name>/`, the contract, HTTP group, docs and tests. */
  readonly name: string
  /** Its services, each at its stage. */
  readonly services?: ReadonlyArray<Staged>
  /** Its long-running fibers (workers, consumers), run by the worker role beside the reconciler. */
  readonly workers?: ReadonlyArray<Layer.Layer<never, any, any>>
  /**
   * Workers that run beside the reconciler on its own thread when the service gives it one (src/WorkerThread.ts), and
   * with the other workers otherwise: a worker whose passes are chains of short statements, which on the main thread
   * each wait their turn behind the API's requests (issue 33: the automation actor, the insight roll-ups). Such a
   * worker hears the main thread's staging wake-ups over the hub's channel (services/outbox/Wakeups.ts).
   */
  readonly threadWorkers?: ReadonlyArray<Layer.Layer<never, any, any>>
  /** The outbox consumers it runs: the outbox writes a pending row for each event one of them wants. */
  readonly consumers?: ReadonlyArray<Subscription>
  /** What the OpenAPI document says about each of its operations, keyed by operationId (`group.endpoint`). */
  readonly docs?: Readonly<Record<string, OperationDoc>>
  /** Its operations' request and response examples, keyed like `docs` (`<Name>Examples.ts`; see src/contract/OperationExample.ts). */
  readonly examples?: OperationExamples
  /**
   * The problem codes its operations answer, with their statuses: its contract module's `<NAME>_PROBLEMS`, which
   * src/contract/Problems.ts gathers (each code belongs to one capability or to the HTTP edge).
   */
  readonly problems?: Readonly<Record<string, number>>
}

/** A manifest, checked against `Capability`. */
export const capability = (c: Capability): Capability => c
