import type { SqlClient } from "@effect/sql"
import { Context, Effect } from "effect"
import { type DataOf, type EventType, type OutboxEvent, PUBLIC_EVENT_TYPES } from "../../src/contract/Events.js"
import { direct } from "../../src/db/Direct.js"

/** What a downstream consumer of committed outbox events wants: its name and the event types it handles. */
export interface Subscription {
  /** Lower case letters, digits, `_` and `-`; stored in `outbox_pending.consumer`. */
  readonly name: string
  /**
   * The event types (`deposit.reconciled`, ...) it wants, or every public type ("all": every type but the internal
   * ones, `internal.*`, which one consumer stages for another and which never leave the service).
   */
  readonly eventTypes: "all" | ReadonlyArray<EventType>
  /**
   * PROBE: a condition that reads a table through the event's tenant or account should end its EXISTS with `OFFSET 0`.
   * Without it Postgres may plan the EXISTS as a hashed subplan, which reads every matching row of every tenant once
   * per staging statement (the bench's 100 billed accounts: 0.26-0.32 ms of a 57-63 deposit batch's write in
   * auto_explain's plans, and the cost grows with the platform, not with the batch); with it, each event is an index probe.
   *
   * When only some tenants' or accounts' events concern it: a SQL condition on the staged outbox row `o` (its
   * `tenant_id`, `mode`, `subject_key`, `event_type`) and on the event's facts `x` (`EventFacts`: a deposit's
   * `x.risk_score`, `x.amount_kobo`, `x.status`), checked in the staging statement. It never reads `o.envelope`: the
   * envelope is `json` text, parsed whole by every `#>>` on it, in the reconciler's transaction. An event it is false for gets
   * no pending row, so a tenant with nothing configured costs the consumer nothing (no row written, claimed, deleted).
   * The condition sees the configuration as the staging transaction's statement sees it: configuration committed
   * after the event's statement began applies from the next event on. Code constants only, never input.
   */
  readonly interestedWhen?: string
}

/** Event types consumers stage for other consumers (src/contract/Events.ts): never relayed, never sent to webhooks. */
export { INTERNAL_PREFIX, isInternalEvent } from "../../src/contract/Events.js"

/**
 * What an `interestedWhen` may read of an event besides its outbox row, as `x.<column>` (FACT_COLUMNS): a deposit
 * event's transaction and account figures, NULL for any other event. The staging statement takes them from
 * the events it stages (`factsOf`), beside the envelopes, so no condition parses an envelope. Reading them from the
 * staged `json` envelope (`o.envelope #>> ...`) parsed the whole 1 KB envelope per field read, about 9 us each, up to
 * four times per deposit, in the reconciler's transaction while it holds the accounts' rows (issue 33).
 */
export interface EventFacts {
  readonly riskScore: number | null
  readonly amountKobo: number | null
  readonly status: string | null
  /** The deposit's account as the deposit left it (`x.expected_kobo`, `x.overpayment_kobo`, `x.deficit_kobo`): NULL without one. */
  readonly expectedKobo: number | null
  readonly overpaymentKobo: number | null
  readonly deficitKobo: number | null
}

const NO_FACTS: EventFacts = { riskScore: null, amountKobo: null, status: null, expectedKobo: null, overpaymentKobo: null, deficitKobo: null }

/** The facts of one staged event (`EventFacts`). */
export const factsOf = (event: OutboxEvent): EventFacts => {
  if (event.type !== "deposit.reconciled") return NO_FACTS
  const t = event.data.transaction
  const a = event.data.account
  return {
    riskScore: t.riskScore, amountKobo: t.amountKobo, status: t.status,
    expectedKobo: a?.expectedAmountKobo ?? null, overpaymentKobo: a?.overpayment ?? null, deficitKobo: a?.deficit ?? null
  }
}

/** Each fact's column in the staging statement's facts (`x`), and its type: the one list the statement and the conditions read. */
const FACT_COLUMNS: { readonly [K in keyof EventFacts]: readonly [column: string, type: "int8" | "text"] } = {
  riskScore: ["risk_score", "int8"], amountKobo: ["amount_kobo", "int8"], status: ["status", "text"],
  expectedKobo: ["expected_kobo", "int8"], overpaymentKobo: ["overpayment_kobo", "int8"], deficitKobo: ["deficit_kobo", "int8"]
}
const FACT_KEYS = Object.keys(FACT_COLUMNS) as ReadonlyArray<keyof EventFacts>

/** The staging statement's `json_to_recordset(...) AS <this>`: the facts' row, keyed by the staged event's id. */
export const FACTS_RECORD = `x(event_id text, ${FACT_KEYS.map((k) => FACT_COLUMNS[k].join(" ")).join(", ")})`

/** One event's facts as a row of that recordset; undefined for an event without any (not a deposit). */
export const factsRow = (eventId: string, f: EventFacts): Record<string, string | number | null> | undefined => {
  if (f.riskScore === null && f.amountKobo === null && f.status === null) return undefined
  const row: Record<string, string | number | null> = { event_id: eventId }
  for (const k of FACT_KEYS) row[FACT_COLUMNS[k][0]] = f[k]
  return row
}

/** A field of a deposit event, as the staging statement's facts give it (`EventFacts`). */
const depositField = (name: keyof EventFacts) => `x.${FACT_COLUMNS[name][0]}`

/**
 * NECESSARY conditions of src/domain/Automation.ts's triggers on a deposit's facts (`depositFactsOf` in
 * services/automation/DepositFacts.ts: surplus = min(amount, overpayment) when credited with an expected amount;
 * deficit after = the account's deficit): credited (`Completed`), an expected amount, and for overpaid a surplus, for
 * underpaid a deficit, for fully paid none and not the whole deposit surplus. A NULL (no account) is false: a deposit
 * without an account fires nothing.
 */
const CREDITED = `${depositField("status")} = 'Completed' AND ${depositField("expectedKobo")} IS NOT NULL`
const OVERPAID = `(${CREDITED} AND ${depositField("overpaymentKobo")} > 0)`
const UNDERPAID = `(${CREDITED} AND ${depositField("deficitKobo")} > 0)`
const FULLY_PAID = `(${CREDITED} AND ${depositField("deficitKobo")} = 0 AND ${depositField("overpaymentKobo")} < ${depositField("amountKobo")})`

/** The rules and flows planner: which of a tenant's rules and flows each deposit fires (services/automation). */
export const AUTOMATION: Subscription = {
  name: "automation",
  eventTypes: ["deposit.reconciled"],
  // Only a deposit that one of the tenant's money rules or enabled payment flows in the mode might fire (both probes on
  // the tenant indexes). Each clause is a NECESSARY condition of src/domain/Automation.ts's `ruleFires` / `flowFires`,
  // on what the event carries: a HighRisk rule's minimum risk score; an overpaid, underpaid or fully-paid trigger's
  // figures (OVERPAID, UNDERPAID, FULLY_PAID); a flow's minimum risk score and amount, and a high-risk flow without a
  // score fires only for a deposit held for review. AnyDeposit and deposit count as interested (the planner decides). A
  // tenant whose only rule is "flag the risky ones" or "hold an overpayment" then costs the planner nothing for the
  // deposits that are not (issue 33: the bench's light and heavy workloads). test/outbox/Interest.test.ts checks, on
  // random configurations and deposits, that every deposit `planFirings` would fire gets a planner row.
  interestedWhen: `EXISTS (SELECT 1 FROM money_rules r WHERE r.tenant_id = o.tenant_id AND r.mode = o.mode
      AND CASE r.trigger WHEN 'HighRisk' THEN ${depositField("riskScore")} >= r.min_risk_score WHEN 'Overpaid' THEN ${OVERPAID}
        WHEN 'Underpaid' THEN ${UNDERPAID} ELSE true END)
    OR EXISTS (SELECT 1 FROM payment_flows f WHERE f.tenant_id = o.tenant_id AND f.mode = o.mode AND f.enabled
      AND (f.min_risk_score IS NULL OR ${depositField("riskScore")} >= f.min_risk_score)
      AND (f.min_amount_kobo IS NULL OR ${depositField("amountKobo")} >= f.min_amount_kobo)
      AND CASE f.trigger WHEN 'high-risk' THEN f.min_risk_score IS NOT NULL OR ${depositField("status")} <> 'Completed'
        WHEN 'overpaid' THEN ${OVERPAID} WHEN 'underpaid' THEN ${UNDERPAID} WHEN 'fully-paid' THEN ${FULLY_PAID} ELSE true END)`
}
/** The rules and flows actor: each fired rule or flow on its own, so one that keeps failing holds back no other. */
export const AUTOMATION_FIRED = "internal.automation.fired" as const
export const AUTOMATION_ACTIONS: Subscription = { name: "automation-actions", eventTypes: [AUTOMATION_FIRED] }

/** The outbox relay: every event goes to the RECONCILED stream. */
export const RELAY: Subscription = { name: "relay", eventTypes: "all" }
/** The webhook stager: every event may have endpoints to go to. */
export const WEBHOOKS: Subscription = {
  name: "webhooks",
  eventTypes: "all",
  // Only a tenant with an active endpoint in the mode (webhook_endpoints_tenant_idx, partial on active): a probe per
  // event (OFFSET 0, see PROBE), not a hash of every tenant's active endpoints per statement.
  interestedWhen: "EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant_id = o.tenant_id AND e.mode = o.mode AND e.active OFFSET 0)"
}

/** Internal events that tell the insights consumer an account's or a billing schedule's figures changed. */
export const INSIGHTS_ACCOUNT = "internal.insights.account" as const
export const INSIGHTS_SCHEDULE = "internal.insights.schedule" as const
export type InsightsAccountData = DataOf<typeof INSIGHTS_ACCOUNT>
export type InsightsScheduleData = DataOf<typeof INSIGHTS_SCHEDULE>
/**
 * The key of a consumer's turn: the transaction-level advisory lock each of its passes takes (services/outbox/Runner.ts),
 * so one pass runs at a time across processes.
 */
export const consumerTurnKey = (name: string): string => `consumer:${name}`
/** Takes the turn `key` for the caller's transaction if it is free: whether it did (it goes with the commit). */
export const tryTurn = (sql: SqlClient.SqlClient, key: string) =>
  direct(sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS ok`).pipe(Effect.map((rows) => rows[0]?.ok === true))
/** Takes the turn `key` for the caller's transaction, waiting for whoever holds it. */
export const awaitTurn = (sql: SqlClient.SqlClient, key: string) => direct(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`)
/** The insights consumer's turn, which every write of the roll-ups takes (services/insights/RollupStore.ts `writerLock`). */
export const INSIGHTS_TURN = consumerTurnKey("insights")
/**
 * The insight roll-ups (services/insights/InsightsConsumer.ts): an account's or a schedule's change. Deposits and
 * review decisions are read from the transactions by commit horizon instead (services/insights/InsightsCursor.ts), so
 * they stage no pending row here.
 */
export const INSIGHTS: Subscription = {
  name: "insights",
  eventTypes: [INSIGHTS_ACCOUNT, INSIGHTS_SCHEDULE]
}

/**
 * Billing at payment time (services/billing/BillingConsumer.ts): a deposit or a review decision that pays (or un-pays) a
 * billed account's period marks it and stages `billing.period.paid` within a pass.
 */
export const BILLING: Subscription = {
  name: "billing",
  eventTypes: ["deposit.reconciled", "transaction.reviewed"],
  // Only an account (the subject key is its accountRef) with a live schedule: what `Billing.syncAccounts` works on. Two
  // probes per event (OFFSET 0, see PROBE), not a hash of every tenant's live schedules per statement.
  interestedWhen: `EXISTS (SELECT 1 FROM virtual_accounts va JOIN billing_schedules s ON s.virtual_account_id = va.id AND s.status IN ('Active', 'Paused')
    WHERE va.tenant_id = o.tenant_id AND va.mode = o.mode AND va.account_ref = o.subject_key OFFSET 0)`
}


const NAME = /^[a-z][a-z0-9_-]{0,62}$/
const EVENT_TYPE = /^[a-z][a-z0-9_.]{0,99}$/

/** Checks the names and types once, so they can be written into SQL text as literals. */
export const checkRegistry = (subscriptions: ReadonlyArray<Subscription>): ReadonlyArray<Subscription> => {
  const seen = new Set<string>()
  for (const s of subscriptions) {
    if (!NAME.test(s.name)) throw new Error(`consumer name ${JSON.stringify(s.name)} must match ${NAME}`)
    if (seen.has(s.name)) throw new Error(`consumer ${s.name} is registered twice`)
    seen.add(s.name)
    if (s.eventTypes !== "all") {
      if (s.eventTypes.length === 0) throw new Error(`consumer ${s.name} wants no event type`)
      for (const t of s.eventTypes) if (!EVENT_TYPE.test(t)) throw new Error(`event type ${JSON.stringify(t)} must match ${EVENT_TYPE}`)
    }
  }
  return subscriptions
}

/**
 * The registry's value until a layer gives one: the service graph (src/Services.ts) then puts the capabilities' list
 * (services/Capabilities.ts `BUILT_IN`) in its place, so this module need not import every capability.
 */
export const UNSET_CONSUMERS: ReadonlyArray<Subscription> = Object.freeze([])

/**
 * The registry the outbox writes pending rows from: the capabilities' consumers unless a layer provides another list
 * (tests add consumers of their own with `Layer.succeed(ConsumerRegistry, [...BUILT_IN, mine])`).
 */
export class ConsumerRegistry extends Context.Reference<ConsumerRegistry>()("services/outbox/ConsumerRegistry", {
  defaultValue: (): ReadonlyArray<Subscription> => UNSET_CONSUMERS
}) {}


/**
 * The `(VALUES ...) AS c(consumer, event_type)` list the outbox joins each new event with: one row per consumer and
 * wanted type, every public type of the catalogue (`PUBLIC_EVENT_TYPES`) for a consumer of "all". Built once from the
 * checked registry, so the statement text never changes (it stays one prepared statement) and an event costs a
 * pending row only for consumers that want it. The join is then an equality on the type, which the planner hashes;
 * "all" as a NULL type with a `NOT LIKE 'internal.%'` test made it a nested loop that tested every event against every
 * row of the list (issue 33; the gain was within what auto_explain's per-node timings could resolve).
 */
export const interestValues = (subscriptions: ReadonlyArray<Subscription>): string => {
  const rows = checkRegistry(subscriptions).flatMap((s) =>
    (s.eventTypes === "all" ? PUBLIC_EVENT_TYPES : s.eventTypes).map((t) => `('${s.name}', '${t}'::text)`)
  )
  return rows.length === 0 ? "(VALUES (NULL::text, NULL::text) LIMIT 0)" : `(VALUES ${rows.join(", ")})`
}

/**
 * The join condition of an outbox row `o` with the interest list `c`: a wanted type (`interestValues` spells "all" out
 * as the public types); and the consumer's `interestedWhen`, if it has one.
 */
export const interestJoin = (subscriptions: ReadonlyArray<Subscription>): string => {
  const typed = "c.event_type = o.event_type"
  const conditional = checkRegistry(subscriptions).filter((s) => s.interestedWhen !== undefined)
  if (conditional.length === 0) return typed
  return `${typed} AND CASE c.consumer ${conditional.map((s) => `WHEN '${s.name}' THEN (${s.interestedWhen})`).join(" ")} ELSE true END`
}
