import { useEffect, useState } from "preact/hooks"
import type { PublicEvent, PublicEventType } from "../../contract/Events.js"
import { params } from "../Client.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { formatNaira } from "../Money.js"
import { useSession } from "../Session.js"
import { Button, Empty, ErrorBox, Loading, Section, Select, Table, useAction, useLoad } from "../ui.js"

/**
 * The tenant's public events, newest first, as its webhooks carry them (docs/webhooks.md "Reading events"): a filter
 * by type, "Load more" paging, and each event's JSON envelope in a disclosure. An API key or an Owner/Admin may read
 * them; a Member is not offered the page and, opening it by its address, sees the API's 403 once.
 */

const PAGE_SIZE = 25

/** Every public type (the compiler checks the list is complete against the contract's catalogue). */
const TYPES_OF: Record<PublicEventType, true> = {
  "deposit.reconciled": true, "transaction.review_required": true, "transaction.reviewed": true, "rule.notify": true,
  "flow.notify": true, "transaction.flagged": true, "transfer.successful": true, "transfer.failed": true,
  "transfer.reversed": true, "refund.sent": true, "settlement.paid": true, "settlement.failed": true,
  "settlement.skipped": true, "reversal.receivable": true, "billing.period.due": true, "billing.period.paid": true,
  "billing.period.overdue": true, "virtual_account.updated": true
}
const TYPES = Object.keys(TYPES_OF) as ReadonlyArray<PublicEventType>

type Page = { readonly data: ReadonlyArray<PublicEvent>; readonly hasMore: boolean }

const eventsPage = (type: string, startingAfter?: string): Promise<Page> =>
  dash((c) => c.events.list({ urlParams: params({ type, take: PAGE_SIZE, startingAfter }) }))

const field = (o: unknown, k: string): unknown => (o !== null && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined)

/** What the event is about, in a line: its deposit, transfer, settlement or account, and the amount. */
const about = (data: unknown): { text: string; deposit?: string } => {
  const tx = field(data, "transaction")
  const transfer = field(data, "transfer")
  const settlement = field(data, "settlement")
  const account = field(data, "account")
  const subject = tx ?? transfer ?? settlement
  const ref = field(tx, "reference") ?? field(transfer, "merchantTxRef") ?? field(settlement, "id") ?? field(data, "reference")
  const amount = field(subject, "amountKobo") ?? field(settlement, "netKobo")
  const accountRef = field(account, "accountRef") ?? field(data, "accountRef")
  const parts = [ref, typeof amount === "number" ? formatNaira(amount) : undefined, accountRef].filter((p): p is string => typeof p === "string" && p !== "")
  return { text: parts.join(" · ") || "—", ...(typeof field(tx, "reference") === "string" ? { deposit: field(tx, "reference") as string } : {}) }
}

const EventRow = ({ e }: { e: PublicEvent }) => {
  const a = about(e.data)
  return (
    <tr class="event" data-type={e.type} data-id={e.id}>
      <td>{lagos(e.createdAt)}</td>
      <td><code>{e.type}</code></td>
      <td>{a.deposit ? <a href={`#/transactions/${enc(a.deposit)}`}>{a.text}</a> : a.text}</td>
      <td class="payload">
        <details>
          <summary>JSON<span class="sr-only"> of {e.type} {e.id}</span></summary>
          <pre>{JSON.stringify(e, null, 2)}</pre>
        </details>
      </td>
    </tr>
  )
}

export const EventsPage = () => {
  const s = useSession()!
  const [type, setType] = useState("")
  const first = useLoad(() => eventsPage(type), [s.mode, type])
  const [more, setMore] = useState<ReadonlyArray<Page>>([])
  useEffect(() => setMore([]), [s.mode, type])
  const next = useAction()
  const rows = [...(first.data?.data ?? []), ...more.flatMap((p) => p.data)]
  const hasMore = (more.length > 0 ? more[more.length - 1]!.hasMore : first.data?.hasMore) ?? false
  const last = rows[rows.length - 1]?.id
  return (
    <>
      <Section title={`Events (${s.mode})`}>
        <p class="muted">What your webhooks carry, newest first, kept 30 days. Each event's JSON is the body its deliveries send.</p>
        <div class="inline-form">
          <Select label="Event type" name="event-type" value={type} onChange={setType} options={[["", "All types"], ...TYPES.map((t) => [t, t] as const)]} />
        </div>
        <ErrorBox error={first.error} />
        {first.loading && !first.data ? <Loading what="events" /> : !first.error && (
          <Table caption={type ? `Events of type ${type}` : "Latest events"} head={["When", "Type", "About", "Payload"]}>
            {rows.length === 0 && <Empty cols={4} text={type ? `No ${type} events in the last 30 days.` : "No events yet."} />}
            {rows.map((e) => <EventRow key={e.id} e={e} />)}
          </Table>
        )}
        <ErrorBox error={next.error} />
        {hasMore && last && (
          <Button busy={next.busy} onClick={() => void next.run(async () => {
            const p = await eventsPage(type, last)
            setMore((m) => [...m, p])
          })}>Load more</Button>
        )}
      </Section>
    </>
  )
}
