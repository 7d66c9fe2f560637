import { Effect } from "effect"
import type { PublicEvent, PublicEventType } from "../../src/contract/Events.js"
import { NotFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import type { Scope } from "../../src/domain/Mode.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { EVENTS_WINDOW_DAYS, type EventRow, EventsStore } from "./EventsStore.js"

/** The envelope as staged: the same fields, in the same order, as a webhook delivery's body (services/webhooks). */
const toEvent = (row: EventRow): PublicEvent => {
  const e = JSON.parse(row.envelope) as PublicEvent
  return { id: e.id, type: e.type, createdAt: e.createdAt, mode: e.mode, data: e.data }
}

const eventNotFound = (id: string) =>
  new NotFound({
    code: "event_not_found",
    message: `No event ${JSON.stringify(id)} in this tenant and mode within the last ${EVENTS_WINDOW_DAYS} days (only public events are kept for reading).`
  })

/**
 * The tenant's public events (what its webhooks carry) in its mode, over the last 30 days, read from the outbox:
 * internal events (`internal.*`) and other tenants' or modes' events are never seen, not even as a 404 that differs.
 */
export class Events extends Effect.Service<Events>()("services/events/Events", {
  effect: Effect.gen(function* () {
    const store = yield* EventsStore

    /** Newest first; `take` defaults to 50 and is clamped to 500; the page key is the event id. */
    const list = Effect.fn("Events.list")(function* (scope: Scope, opts: PageRequest & { readonly type?: PublicEventType | undefined }) {
      const after = yield* cursorId(opts, "id", (id) => store.rowIdOf(scope, id))
      const limit = limitOf(opts)
      const rows = yield* store.page(scope, { type: opts.type, after, limit })
      return pageOf(rows.map(toEvent), limit - 1)
    })

    const get = Effect.fn("Events.get")(function* (scope: Scope, id: string) {
      const row = yield* store.find(scope, id)
      if (row === undefined) return yield* eventNotFound(id)
      return toEvent(row)
    })

    return { list, get } as const
  })
}) {}
