import { type Either, type ParseResult, Schema } from "effect"
import type { Mode } from "../domain/Mode.js"
import { VirtualAccount } from "./Accounts.js"
import { Period } from "./Billing.js"
import { CaseInsensitiveLiteral, ModeSchema } from "./Schemas.js"
import { RiskReason, Transaction } from "./Deposits.js"
import { Settlement } from "./Settlement.js"
import { Transfer } from "./Transfers.js"

/**
 * The event catalogue: every event the outbox stages, public (webhooks, the RECONCILED stream; docs/webhooks.md) and
 * internal (`internal.*`, which one consumer stages for another and which never leave the service), each as its `type`
 * literal and the schema of its `data`, exactly as it is sent. The outbox accepts only these (types only: the stage
 * path does not encode); the consumer runner decodes `data` with them for the consumers that read it.
 */

/** The risk assessment a deposit event carries (src/domain/Risk.ts's RiskAssessment). */
export const RiskAssessment = Schema.Struct({ score: Schema.Int, reasons: Schema.Array(RiskReason) }).annotations({ identifier: "RiskAssessment" })

/** `deposit.reconciled` and `transaction.review_required`: the transaction, its account after it, its risk. */
export const DepositData = Schema.Struct({ transaction: Transaction, account: Schema.NullOr(VirtualAccount), risk: RiskAssessment })
export const ReversalReceivableData = Schema.Struct({ ...DepositData.fields, receivableKobo: Schema.Int })
export const TransactionReviewedData = Schema.Struct({ transaction: Transaction, account: Schema.NullOr(VirtualAccount) })
export const TransactionFlaggedData = Schema.Union(
  Schema.Struct({ transaction: Transaction, reason: Schema.String, ruleId: Schema.String }),
  Schema.Struct({ transaction: Transaction, reason: Schema.String, flowId: Schema.String })
)
export const RuleNotifyData = Schema.Struct({ ruleId: Schema.String, trigger: Schema.String, transaction: Transaction })
export const FlowNotifyData = Schema.Struct({ flowId: Schema.String, trigger: Schema.String, transaction: Transaction })
export const TransferData = Schema.Struct({ transfer: Transfer })
export const RefundSentData = Schema.Struct({ depositReference: Schema.NullOr(Schema.String), accountRef: Schema.NullOr(Schema.String), transfer: Transfer })
export const SettlementData = Schema.Struct({ settlement: Settlement })
export const VirtualAccountUpdatedData = Schema.Struct({ account: VirtualAccount, changed: Schema.Array(Schema.String) })
export const BillingPeriodData = Schema.Struct({ scheduleId: Schema.String, reference: Schema.String, accountRef: Schema.String, period: Period })

/** The actor's unit of work: one fired rule or flow (services/automation). */
export const AutomationFiredData = Schema.Struct({ runId: Schema.String })
/** An account's figures changed (created, removed, refunded): the insights consumer recomputes it. */
export const InsightsAccountData = Schema.Struct({ accountId: Schema.String })
/** A billing schedule's dues (and its account's expected amount) may have changed. */
export const InsightsScheduleData = Schema.Struct({ scheduleId: Schema.String, accountId: Schema.String })

/** The data schema of every event type, public first, in docs/webhooks.md's order. */
export const EVENT_DATA = {
  "deposit.reconciled": DepositData,
  "transaction.review_required": DepositData,
  "transaction.reviewed": TransactionReviewedData,
  "rule.notify": RuleNotifyData,
  "flow.notify": FlowNotifyData,
  "transaction.flagged": TransactionFlaggedData,
  "transfer.successful": TransferData,
  "transfer.failed": TransferData,
  "transfer.reversed": TransferData,
  "refund.sent": RefundSentData,
  "settlement.paid": SettlementData,
  "settlement.failed": SettlementData,
  "settlement.skipped": SettlementData,
  "reversal.receivable": ReversalReceivableData,
  "billing.period.due": BillingPeriodData,
  "billing.period.paid": BillingPeriodData,
  "billing.period.overdue": BillingPeriodData,
  "virtual_account.updated": VirtualAccountUpdatedData,
  "internal.automation.fired": AutomationFiredData,
  "internal.insights.account": InsightsAccountData,
  "internal.insights.schedule": InsightsScheduleData
} as const

type Catalogue = typeof EVENT_DATA

/** Every event type the service stages. */
export type EventType = keyof Catalogue
/** What an event of type T carries in `data`. */
export type DataOf<T extends EventType> = Catalogue[T]["Type"]

/** The `{ type, data }` of an event of one of the types T (a union, discriminated by `type`). */
export type EventOf<T extends EventType> = T extends EventType ? { readonly type: T; readonly data: DataOf<T> } : never
/** Any event of the catalogue: what `Outbox.stage` accepts. */
export type OutboxEvent = EventOf<EventType>

/** Event types consumers stage for other consumers: never relayed to the RECONCILED stream, never sent to webhooks. */
export const INTERNAL_PREFIX = "internal."
export type InternalEventType = Extract<EventType, `internal.${string}`>
export type PublicEventType = Exclude<EventType, InternalEventType>
export const isInternalEvent = (eventType: string) => eventType.startsWith(INTERNAL_PREFIX)

const ALL_EVENT_TYPES = Object.keys(EVENT_DATA) as ReadonlyArray<EventType>
export const PUBLIC_EVENT_TYPES = ALL_EVENT_TYPES.filter((t): t is PublicEventType => !isInternalEvent(t))
export const INTERNAL_EVENT_TYPES = ALL_EVENT_TYPES.filter((t): t is InternalEventType => isInternalEvent(t))

export const isEventType = (type: string): type is EventType => Object.prototype.hasOwnProperty.call(EVENT_DATA, type)

/** One event of the catalogue as a schema: its `type` literal and its data. */
const member = <T extends EventType>(type: T) => Schema.Struct({ type: Schema.Literal(type), data: EVENT_DATA[type] as Catalogue[T] })

/** The catalogue as one schema, a union tagged by `type` (the `{ type, data }` part of the envelope). */
export const OutboxEvent: Schema.Schema<OutboxEvent> = Schema.Union(...ALL_EVENT_TYPES.map(member)).annotations({ identifier: "OutboxEvent" }) as never

/**
 * The `data` decoder of each type, compiled once (at module load). A decoder returns the decoded data or a ParseError
 * whose message says what is wrong; excess fields are ignored (fields are only ever added to `data`).
 */
export const DATA_DECODERS: { readonly [T in EventType]: (data: unknown) => Either.Either<DataOf<T>, ParseResult.ParseError> } = Object.fromEntries(ALL_EVENT_TYPES.map((t) => [t, Schema.decodeUnknownEither(EVENT_DATA[t] as Schema.Schema<unknown>)])) as never

/** The envelope every event follows, on webhooks and on the RECONCILED stream alike. */
export interface EventEnvelope<T = unknown> {
  readonly id: string
  readonly type: string
  readonly createdAt: string
  readonly mode: Mode
  readonly data: T
}

/** The envelope's fields as a schema (the docs' example bodies are checked against it). */
export const EventEnvelopeSchema = Schema.Struct({ id: Schema.String, type: Schema.String, createdAt: Schema.String, mode: ModeSchema, data: Schema.Unknown })

/** `?type=` of `GET /api/v1/events`: one public type (any case); an internal or unknown one is a 400 naming the valid ones. */
export const PublicEventTypeParam = CaseInsensitiveLiteral("type", PUBLIC_EVENT_TYPES as unknown as readonly [PublicEventType, ...Array<PublicEventType>])

/** One public event as `GET /api/v1/events` answers it: the envelope its webhook deliveries carry, as staged. */
export const PublicEvent = Schema.Struct({
  id: Schema.String.annotations({ description: "The event's id (`evt_...`): the envelope's `id`, the `eventId` of its webhook deliveries." }),
  type: Schema.String.annotations({ description: "One of the public event types (docs/webhooks.md's catalogue)." }),
  createdAt: Schema.String.annotations({ description: "When the event was staged (ISO-8601, UTC).", jsonSchema: { format: "date-time" } }),
  mode: ModeSchema.annotations({ description: "The mode it happened in: the caller's." }),
  data: Schema.Unknown.annotations({ description: "What the type carries, exactly as its webhook deliveries send it (docs/webhooks.md)." })
}).annotations({ identifier: "Event", description: "An event as webhooks deliver it: `{ id, type, createdAt, mode, data }`." })
export type PublicEvent = typeof PublicEvent.Type

/** The problem codes the events reads answer (src/contract/Problems.ts gathers every capability's). */
export const EVENTS_PROBLEMS = {
  event_not_found: 404
} as const satisfies Record<string, number>
