import { HttpApi, OpenApi } from "@effect/platform"
import { AuthApi } from "./groups/AuthApi.js"
import { BillingApi } from "./groups/BillingApi.js"
import { CheckoutApi, CheckoutPublicApi } from "./groups/CheckoutApi.js"
import { DashboardApi, DashboardPublicApi } from "./groups/DashboardApi.js"
import { FlowsApi } from "./groups/FlowsApi.js"
import { HealthApi } from "./groups/HealthApi.js"
import { InsightsApi } from "./groups/InsightsApi.js"
import { CopilotApi, SettlementsApi } from "./groups/OperationsApi.js"
import { ReceiverApi } from "./groups/ReceiverApi.js"
import { RulesApi } from "./groups/RulesApi.js"
import { SandboxApi } from "./groups/SandboxApi.js"
import { SettingsApi } from "./groups/SettingsApi.js"
import { SubMerchantsApi } from "./groups/SubMerchantsApi.js"
import { TransactionsApi } from "./groups/TransactionsApi.js"
import { TransfersApi } from "./groups/TransfersApi.js"
import { VirtualAccountsApi } from "./groups/VirtualAccountsApi.js"
import { WebhookEndpointsApi } from "./groups/WebhookEndpointsApi.js"
import { BadRequest, ServiceUnavailable } from "../contract/Problems.js"
import { documentOperations } from "./OpenApiDoc.js"
import { patchProblemJson } from "./Problem.js"

/** The whole interface: one group per resource. */
export class Api extends HttpApi.make("collections")
  .add(AuthApi)
  .add(DashboardPublicApi)
  .add(DashboardApi)
  .add(VirtualAccountsApi)
  .add(TransactionsApi)
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
  .annotate(OpenApi.Transform, (spec) => documentOperations(patchProblemJson(spec)))
{}
