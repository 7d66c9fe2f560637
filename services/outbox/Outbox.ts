import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { EventEnvelope, OutboxEvent } from "../../src/contract/Events.js"
import type { Mode } from "../../src/domain/Mode.js"
import { type Column, bulkInsert } from "../../src/db/BulkInsert.js"
import { newId } from "../../src/domain/Ids.js"
import { ConsumerRegistry, FACTS_RECORD, factsOf, factsRow, interestJoin, interestValues } from "./Registry.js"
import { OutboxWakeups } from "./Wakeups.js"
import { notifyOtherProcesses, stagesForOthers } from "./CrossProcessWakeups.js"
import { AppConfigTag } from "../../src/Config.js"
import { currentTraceparent, tracingOn } from "../../src/TraceContext.js"

/**
 * An event to stage: one of the catalogue's (src/contract/Events.ts), its `type` and the `data` its schema describes.
 * Checked by the compiler only: staging neither encodes nor validates (the deposit hot path stages through here).
 */
export type StagedEvent = {
  readonly tenantId: string
  readonly mode: Mode
  /** Names the stream subject's last token: the accountRef (or NUBAN when unmatched). */
  readonly subjectKey: string
} & OutboxEvent

/** The `EventFacts` of the events that have some, as the JSON array the staging statement reads them from. */
const factsJson = (events: ReadonlyArray<StagedEvent>, envelopes: ReadonlyArray<{ readonly envelope: EventEnvelope }>): string => {
  const rows: Array<Record<string, string | number | null>> = []
  for (let i = 0; i < events.length; i++) {
    const row = factsRow(envelopes[i]!.envelope.id, factsOf(events[i]!))
    if (row !== undefined) rows.push(row)
  }
  return JSON.stringify(rows)
}

type Prepared = { readonly tenantId: string; readonly subjectKey: string; readonly envelope: EventEnvelope; readonly traceparent?: string | undefined }

const OUTBOX_COLUMNS: ReadonlyArray<Column<Prepared>> = [
  ["event_id", "text", (e) => e.envelope.id], ["tenant_id", "text", (e) => e.tenantId], ["mode", "text", (e) => e.envelope.mode],
  ["event_type", "text", (e) => e.envelope.type], ["subject_key", "text", (e) => e.subjectKey], ["envelope", "json", (e) => e.envelope]
]
/** With tracing on, the staging span's trace context too (migration 0021); the column is never written otherwise. */
const OUTBOX_COLUMNS_TRACED: ReadonlyArray<Column<Prepared>> = [...OUTBOX_COLUMNS, ["traceparent", "text", (e) => e.traceparent]]

/**
 * Stages events in the caller's transaction; fibers in streams/ and services/webhooks drain them after commit, each
 * deleting its own `outbox_pending` rows as it goes.
 */
export class Outbox extends Effect.Service<Outbox>()("services/Outbox", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Which consumers want which event types (see services/outbox/Registry), as SQL text built once.
    const registry = yield* ConsumerRegistry
    const interests = sql.literal(interestValues(registry))
    const join = sql.literal(interestJoin(registry))
    const wakeups = yield* OutboxWakeups
    // An API process runs no consumers: its staging wakes the workers' through Postgres (CrossProcessWakeups.ts).
    // (Read if given: a test that builds the Outbox alone stages as a process with its own runners.)
    const forOthers = Option.exists(yield* Effect.serviceOption(AppConfigTag), (c) => stagesForOthers(c.role))
    const traced = yield* tracingOn
    /** Wakes this process's runners that want these events (call it once they are written; see Wakeups.ts). */
    const nudge = (events: ReadonlyArray<{ readonly type: string }>) => Effect.sync(() => wakeups.nudge(events.map((e) => e.type)))
    /**
     * The pieces of staging, for a caller that writes the events as part of a statement of its own: the envelopes
     * (ids made here), the INSERT of the outbox rows (RETURNING id, event_id, event_type, tenant_id, mode, subject_key), and the
     * INSERT of a pending row per event and consumer that wants it (its type, and the consumer's `interestedWhen`), for
     * the rows that a WITH query named `from` returns. (Postgres allows data-modifying WITH queries only at the top
     * level, so the caller names them there.) `traceparent`, given (tracing on), is kept with every event, for the
     * consumers' spans (services/outbox/Runner.ts).
     */
    const prepare = (events: ReadonlyArray<StagedEvent>, createdAt: string, traceparent?: string) => {
      const envelopes = events.map((e): Prepared => ({
        tenantId: e.tenantId,
        subjectKey: e.subjectKey,
        envelope: { id: newId("evt"), type: e.type, createdAt, mode: e.mode, data: e.data } satisfies EventEnvelope,
        traceparent
      }))
      const columns = traceparent === undefined ? OUTBOX_COLUMNS : OUTBOX_COLUMNS_TRACED
      return {
        envelopes: envelopes.map((e) => e.envelope),
        insertEvents: sql`${bulkInsert(sql, "outbox", columns, envelopes)} RETURNING id, event_id, event_type, tenant_id, mode, subject_key`,
        // The deposits' facts beside their rows (`EventFacts`, Registry.ts), so no consumer's condition parses an envelope.
        insertPending: (from: string) =>
          sql`INSERT INTO outbox_pending (consumer, outbox_id) SELECT c.consumer, o.id FROM ${sql(from)} o
            LEFT JOIN json_to_recordset(${factsJson(events, envelopes)}::json) AS ${sql.literal(FACTS_RECORD)}
              ON x.event_id = o.event_id
            JOIN ${interests} AS c(consumer, event_type) ON ${join}`
      }
    }

    const stage = Effect.fn("Outbox.stage")(function* (events: ReadonlyArray<StagedEvent>) {
      if (events.length === 0) return [] as ReadonlyArray<EventEnvelope>
      const staged = prepare(events, new Date(yield* Clock.currentTimeMillis).toISOString(), traced ? yield* currentTraceparent : undefined)
      // One statement: the events, and for each a pending row per consumer that wants it.
      yield* sql`WITH o AS (${staged.insertEvents}) ${staged.insertPending("o")}`
      if (forOthers) yield* notifyOtherProcesses(sql, events.map((e) => e.type))
      yield* nudge(events)
      return staged.envelopes
    })
    return { stage, prepare, nudge } as const
  })
}) {}
