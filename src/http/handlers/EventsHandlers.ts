import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Events } from "../../../services/events/Events.js"
import { Api } from "../Api.js"
import { requireApiOrOwnerAdmin } from "../Security.js"

/** Either plane (an API key, or a dashboard Owner/Admin, as webhook endpoints); scoped to the caller's tenant and mode. */
export const EventsHandlers = HttpApiBuilder.group(Api, "events", (h) =>
  Effect.gen(function* () {
    const events = yield* Events
    return h
      .handle("list", ({ urlParams }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => events.list(p, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(requireApiOrOwnerAdmin, (p) => events.get(p, path.id)))
  })
)
