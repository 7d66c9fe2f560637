/**
 * What the OpenAPI document says about each operation beyond its schemas: a summary, a description, and who may
 * call it (plane and role). Keyed by operationId (`group.endpoint`); test/api/OpenApi.test.ts fails when an
 * operation has none. (A public operation may instead carry OpenApi.Summary and OpenApi.Description annotations.) An operation that answers 501 gets "Not built yet (501)" in its summary automatically.
 */

import { AUTOMATION_DOCS } from "../../services/automation/AutomationDocs.js"
import { BILLING_DOCS } from "../../services/billing/BillingDocs.js"
import { INSIGHTS_DOCS } from "../../services/insights/InsightsDocs.js"
import { CHECKOUT_DOCS } from "../../services/checkout/CheckoutDocs.js"
import { COPILOT_DOCS } from "../../services/copilot/CopilotDocs.js"
import { TRANSFERS_DOCS } from "../../services/transfers/TransfersDocs.js"
import { SETTLEMENT_DOCS } from "../../services/settlement/SettlementDocs.js"
import { doc, type OperationDoc, PAGE, SIGNED } from "../contract/OperationDoc.js"

export { describe, PUBLIC_ACCESS } from "../contract/OperationDoc.js"

export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  ...TRANSFERS_DOCS,
  ...AUTOMATION_DOCS,
  ...SETTLEMENT_DOCS,
  ...CHECKOUT_DOCS,
  ...BILLING_DOCS,
  ...INSIGHTS_DOCS,
  ...COPILOT_DOCS,
  "auth.token": doc("Exchange an API key for a bearer token", "credentials", "Send the key's `clientId` and `clientSecret`; the answer's `accessToken` is valid 3600 s and carries the tenant, the key's mode and the API plane. A revoked key gets 401."),
  "health.healthz": doc("Liveness probe", "public", "200 while the process serves HTTP. A failing liveness probe is a reason to restart the process."),
  "health.readyz": doc("Readiness probe", "public", "200 when the database answers and NATS is connected (or the in-process bus is used); otherwise 503 problem+json naming what is unreachable (`database_unavailable` or `bus_unavailable`). Route traffic elsewhere meanwhile: the process recovers on its own."),
  "dashboardPublic.signup": doc("Sign up a business", "public", "Creates the tenant and its Owner and answers a dashboard token (live mode)."),
  "dashboardPublic.login": doc("Sign in a dashboard user", "credentials", "Answers a dashboard-plane token. `mode` is `live` (default) or `test` (any case); the token acts in that mode."),
  "dashboard.me": doc("The signed-in user, tenant and mode", "dashboard"),
  "dashboard.onboarding": doc("Submit onboarding details", "ownerAdmin", "Moves onboarding to `Submitted`; an operator approves it with the CLI (`collections tenants approve`)."),
  "dashboard.listUsers": doc("List dashboard users", "dashboard", PAGE),
  "dashboard.inviteUser": doc("Invite a dashboard user", "ownerAdmin", "Creates an Admin or Member (`role` in any case) with the given password."),
  "dashboard.listApiKeys": doc("List API keys", "ownerAdmin", `Both modes; secrets are never shown again. ${PAGE}`),
  "dashboard.createApiKey": doc("Create an API key", "ownerAdmin", "`mode` is `test` or `live` (any case). The `clientSecret` is shown only in this answer. Live keys need approved onboarding (403 before)."),
  "dashboard.revokeApiKey": doc("Revoke an API key", "ownerAdmin", "Tokens minted from the key stop working at once."),
  "dashboard.provider": doc("The bank provider of the token's mode", "ownerAdmin", "Which provider serves the mode (`sandbox`, `paystack`, `monnify`, or `none`: live mode with nothing connected and SANDBOX_LIVE_MODE off), when it was connected, the last 4 characters of its key (never the key), and `webhookUrl`: the URL to set in the provider's dashboard. For the sandbox also the merchant id and webhook secret the sandbox bank signs with, and how to sign (header and canonical string)."),
  "dashboard.connectProvider": doc("Connect a bank provider for the token's mode", "ownerAdmin", "`{ \"provider\": \"paystack\", \"secretKey\": \"sk_test_…\", \"preferredBank\": \"test-bank\" }` connects Paystack (the key's prefix must match the token's mode: 400 `provider_mode_mismatch`); the key is proved with one harmless call (`GET /bank?perPage=1`) before it is saved: refused 400 `provider_credentials_invalid`, unreachable 502 `provider_unavailable`. `{ \"provider\": \"monnify\", \"apiKey\": \"MK_TEST_…\", \"secretKey\": \"…\", \"contractCode\": \"…\", \"walletAccountNumber\": \"…\", \"preferredBanks\": [\"50515\"] }` connects Monnify (proved by a login). `{ \"provider\": \"sandbox\" }` goes back to the built-in sandbox. While the mode has virtual accounts or open transfers at its current provider, moving to another is 409 `provider_in_use`. The key is sealed at rest (AES-256-GCM) and never shown again; the answer is the connection view. Then set `webhookUrl` as the webhook URL in the Paystack dashboard for that mode, and turn off transfer OTP there (a transfer held for an OTP fails)."),
  "virtualAccounts.list": doc("List virtual accounts", "any", PAGE + " Filter with `subMerchantRef`; the page key is `accountRef`."),
  "virtualAccounts.create": doc("Create a virtual account (a dedicated NUBAN)", "any", "Idempotent on `accountRef`: the same fields answer the existing account (200), different fields 409. Without `expectedAmountKobo` the account is open. A `subMerchantRef` must name an existing sub-merchant (400 `unknown_sub_merchant`); the account's collections are then settled to that sub-merchant, less its platform fee. From a dashboard token the account is always live (live needs approved onboarding). Live mode opens the account at the tenant's connected bank provider (none connected: 409 `provider_not_connected`); test mode at the sandbox unless Paystack test keys are connected. A provider that fails is 502 `provider_unavailable` and retrying with the same `accountRef` is safe: it finds the account the provider made, never a second. Unknown fields are a 400."),
  "virtualAccounts.get": doc("Fetch a virtual account with its payment state", "any"),
  "virtualAccounts.delete": doc("Delete a virtual account with no payment activity", "any", "An account that has received money cannot be deleted (409)."),
  "transactions.list": doc("List reconciled transactions", "any", PAGE + " Filters: `from`, `to` (ISO-8601), `status`, `reconciliation` (any case), `accountRef`; the page key is `reference`."),
  "transactions.summary": doc("Totals by outcome over a period", "any", "Counts and integer-kobo sums: total, successful, failed, pending review."),
  "transactions.get": doc("Fetch a transaction by its provider reference", "any"),
  "transactions.refund": doc("Refund an overpayment", "ownerAdmin", "Sends the deposit's unrefunded surplus back, capped by what the account is still overpaid by and by what is still here: its held money first, then its free money as far as the available balance holds it (settled or paid-out money is gone: 400 `nothing_available`). The destination is the payer's captured account unless the body gives `accountNumber` and `bankCode` (none known: 400 `destination_missing`); a name enquiry runs on it first, and a given `accountName` must match (422 `account_name_mismatch`). Refunds go to the payer: when the destination is the captured account and the bank's name for it clearly does not match the deposit's payer name (the name matcher, as payouts use it), 400 `refund_destination_unverified` with both names in the problem (`payerName`, `accountName`) and nothing sent; a destination given in the body is not checked against the payer. One provider transfer per deposit, `rfd_<reference>`: 200 `Sent`, then `AlreadySent` on every repeat; 409 `refund_in_progress` while it is being sent; 400 `no_refundable_surplus` when nothing is left to refund. Success releases the deposit's hold, lowers the account's `amountPaidKobo` and overpayment, and emits `refund.sent`; if the bank fails or returns it, the money is held again."),
  "transactions.review": doc("Approve or reject a transaction held for review", "ownerAdmin", "`decision` is `approve` or `reject` (any case). Only a `PendingReview` transaction can be decided (409 otherwise)."),
  "sandbox.simulateDeposit": doc("Simulate an inbound transfer (sandbox)", "apiTest", "Sends a signed sandbox provider webhook for a test virtual account through the real receiver; `reversal: true` reverses the latest completed deposit."),
  "webhookEndpoints.list": doc("List webhook endpoints", "apiOrOwnerAdmin", PAGE + " The page key is `id`; secrets are never shown again."),
  "webhookEndpoints.create": doc("Register a webhook endpoint", "apiOrOwnerAdmin", "A public https URL; a host that does not resolve yet is accepted (addresses are checked again at each delivery, and private or loopback ones refused). The signing secret (`whsec_...`) is shown only in this answer."),
  "webhookEndpoints.deliveries": doc("List webhook deliveries", "apiOrOwnerAdmin", PAGE + " Filter with `status` (any case); the page key is `id`."),
  "webhookEndpoints.replay": doc("Replay a webhook delivery", "apiOrOwnerAdmin", "Queues a failed, dead-lettered or pending delivery for an immediate attempt; a succeeded one is never sent again (409)."),
  "webhookEndpoints.delete": doc("Deactivate a webhook endpoint", "apiOrOwnerAdmin"),
  "receiver.receive": doc("Receive a bank provider webhook", "signature", SIGNED),
  "receiver.receiveV1": doc("Receive a bank provider webhook (under /api/v1)", "signature", SIGNED)
}
