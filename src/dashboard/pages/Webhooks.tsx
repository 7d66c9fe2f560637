import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { params } from "../Client.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, CopyButton, Empty, ErrorBox, Field, Form, Notice, Pager, Section, Select, Table, useAction, useLoad, usePager } from "../ui.js"

interface Endpoint { id: string; url: string; active: boolean; createdAt: string }

export const WebhooksPage = () => {
  const s = useSession()!
  const endpoints = useLoad(() => dash((c) => c.webhookEndpoints.list({ urlParams: { take: 100 } })), [s.mode])
  const pager = usePager()
  const [status, setStatus] = useState("")
  const deliveries = useLoad(() => dash((c) => c.webhookEndpoints.deliveries({ urlParams: params({ status, take: 25, startingAfter: pager.startingAfter }) })), [s.mode, status, pager.startingAfter])
  const [url, setUrl] = useState("")
  const [created, setCreated] = useState<(Endpoint & { secret: string }) | null>(null)
  const act = useAction()
  return (
    <>
      {can(s.me?.user.role, "webhooks") && <Section title="Add an endpoint">
        <Form label="Add a webhook endpoint" onSubmit={() => act.run(async () => {
          setCreated(await dash((c) => c.webhookEndpoints.create({ payload: { url: url.trim() } })))
          setUrl("")
          endpoints.reload()
        })}>
          <Field label="URL (public https)" name="webhook-url" type="url" value={url} onInput={setUrl} required placeholder="https://example.ng/webhooks/collections" />
          <ErrorBox error={act.error} />
          <Button type="submit" kind="primary" busy={act.busy}>Add endpoint</Button>
        </Form>
        {created && (
          <div class="secret" role="status">
            <p><strong>Endpoint added.</strong> Its signing secret is shown only once:</p>
            <p><code id="webhook-signing-secret">{created.secret}</code> <CopyButton text={created.secret} label="Copy the signing secret" /></p>
          </div>
        )}
      </Section>}
      <Section title="Endpoints">
        <ErrorBox error={endpoints.error} />
        <Table caption={`Webhook endpoints (${s.mode})`} head={["URL", "Active", "Created", ""]}>
          {endpoints.data?.data.length === 0 && <Empty cols={4} text="No endpoints." />}
          {endpoints.data?.data.map((e) => (
            <tr key={e.id}><td><code>{e.url}</code></td><td>{e.active ? "Yes" : "No"}</td><td>{lagos(e.createdAt)}</td>
              <td>{e.active && can(s.me?.user.role, "webhooks") && <Button kind="danger" label={`Deactivate ${e.url}`} busy={act.busy} onClick={() => act.run(async () => { await dash((c) => c.webhookEndpoints.delete({ path: { id: e.id } })); endpoints.reload() })}>Deactivate</Button>}</td></tr>
          ))}
        </Table>
      </Section>
      <Section title="Deliveries">
        <Select label="Status" name="delivery-status" value={status} onChange={(v) => { pager.reset(); setStatus(v) }} options={[["", "Any"], ["Pending", "Pending"], ["Succeeded", "Succeeded"], ["Failed", "Failed"], ["DeadLettered", "Dead-lettered"]]} />
        <ErrorBox error={deliveries.error} />
        <Table caption="Webhook deliveries" head={["Event", "Status", "Attempts", "Last answer", "Next attempt", "Created", ""]}>
          {deliveries.data?.data.length === 0 && <Empty cols={7} text="No deliveries." />}
          {deliveries.data?.data.map((d) => (
            <tr key={d.id}><td>{d.eventType}</td><td><Badge text={d.status} /></td><td>{d.attempts}</td>
              <td>{d.lastStatusCode ?? ""} {d.lastError ?? ""}</td><td>{lagos(d.nextAttemptAt)}</td><td>{lagos(d.createdAt)}</td>
              <td>{d.status !== "Succeeded" && can(s.me?.user.role, "webhooks") && <Button label={`Replay delivery ${d.id}`} busy={act.busy} onClick={() => act.run(async () => { await dash((c) => c.webhookEndpoints.replay({ path: { id: d.id } })); deliveries.reload() })}>Replay</Button>}</td></tr>
          ))}
        </Table>
        <Pager pager={pager} hasMore={deliveries.data?.hasMore ?? false} lastKey={deliveries.data?.data[deliveries.data.data.length - 1]?.id} />
        <Notice>Replaying queues a failed, dead-lettered or pending delivery for an immediate attempt.</Notice>
      </Section>
    </>
  )
}
