import { Context } from "effect"

/** What a downstream consumer of committed outbox events wants: its name and the event types it handles. */
export interface Subscription {
  /** Lower case letters, digits, `_` and `-`; stored in `outbox_pending.consumer`. */
  readonly name: string
  /** The event types (`deposit.reconciled`, ...) it wants, or every type. */
  readonly eventTypes: "all" | ReadonlyArray<string>
}

/** The outbox relay: every event goes to the RECONCILED stream. */
export const RELAY: Subscription = { name: "relay", eventTypes: "all" }
/** The webhook stager: every event may have endpoints to go to. */
export const WEBHOOKS: Subscription = { name: "webhooks", eventTypes: "all" }

/** The consumers the service runs. A new consumer is added here (and run with `makeConsumerRunner`). */
export const BUILT_IN: ReadonlyArray<Subscription> = [RELAY, WEBHOOKS]

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
 * The registry the outbox writes pending rows from: the built-in consumers unless a layer provides another list
 * (tests add consumers of their own with `Layer.succeed(ConsumerRegistry, [...BUILT_IN, mine])`).
 */
export class ConsumerRegistry extends Context.Reference<ConsumerRegistry>()("streams/consumers/ConsumerRegistry", {
  defaultValue: (): ReadonlyArray<Subscription> => BUILT_IN
}) {}

/**
 * The `(VALUES ...) AS c(consumer, event_type)` list the outbox joins each new event with: one row per consumer and
 * wanted type, a NULL type for a consumer of every type. Built once from the checked registry, so the statement text
 * never changes (it stays one prepared statement) and an event costs a pending row only for consumers that want it.
 */
export const interestValues = (subscriptions: ReadonlyArray<Subscription>): string => {
  const rows = checkRegistry(subscriptions).flatMap((s) =>
    s.eventTypes === "all" ? [`('${s.name}', NULL::text)`] : s.eventTypes.map((t) => `('${s.name}', '${t}'::text)`)
  )
  return rows.length === 0 ? "(VALUES (NULL::text, NULL::text) LIMIT 0)" : `(VALUES ${rows.join(", ")})`
}
