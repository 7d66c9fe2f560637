import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { formBody } from "../Client.js"
import { kobo } from "../../client/index.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, Empty, ErrorBox, Field, Form, koboOf, Loading, Money, NairaField, Notice, Section, Select, Table, useAction, useLoad } from "../ui.js"

interface Schedule { id: string; accountRef: string; interval: string; amountKobo: number; dueOffsetDays: number; description: string | null; reference: string; status: string; nextPeriodStart: string | null; nextAmountKobo: number; createdAt: string }

const INTERVALS = ["Weekly", "Monthly", "Quarterly", "Yearly"]

const CreateSchedule = ({ onCreated }: { onCreated: (s: Schedule) => void }) => {
  const [f, setF] = useState({ accountRef: "", interval: "Monthly", amount: "", dueOffsetDays: "0", description: "", reference: `sched-${Date.now().toString(36)}` })
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v })
  const act = useAction()
  return (
    <Form label="New billing schedule" onSubmit={() => act.run(async () => {
      if (!/^\d+$/.test(f.dueOffsetDays.trim())) throw new Error("Due after (days) must be a whole number from 0 to 365")
      const body: Record<string, unknown> = {
        accountRef: f.accountRef.trim(), interval: f.interval, amountKobo: koboOf("Amount per period", f.amount), dueOffsetDays: Number(f.dueOffsetDays.trim()), reference: f.reference.trim()
      }
      if (f.description.trim()) body.description = f.description.trim()
      const s = await dash((c) => c.billing.create({ payload: formBody(body) }))
      setF({ ...f, accountRef: "", amount: "", description: "", reference: `sched-${Date.now().toString(36)}` })
      onCreated(s)
    })}>
      <div class="grid3">
        <Field label="Account reference" name="billing-account" value={f.accountRef} onInput={set("accountRef")} required hint="An open or fully paid virtual account" />
        <Select label="Interval" name="billing-interval" value={f.interval} onChange={set("interval")} options={INTERVALS.map((i) => [i, i] as const)} />
        <NairaField label="Amount per period (₦)" name="billing-amount" value={f.amount} onInput={set("amount")} required />
        <Field label="Due after (days)" name="billing-due" inputMode="numeric" value={f.dueOffsetDays} onInput={set("dueOffsetDays")} />
        <Field label="Description" name="billing-description" value={f.description} onInput={set("description")} />
        <Field label="Reference (idempotency)" name="billing-reference" value={f.reference} onInput={set("reference")} required />
      </div>
      <ErrorBox error={act.error} />
      <Button type="submit" kind="primary" busy={act.busy}>Create schedule</Button>
    </Form>
  )
}

const SandboxClock = () => {
  const s = useSession()!
  const clock = useLoad(() => dash((c) => c.sandbox.clock()), [s.mode])
  const [days, setDays] = useState("1")
  const act = useAction()
  return (
    <Section title="Sandbox clock (test mode)">
      <ErrorBox error={clock.error ?? act.error} />
      {clock.data && <p>Billing time in test mode: <strong>{lagos(clock.data.now)}</strong> ({Math.round(clock.data.offsetSeconds / 86400)} days ahead of real time).</p>}
      {can(s.me?.user.role, "sandboxClock") && (
        <Form label="Advance the sandbox clock" class="inline-form" onSubmit={() => act.run(async () => {
          if (!/^\d+$/.test(days.trim()) || Number(days) < 1 || Number(days) > 366) throw new Error("Days must be a whole number from 1 to 366")
          clock.setData(await dash((c) => c.sandbox.advanceClock({ payload: { seconds: Number(days) * 86400 } })))
        })}>
          <Field label="Days to move forward" name="clock-days" inputMode="numeric" value={days} onInput={setDays} />
          <Button type="submit" busy={act.busy}>Advance clock</Button>
        </Form>
      )}
    </Section>
  )
}

export const BillingPage = () => {
  const s = useSession()!
  const mayWrite = can(s.me?.user.role, "billingWrite")
  const list = useLoad(() => dash((c) => c.billing.list({ urlParams: { take: 100 } })), [s.mode])
  const [created, setCreated] = useState<Schedule | null>(null)
  return (
    <>
      {mayWrite ? (
        <Section title="New billing schedule">
          <CreateSchedule onCreated={(x) => { setCreated(x); list.reload() }} />
          {created && <Notice kind="ok">Schedule <a href={`#/billing/${enc(created.id)}`}>{created.reference}</a> created: <Money kobo={created.amountKobo} /> {created.interval.toLowerCase()} on {created.accountRef}.</Notice>}
        </Section>
      ) : <Notice>Creating and changing billing schedules needs an Owner or Admin.</Notice>}
      <Section title="Schedules">
        <ErrorBox error={list.error} />
        <Table caption={`Billing schedules (${s.mode})`} head={["Reference", "Account", "Amount", "Interval", "Status", "Next period", "Next amount"]}>
          {list.data?.data.length === 0 && <Empty cols={7} text="No billing schedules." />}
          {list.data?.data.map((x) => (
            <tr key={x.id}>
              <td><a href={`#/billing/${enc(x.id)}`}>{x.reference}</a></td>
              <td><a href={`#/accounts/${enc(x.accountRef)}`}>{x.accountRef}</a></td>
              <td><Money kobo={x.amountKobo} /></td><td>{x.interval}</td><td><Badge text={x.status} /></td>
              <td>{lagos(x.nextPeriodStart)}</td><td><Money kobo={x.nextAmountKobo} /></td>
            </tr>
          ))}
        </Table>
      </Section>
      {s.mode === "test" && <SandboxClock />}
    </>
  )
}

export const ScheduleDetailPage = ({ id }: { id: string }) => {
  const s = useSession()!
  const mayWrite = can(s.me?.user.role, "billingWrite")
  const sched = useLoad(() => dash((c) => c.billing.get({ path: { id: id } })), [s.mode, id])
  const periods = useLoad(() => dash((c) => c.billing.periods({ path: { id: id }, urlParams: { take: 100 } })), [s.mode, id])
  const [next, setNext] = useState("")
  const act = useAction()
  const change = (what: "pause" | "resume" | "cancel" | { readonly amountKobo: number }) => act.run(async () => {
    sched.setData(await dash((c) => typeof what === "string"
      ? c.billing[what]({ path: { id } })
      : c.billing.setNextAmount({ path: { id }, payload: { amountKobo: kobo(what.amountKobo) } })))
    periods.reload()
  })
  if (sched.error) return <ErrorBox error={sched.error} />
  if (!sched.data) return <Loading what="the schedule" />
  const x = sched.data
  return (
    <>
      <p><a href="#/billing">← All schedules</a></p>
      <Section title={`Schedule ${x.reference}`}>
        <dl class="kv">
          <dt>Account</dt><dd><a href={`#/accounts/${enc(x.accountRef)}`}>{x.accountRef}</a></dd>
          <dt>Amount</dt><dd><Money kobo={x.amountKobo} /> {x.interval.toLowerCase()}, due {x.dueOffsetDays} days after each start</dd>
          <dt>Status</dt><dd><Badge text={x.status} /></dd>
          <dt>Next period</dt><dd>{lagos(x.nextPeriodStart)} · <Money kobo={x.nextAmountKobo} /></dd>
          <dt>Description</dt><dd>{x.description ?? "—"}</dd>
        </dl>
        {mayWrite && x.status !== "Cancelled" && (
          <div class="actions">
            {x.status === "Active" ? <Button busy={act.busy} onClick={() => change("pause")}>Pause</Button> : <Button busy={act.busy} onClick={() => change("resume")}>Resume</Button>}{" "}
            <Button kind="danger" busy={act.busy} onClick={() => confirm("Cancel this schedule for good?") && change("cancel")}>Cancel schedule</Button>
            <Form label="Next period's amount" class="inline-form" onSubmit={() => { try { change({ amountKobo: koboOf("Next amount", next) ?? 0 }) } catch (e) { act.setError(e) } }}>
              <NairaField label="Next period's amount (₦)" name="next-amount" value={next} onInput={setNext} />
              <Button type="submit" busy={act.busy}>Set next amount</Button>
            </Form>
          </div>
        )}
        <ErrorBox error={act.error} />
      </Section>
      <Section title="Periods">
        <ErrorBox error={periods.error} />
        <Table caption="Billing periods, most recent first" head={["#", "Period", "Due", "Expected", "Paid", "Outstanding", "Status"]}>
          {periods.data?.data.length === 0 && <Empty cols={7} text="No periods yet." />}
          {periods.data?.data.map((p) => (
            <tr key={p.id}><td>{p.index}</td><td>{lagos(p.periodStart)} – {lagos(p.periodEnd)}</td><td>{lagos(p.dueDate)}</td>
              <td><Money kobo={p.amountKobo} /></td><td><Money kobo={p.paidKobo} /></td><td><Money kobo={p.outstandingKobo} /></td><td><Badge text={p.status} /></td></tr>
          ))}
        </Table>
      </Section>
    </>
  )
}
