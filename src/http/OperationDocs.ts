/**
 * What the OpenAPI document says about each operation beyond its schemas: a summary, a description, and who may
 * call it (plane and role). Keyed by operationId (`group.endpoint`); test/api/OpenApi.test.ts fails when an
 * operation has none. (A public operation may instead carry OpenApi.Summary and OpenApi.Description annotations.) An operation that answers 501 gets "Not built yet (501)" in its summary automatically.
 */

const MODE = "A dashboard token acts in live mode unless it was minted with `mode: test` (POST /api/v1/dashboard/login); " +
  "an API key token acts in its key's mode."

const ACCESS = {
  public: "Access: public, no bearer token.",
  credentials: "Access: public; authenticated by the credentials in the body.",
  signature: "Access: the bank provider; no bearer token, authenticated by the `X-Sandbox-Signature` header.",
  any: `Access: bearer token of either plane: an API key token, or a dashboard token of any role (Owner, Admin, Member). ${MODE}`,
  apiTest: "Access: API plane only, a test-mode API key token (a live key or a dashboard token gets 403).",
  apiOrOwnerAdmin: `Access: an API key token, or a dashboard token of an Owner or Admin (a Member gets 403). ${MODE}`,
  dashboard: `Access: dashboard plane, any role (Owner, Admin, Member); an API key token gets 403. ${MODE}`,
  ownerAdmin: `Access: dashboard plane, Owner or Admin (a Member or an API key token gets 403). ${MODE}`,
  later: `Access: bearer token (API key or dashboard); the roles are fixed when the operation is built. ${MODE}`
} as const

type Access = keyof typeof ACCESS
export interface OperationDoc {
  readonly summary: string
  readonly description: string
  readonly access: Access
}

const RULES = "Body: `trigger` (Overpaid, Underpaid, HighRisk, AnyDeposit) and `action` (Hold, Notify, ReviewFlag), any case; " +
  "`thresholdKobo` (integer kobo) gates Overpaid (the deposit's surplus is at least it) and Underpaid (the account still owes at least it after the deposit); " +
  "`minRiskScore` (0 to 100) gates HighRisk and is required there; a gate on another trigger is 400 `gate_not_applicable`. `priority` (0 to 1,000,000, default 100): lower runs first. " +
  "Rules run after the deposit's reconciliation commits, for every inflow into a known account (credited or awaiting review; Overpaid and Underpaid only for credited ones), before the flows; " +
  "they never change its classification, and each runs on its own (one that fails is retried and dead-lettered without stopping the others). " +
  "Hold escrows the surplus (Overpaid) or the deposit, up to what of it is still free; Notify sends a `rule.notify` webhook event `{ ruleId, trigger, transaction }`; " +
  "ReviewFlag flags the credited deposit (`flagged`, `flagReasons`; `GET /transactions?flagged=true`) for a reviewer, its money unchanged. There is no automatic refund: refund what a Hold kept with POST /transactions/{reference}/refund. " +
  "409 `limit_reached` beyond 100 rules."
const FLOWS = "Body: `name`, `trigger` (deposit, overpaid, underpaid, fully-paid, high-risk), `actions` (1 to 10 of hold, release, notify, flag, run top to bottom), any case; " +
  "optional gates `minAmountKobo` (the deposit's amount is at least it) and `minRiskScore` (0 to 100); `priority` (0 to 1,000,000, default 100; lower first; flows run after the rules); `enabled` (default true). " +
  "fully-paid: the deposit completed the expected amount; high-risk: the risk score is at least `minRiskScore`, or without it, the deposit was held for review. " +
  "hold escrows the surplus (overpaid) or the deposit, up to what is still free; release releases the account's holds that rules and flows placed (never a person's); " +
  "notify sends `flow.notify` `{ flowId, trigger, transaction }`; flag flags the credited deposit for review. Each firing writes one run (GET /flows/runs). 409 `limit_reached` beyond 100 flows."

const doc = (summary: string, access: Access, description = ""): OperationDoc => ({ summary, access, description })
const PAGE = "Newest first, `{ data, hasMore }`: `take` (default 50, at most 500; larger is clamped) and `startingAfter` " +
  "(the last item's key from the previous page; an unknown key is a 400)."
const SIGNED = "JSON body as the sandbox provider sends it: `event` (`transfer.inbound` or `transfer.reversal` for deposits; " +
  "`transfer.success`, `transfer.failed` or `transfer.reversed` for the outcome of a transfer we sent, with `reference` = its " +
  "merchantTxRef, `sessionId` = the provider's reference and an optional `reason`; anything else is ignored), `merchantId`, `sessionId` (the provider reference), `accountNumber` (the NUBAN credited), `amountKobo` (integer kobo), " +
  "`senderName`, `senderAccountNumber`, `senderBankCode`, `narration`, `paidAt` (ISO-8601), `reversedSessionId` (for a reversal). " +
  "Header `X-Sandbox-Signature`: lower-case hex HMAC-SHA256, keyed with the tenant's webhook secret for the mode (GET " +
  "/api/v1/dashboard/provider), over the canonical string `event|merchantId|sessionId|accountNumber|amountKobo|paidAt`. " +
  "Answers 200 `{ result, reference }` once the deposit is durably received (processed, duplicate, ignored or unmatched); " +
  "a repeated provider reference is answered again, never credited twice. Invalid text is a 400 before the signature is checked."

export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
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
  "dashboard.provider": doc("Provider credentials for the token's mode", "ownerAdmin", "The merchant id and webhook secret the bank provider signs with, and how to sign (header and canonical string)."),
  "virtualAccounts.list": doc("List virtual accounts", "any", PAGE + " Filter with `subMerchantRef`; the page key is `accountRef`."),
  "virtualAccounts.create": doc("Create a virtual account (a dedicated NUBAN)", "any", "Idempotent on `accountRef`: the same fields answer the existing account (200), different fields 409. Without `expectedAmountKobo` the account is open. From a dashboard token the account is always live (live needs approved onboarding). Unknown fields are a 400."),
  "virtualAccounts.get": doc("Fetch a virtual account with its payment state", "any"),
  "virtualAccounts.delete": doc("Delete a virtual account with no payment activity", "any", "An account that has received money cannot be deleted (409)."),
  "transactions.list": doc("List reconciled transactions", "any", PAGE + " Filters: `from`, `to` (ISO-8601), `status`, `reconciliation` (any case), `accountRef`; the page key is `reference`."),
  "transactions.summary": doc("Totals by outcome over a period", "any", "Counts and integer-kobo sums: total, successful, failed, pending review."),
  "transactions.get": doc("Fetch a transaction by its provider reference", "any"),
  "transactions.refund": doc("Refund an overpayment", "ownerAdmin", "Sends the deposit's unrefunded surplus back, capped by what the account is still overpaid by and by what is still here: its held money first, then its free money as far as the available balance holds it (settled or paid-out money is gone: 400 `nothing_available`). The destination is the payer's captured account unless the body gives `accountNumber` and `bankCode` (none known: 400 `destination_missing`); a name enquiry runs on it first, and a given `accountName` must match (422 `account_name_mismatch`). One provider transfer per deposit, `rfd_<reference>`: 200 `Sent`, then `AlreadySent` on every repeat; 409 `refund_in_progress` while it is being sent; 400 `no_refundable_surplus` when nothing is left to refund. Success releases the deposit's hold, lowers the account's `amountPaidKobo` and overpayment, and emits `refund.sent`; if the bank fails or returns it, the money is held again."),
  "transactions.review": doc("Approve or reject a transaction held for review", "ownerAdmin", "`decision` is `approve` or `reject` (any case). Only a `PendingReview` transaction can be decided (409 otherwise)."),
  "transfers.list": doc("List outbound transfers", "any", PAGE + " Payouts, refunds and settlement legs (`source`); the page key is `merchantTxRef`."),
  "transfers.banks": doc("List banks", "any", "The provider's bank list (`name`, `code`), kept for an hour; when the provider fails, the last list it gave, or the built-in Nigerian list."),
  "transfers.lookup": doc("Resolve an account name (name enquiry)", "apiOrOwnerAdmin", "Answers `{ accountNumber, bankCode, bankName, accountName }`. 400 `invalid_bank_account` for a bad NUBAN check digit or an unknown bank code; 404 `bank_account_not_found` when the bank has no such account; 502 when the provider does not answer."),
  "transfers.create": doc("Send a bank transfer (payout)", "apiOrOwnerAdmin", "Idempotent on `merchantTxRef` (not starting with `rfd_` or `stl_`): the same fields answer the existing transfer (200), different fields 409 `reference_reused`, the same reference still being sent 409 `request_in_progress`. The service runs the name enquiry itself and records the bank's `accountName`; a given `accountName` that does not match is 422 `account_name_mismatch`; an account the bank does not know is 422 `recipient_not_found`. Over the available balance: 422 `insufficient_balance`. Over what is left of the daily payout cap (per tenant and mode, per Africa/Lagos calendar day; see GET /api/v1/balance): 422 `daily_payout_cap_exceeded` with `remainingKobo`. States: `Pending` -> `Processing` -> `Successful` | `Failed` | `Reversed`; a failure or reversal gives the money back. Events `transfer.successful`, `transfer.failed`, `transfer.reversed`."),
  "transfers.get": doc("Fetch a transfer by its merchantTxRef", "any"),
  "transfers.balance": doc("The balance: what may be paid out, and today's payout cap", "any", "For the token's mode: `availableKobo` (free collections less payouts not failed, less `receivableKobo`: what payouts may draw on), `receivableKobo` (what late reversals took back after the money had left, owed by the tenant), `heldKobo` (escrow), `pendingReviewKobo`, `inTransitKobo` (transfers sent, not yet confirmed), `settledTodayKobo`, `paidOutTodayKobo`, `dailyPayoutCapKobo`, `payoutCapRemainingKobo` and the Africa/Lagos `day` they count. The cap is set by operators (`collections tenants set-payout-cap`)."),
  "rules.list": doc("List money rules", "any", "In the order they run: ascending `priority`, then creation; `{ data, hasMore }` with `take` and `startingAfter` (a rule `id`). At most 100 rules per tenant and mode."),
  "rules.create": doc("Create a money rule", "apiOrOwnerAdmin", RULES),
  "rules.dryRun": doc("Dry-run a money rule over recent deposits", "any", "Beyond the interface. Body: a rule as for create, and `take` (1 to 500, default 50). Replays the tenant's last `take` deposits (this mode, newest first) through the rule and answers `{ data: [{ transactionReference, accountRef, amountKobo, fired, steps: [{ action, outcome }] }] }`: what it would have done. Nothing is written, held or sent. A deposit's deficit is read against the account's expected amount now."),
  "rules.delete": doc("Delete a money rule", "apiOrOwnerAdmin", "204; 404 `rule_not_found`. Deposits planned before the delete keep their runs."),
  "flows.list": doc("List payment flows", "dashboard", "In the order they run: ascending `priority`, then creation, with their ordered `actions`; `{ data, hasMore }` with `take` and `startingAfter` (a flow `id`). At most 100 flows per tenant and mode."),
  "flows.create": doc("Create a payment flow", "ownerAdmin", FLOWS),
  "flows.runs": doc("List payment flow runs", "dashboard", "Newest first: one entry per flow that fired for a deposit, `{ id, flowId, flowName, transactionReference, accountRef, firedAt, steps: [{ action, outcome }] }`, each outcome in words (\"held 5,000.00 NGN in escrow\"). `take` (default 50, at most 500) and `startingAfter` (a run `id`). A run is listed once its actions were applied; one whose action keeps failing is retried, then dead-lettered (`collections consumers dead-letters list --consumer automation-actions`)."),
  "flows.get": doc("Fetch a payment flow", "dashboard", "404 `flow_not_found`."),
  "flows.replace": doc("Replace a payment flow", "ownerAdmin", "Body as create; replaces the whole configuration (`enabled` only when given). Deposits planned from now on see the new configuration; runs keep what ran. 404 `flow_not_found`."),
  "flows.delete": doc("Delete a payment flow", "ownerAdmin", "204; 404 `flow_not_found`. Its runs stay listed."),
  "flows.setEnabled": doc("Enable or disable a payment flow", "ownerAdmin", "Body `{ enabled }`; answers the flow. A disabled flow fires for no deposit planned while it is disabled. 404 `flow_not_found`."),
  "flows.dryRun": doc("Dry-run a payment flow over recent deposits", "dashboard", "Beyond the interface. Body `{ take }` (1 to 500, default 50) or none. Replays the tenant's last `take` deposits (newest first) through the flow, as if enabled, and answers `{ data: [{ transactionReference, accountRef, amountKobo, fired, steps }] }`. Nothing is written, held or sent. 404 `flow_not_found`."),
  "subMerchants.list": doc("List sub-merchants", "later"),
  "subMerchants.create": doc("Create a sub-merchant", "later"),
  "subMerchants.setPayout": doc("Set a sub-merchant's payout account and fee", "later"),
  "subMerchants.balance": doc("A sub-merchant's balance", "later"),
  "checkout.createSession": doc("Create a live checkout session", "later"),
  "checkoutPublic.snapshot": doc("A checkout's payment state", "public", "Authorised by the opaque checkout token in the path alone."),
  "checkoutPublic.snapshotShort": doc("A checkout's payment state (short path)", "public", "Authorised by the opaque checkout token in the path alone."),
  "checkoutPublic.stream": doc("A checkout's payment state as server-sent events", "public", "Authorised by the opaque checkout token in the path alone."),
  "insights.overview": doc("Collections overview", "later"),
  "insights.aging": doc("Receivables aging", "later"),
  "insights.forecast": doc("Collections forecast", "later"),
  "insights.customers": doc("Customer insights", "later"),
  "billing.list": doc("List billing schedules", "later"),
  "billing.create": doc("Create a billing schedule", "later"),
  "billing.get": doc("Fetch a billing schedule", "later"),
  "billing.setNextAmount": doc("Set the next period's amount", "later"),
  "billing.pause": doc("Pause a billing schedule", "later"),
  "billing.resume": doc("Resume a billing schedule", "later"),
  "billing.cancel": doc("Cancel a billing schedule", "later"),
  "billing.periods": doc("List a schedule's billing periods", "later"),
  "settings.getSettlement": doc("Settlement settings", "later"),
  "settings.putSettlement": doc("Change settlement settings", "later"),
  "settings.getSplits": doc("Split settlement legs", "later"),
  "settings.putSplits": doc("Replace split settlement legs", "later"),
  "sandbox.simulateDeposit": doc("Simulate an inbound transfer (sandbox)", "apiTest", "Sends a signed sandbox provider webhook for a test virtual account through the real receiver; `reversal: true` reverses the latest completed deposit."),
  "webhookEndpoints.list": doc("List webhook endpoints", "apiOrOwnerAdmin", PAGE + " The page key is `id`; secrets are never shown again."),
  "webhookEndpoints.create": doc("Register a webhook endpoint", "apiOrOwnerAdmin", "A public https URL; a host that does not resolve yet is accepted (addresses are checked again at each delivery, and private or loopback ones refused). The signing secret (`whsec_...`) is shown only in this answer."),
  "webhookEndpoints.deliveries": doc("List webhook deliveries", "apiOrOwnerAdmin", PAGE + " Filter with `status` (any case); the page key is `id`."),
  "webhookEndpoints.replay": doc("Replay a webhook delivery", "apiOrOwnerAdmin", "Queues a failed, dead-lettered or pending delivery for an immediate attempt; a succeeded one is never sent again (409)."),
  "webhookEndpoints.delete": doc("Deactivate a webhook endpoint", "apiOrOwnerAdmin"),
  "receiver.receive": doc("Receive a bank provider webhook", "signature", SIGNED),
  "receiver.receiveV1": doc("Receive a bank provider webhook (under /api/v1)", "signature", SIGNED),
  "settlements.hold": doc("Hold a deposit's money in escrow", "apiOrOwnerAdmin", "`{ref}` is the deposit's provider reference. Moves the deposit's money that is still free (not held, refunded, settled or paid out), or the optional `amountKobo` of it, from the account's free funds to escrow, where settlement and payouts cannot take it; optional `reason`. Answers the hold: `reference`, `accountRef`, `heldKobo`, `status` (`Held`, `Released`, `Refunded`), `reason`, `createdAt`, `releasedAt`. Idempotent: an active hold is answered as it is. 400 `nothing_available` when none of the deposit's money is free, `hold_exceeds_available` when `amountKobo` is more than is free."),
  "settlements.release": doc("Release a deposit's escrow hold", "apiOrOwnerAdmin", "Moves the held money back to the account's free funds. Idempotent: a released hold is answered as it is; a hold that ended in a refund is 409 `hold_not_active`; no hold is 404 `hold_not_found`."),
  "copilot.ask": doc("Ask the copilot", "later")
}

/** A public operation documented by its own OpenApi.Summary/Description annotations (no entry here) gets this line. */
export const PUBLIC_ACCESS = ACCESS.public

/** The description an operation shows: what it does, then who may call it. */
export const describe = (d: OperationDoc) => [d.description, ACCESS[d.access]].filter((s) => s !== "").join("\n\n")
