import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

// Reading events (docs/webhooks.md, "Reading events").

const WHAT = "The public events your webhooks carry (docs/webhooks.md's catalogue; never internal ones), in the token's mode, from the " +
  "last 30 days: each the same envelope `{ id, type, createdAt, mode, data }` a webhook delivery sends, whether or not an endpoint was registered."

export const EVENTS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "events.list": doc("List events", "apiOrOwnerAdmin", `${WHAT} ${PAGE} Filter with \`type\` (one public type, any case; another is a 400 naming the valid ones); the page key is the event \`id\`.`),
  "events.get": doc("Get an event", "apiOrOwnerAdmin", `${WHAT} By its \`id\` (a webhook delivery's \`eventId\`); an unknown id, another tenant's or mode's, an internal event or one older than 30 days is 404 \`event_not_found\`.`)
}
