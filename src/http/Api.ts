import { HttpApi, OpenApi } from "@effect/platform"
import { AuthApi, DashboardApi, DashboardPublicApi } from "./groups/AccessApi.js"
import { VirtualAccountsApi } from "./groups/AccountsApi.js"
import { FlowsApi, RulesApi } from "./groups/AutomationApi.js"
import { BillingApi } from "./groups/BillingApi.js"
import { CheckoutApi, CheckoutPublicApi } from "./groups/CheckoutApi.js"
import { CopilotApi } from "./groups/CopilotApi.js"
import { ReceiverApi, TransactionsApi } from "./groups/DepositsApi.js"
import { EventsApi } from "./groups/EventsApi.js"
import { HealthApi } from "./groups/HealthApi.js"
import { InsightsApi } from "./groups/InsightsApi.js"
import { LedgerApi } from "./groups/LedgerApi.js"
import { SandboxApi } from "./groups/ProvidersApi.js"
import { SettingsApi, SettlementsApi, SubMerchantsApi } from "./groups/SettlementApi.js"
import { TransfersApi } from "./groups/TransfersApi.js"
import { WebhookEndpointsApi } from "./groups/WebhooksApi.js"
import { BadRequest, ServiceUnavailable } from "../contract/Problems.js"

/**
 * The whole interface: one group per resource. This is the definition only, with no server code behind it (the
 * groups, the contract's schemas and problem classes, the security tag): the typed client (src/client) derives from it
 * and is bundled for the browser. The server adds its OpenAPI rewrite (Server.ts, `DocumentedApi`) and handlers.
 */
export class Api extends HttpApi.make("collections")
  .add(AuthApi)
  .add(DashboardPublicApi)
  .add(DashboardApi)
  .add(VirtualAccountsApi)
  .add(TransactionsApi)
  .add(LedgerApi)
  .add(TransfersApi)
  .add(RulesApi)
  .add(FlowsApi)
  .add(SubMerchantsApi)
  .add(CheckoutApi)
  .add(CheckoutPublicApi)
  .add(InsightsApi)
  .add(BillingApi)
  .add(SettingsApi)
  .add(SandboxApi)
  .add(WebhookEndpointsApi)
  .add(EventsApi)
  .add(ReceiverApi)
  .add(SettlementsApi)
  .add(CopilotApi)
  .add(HealthApi)
  // Any operation can answer these: 400 for invalid text in its path or query (checked before routing), 503 while the
  // service stops or its database is away. Every other error is declared by the group or endpoint that answers it.
  .addError(BadRequest)
  .addError(ServiceUnavailable)
  .annotate(OpenApi.Title, "Collections and Reconciliation API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Dedicated virtual accounts (NUBAN) per customer, reconciled bank-transfer deposits, a double-entry ledger and signed webhooks. All money is integer kobo (1 naira = 100 kobo).")
{}
