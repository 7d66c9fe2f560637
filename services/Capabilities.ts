import { AccessCapability } from "./access/AccessCapability.js"
import { AccountsCapability } from "./accounts/AccountsCapability.js"
import { AutomationCapability } from "./automation/AutomationCapability.js"
import { BillingCapability } from "./billing/BillingCapability.js"
import type { Capability } from "./Capability.js"
import { CheckoutCapability } from "./checkout/CheckoutCapability.js"
import { CopilotCapability } from "./copilot/CopilotCapability.js"
import { DepositsCapability } from "./deposits/DepositsCapability.js"
import { EventsCapability } from "./events/EventsCapability.js"
import { InsightsCapability } from "./insights/InsightsCapability.js"
import { LedgerCapability } from "./ledger/LedgerCapability.js"
import { OutboxCapability } from "./outbox/OutboxCapability.js"
import type { Subscription } from "./outbox/Registry.js"
import { ProvidersCapability } from "./providers/ProvidersCapability.js"
import { SettlementCapability } from "./settlement/SettlementCapability.js"
import { TransfersCapability } from "./transfers/TransfersCapability.js"
import { WebhooksCapability } from "./webhooks/WebhooksCapability.js"

/**
 * Every capability the service runs: the one list the registrations read (the service graph and the workers in
 * src/Services.ts, the outbox's consumers below, the operation docs in src/http/OperationDocs.ts, the problem codes
 * checked by test/Boundaries.test.ts). A new capability adds its manifest here; see docs/adding-a-capability.md.
 */
export const CAPABILITIES: ReadonlyArray<Capability> = [
  AccessCapability,
  AccountsCapability,
  DepositsCapability,
  LedgerCapability,
  OutboxCapability,
  WebhooksCapability,
  TransfersCapability,
  AutomationCapability,
  InsightsCapability,
  BillingCapability,
  SettlementCapability,
  CheckoutCapability,
  CopilotCapability,
  ProvidersCapability,
  EventsCapability
]

/** The outbox consumers the service runs (tests add their own: `Layer.succeed(ConsumerRegistry, [...BUILT_IN, mine])`). */
export const BUILT_IN: ReadonlyArray<Subscription> = CAPABILITIES.flatMap((c) => c.consumers ?? [])
