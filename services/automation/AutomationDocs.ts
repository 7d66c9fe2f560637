import { doc, type OperationDoc } from "../../src/contract/OperationDoc.js"

// Money rules and payment flows (docs/automation.md).

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

export const AUTOMATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  "rules.list": doc("List money rules", "any", "In the order they run: ascending `priority`, then creation; `{ data, hasMore }` with `take` and `startingAfter` (a rule `id`). At most 100 rules per tenant and mode."),
  "rules.create": doc("Create a money rule", "apiOrOwnerAdmin", RULES),
  "rules.dryRun": doc("Dry-run a money rule over recent deposits", "any", "Beyond the interface. Body: a rule as for create, and `take` (1 to 500, default 50). Replays the tenant's last `take` deposits (this mode, newest first) through the rule and answers `{ data: [{ transactionReference, accountRef, amountKobo, fired, steps: [{ action, outcome }] }] }`: what it would have done, each step's `action` spelt as the rule spells it (`Hold`, `Notify`, `ReviewFlag`). Nothing is written, held or sent. A deposit's deficit is read against the account's expected amount now."),
  "rules.delete": doc("Delete a money rule", "apiOrOwnerAdmin", "204; 404 `rule_not_found`. Deposits planned before the delete keep their runs."),
  "flows.list": doc("List payment flows", "dashboard", "In the order they run: ascending `priority`, then creation, with their ordered `actions`; `{ data, hasMore }` with `take` and `startingAfter` (a flow `id`). At most 100 flows per tenant and mode."),
  "flows.create": doc("Create a payment flow", "ownerAdmin", FLOWS),
  "flows.runs": doc("List payment flow runs", "dashboard", "Newest first: one entry per flow that fired for a deposit, `{ id, flowId, flowName, transactionReference, accountRef, firedAt, steps: [{ action, outcome }] }`, each outcome in words (\"held 5,000.00 NGN in escrow\"). `take` (default 50, at most 500) and `startingAfter` (a run `id`). A run is listed once its actions were applied; one whose action keeps failing is retried, then dead-lettered (`collections consumers dead-letters list --consumer automation-actions`)."),
  "flows.get": doc("Fetch a payment flow", "dashboard", "404 `flow_not_found`."),
  "flows.replace": doc("Replace a payment flow", "ownerAdmin", "Body as create; replaces the whole configuration (`enabled` only when given). Deposits planned from now on see the new configuration; runs keep what ran. 404 `flow_not_found`."),
  "flows.delete": doc("Delete a payment flow", "ownerAdmin", "204; 404 `flow_not_found`. Its runs stay listed."),
  "flows.setEnabled": doc("Enable or disable a payment flow", "ownerAdmin", "Body `{ enabled }`; answers the flow. A disabled flow fires for no deposit planned while it is disabled. 404 `flow_not_found`."),
  "flows.dryRun": doc("Dry-run a payment flow over recent deposits", "dashboard", "Beyond the interface. Body `{ take }` (1 to 500, default 50) or none. Replays the tenant's last `take` deposits (newest first) through the flow, as if enabled, and answers `{ data: [{ transactionReference, accountRef, amountKobo, fired, steps }] }` (each step's `action` lower-case, as the flow spells it). Nothing is written, held or sent. 404 `flow_not_found`.")
}
