import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PublicEventType } from "../../src/contract/Events.js"
import type { Scope } from "../../src/domain/Mode.js"

/** How far back the events reads go. */
export const EVENTS_WINDOW_DAYS = 30

/**
 * Public events only, written as the same literal text as the partial index's predicate
 * (migrations/0021_public_events_index.ts), so the planner can prove the index applies. Never a bound parameter.
 */
const PUBLIC_ONLY = "o.event_type NOT LIKE 'internal.%'"
const IN_WINDOW = `o.created_at > now() - interval '${EVENTS_WINDOW_DAYS} days'`

/** An outbox row's envelope as it was staged, verbatim (`json`), with its row id for paging. */
export interface EventRow {
  readonly id: string
  readonly envelope: string
}

/** A page's read: `limit` rows after the row `after` (a row id from `rowIdOf`), of one type when given. */
export interface PageQuery {
  readonly type?: PublicEventType | undefined
  readonly after?: string | undefined
  readonly limit: number
}

/** The events reads' SQL: the outbox's public rows of one tenant and mode, within the window. */
export class EventsStore extends Effect.Service<EventsStore>()("services/events/EventsStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const visible = (scope: Scope) =>
      sql`o.tenant_id = ${scope.tenantId} AND o.mode = ${scope.mode} AND ${sql.literal(PUBLIC_ONLY)} AND ${sql.literal(IN_WINDOW)}`

    /** The row id of a visible event, by its event id (the page key). */
    const rowIdOf = (scope: Scope, eventId: string) =>
      sql<{ id: string }>`SELECT o.id::text AS id FROM outbox o WHERE o.event_id = ${eventId} AND ${visible(scope)}`

    /** One visible event by its event id. */
    const find = (scope: Scope, eventId: string) =>
      sql<EventRow>`SELECT o.id::text AS id, o.envelope::text AS envelope FROM outbox o WHERE o.event_id = ${eventId} AND ${visible(scope)}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** Newest first. */
    const pageStatement = (scope: Scope, opts: PageQuery) => {
      const where = [visible(scope)]
      if (opts.type !== undefined) where.push(sql`o.event_type = ${opts.type}`)
      if (opts.after !== undefined) where.push(sql`(o.created_at, o.id) < (SELECT created_at, id FROM outbox WHERE id = ${opts.after})`)
      return sql<EventRow>`SELECT o.id::text AS id, o.envelope::text AS envelope FROM outbox o WHERE ${sql.and(where)}
        ORDER BY o.created_at DESC, o.id DESC LIMIT ${opts.limit}`
    }
    const page = (scope: Scope, opts: PageQuery) => Effect.orDie(pageStatement(scope, opts))

    // The statement itself is exported for the test that checks its plan (test/events/EventsPlan.test.ts).
    return { rowIdOf, find, page, pageStatement } as const
  })
}) {}
