import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { formBody } from "../Client.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, Checkbox, Empty, ErrorBox, Field, Form, koboOf, Money, NairaField, Notice, Section, Select, Table, useAction, useLoad } from "../ui.js"

interface Step { action: string; outcome: string }
interface DryRun { transactionReference: string; accountRef: string; amountKobo: number; fired: boolean; steps: ReadonlyArray<Step> }

const RULE_TRIGGERS = ["Overpaid", "Underpaid", "HighRisk", "AnyDeposit"]
const RULE_ACTIONS = ["Hold", "Notify", "ReviewFlag"]
const FLOW_TRIGGERS = ["deposit", "overpaid", "underpaid", "fully-paid", "high-risk"]
const FLOW_ACTIONS = ["hold", "release", "notify", "flag"]

const int = (label: string, v: string) => {
  if (v.trim() === "") return undefined
  if (!/^\d+$/.test(v.trim())) throw new Error(`${label} must be a whole number`)
  return Number(v.trim())
}

const DryRunTable = ({ rows }: { rows: ReadonlyArray<DryRun> }) => (
  <Table caption="Dry-run: what would have happened (nothing was changed)" head={["Deposit", "Account", "Amount", "Fired", "Steps"]}>
    {rows.length === 0 && <Empty cols={5} text="No recent deposits to replay." />}
    {rows.map((r) => (
      <tr key={r.transactionReference}>
        <td>{r.transactionReference}</td><td>{r.accountRef}</td><td><Money kobo={r.amountKobo} /></td>
        <td>{r.fired ? "Yes" : "No"}</td><td>{r.steps.map((s) => `${s.action}: ${s.outcome}`).join("; ") || "—"}</td>
      </tr>
    ))}
  </Table>
)

const RuleForm = ({ onCreated, mayWrite }: { onCreated: () => void; mayWrite: boolean }) => {
  const [f, setF] = useState({ trigger: "Overpaid", action: "Hold", threshold: "", minRiskScore: "", priority: "" })
  const [dry, setDry] = useState<ReadonlyArray<DryRun> | null>(null)
  const act = useAction()
  const body = () => {
    const b: Record<string, unknown> = { trigger: f.trigger, action: f.action }
    const t = koboOf("Threshold", f.threshold, { optional: true, allowZero: true })
    if (t !== undefined) b.thresholdKobo = t
    const r = int("Minimum risk score", f.minRiskScore)
    if (r !== undefined) b.minRiskScore = r
    const p = int("Priority", f.priority)
    if (p !== undefined) b.priority = p
    return b
  }
  return (
    <Form label="Money rule" onSubmit={() => act.run(async () => { await dash((c) => c.rules.create({ payload: formBody(body()) })); onCreated() })}>
      <div class="grid3">
        <Select label="Trigger" name="rule-trigger" value={f.trigger} onChange={(v) => setF({ ...f, trigger: v })} options={RULE_TRIGGERS.map((t) => [t, t] as const)} />
        <Select label="Action" name="rule-action" value={f.action} onChange={(v) => setF({ ...f, action: v })} options={RULE_ACTIONS.map((t) => [t, t] as const)} />
        <NairaField label="Threshold (₦, Overpaid/Underpaid)" name="rule-threshold" value={f.threshold} onInput={(v) => setF({ ...f, threshold: v })} allowZero />
        <Field label="Minimum risk score (HighRisk)" name="rule-risk" inputMode="numeric" value={f.minRiskScore} onInput={(v) => setF({ ...f, minRiskScore: v })} />
        <Field label="Priority (lower runs first)" name="rule-priority" inputMode="numeric" value={f.priority} onInput={(v) => setF({ ...f, priority: v })} />
      </div>
      <ErrorBox error={act.error} />
      <Button busy={act.busy} onClick={() => act.run(async () => setDry((await dash((c) => c.rules.dryRun({ payload: formBody(body()) }))).data))}>Dry-run over recent deposits</Button>{" "}
      {mayWrite && <Button type="submit" kind="primary" busy={act.busy}>Create rule</Button>}
      {dry && <DryRunTable rows={dry} />}
    </Form>
  )
}

const FlowForm = ({ onCreated }: { onCreated: () => void }) => {
  const [f, setF] = useState({ name: "", trigger: "deposit", actions: "notify", minAmount: "", minRiskScore: "", priority: "", enabled: true })
  const act = useAction()
  return (
    <Form label="Payment flow" onSubmit={() => act.run(async () => {
      const b: Record<string, unknown> = { name: f.name.trim(), trigger: f.trigger, actions: f.actions.split(/[\s,]+/).filter(Boolean), enabled: f.enabled }
      const m = koboOf("Minimum amount", f.minAmount, { optional: true, allowZero: true })
      if (m !== undefined) b.minAmountKobo = m
      const r = int("Minimum risk score", f.minRiskScore)
      if (r !== undefined) b.minRiskScore = r
      const p = int("Priority", f.priority)
      if (p !== undefined) b.priority = p
      await dash((c) => c.flows.create({ payload: formBody(b) }))
      onCreated()
    })}>
      <div class="grid3">
        <Field label="Name" name="flow-name" value={f.name} onInput={(v) => setF({ ...f, name: v })} required />
        <Select label="Trigger" name="flow-trigger" value={f.trigger} onChange={(v) => setF({ ...f, trigger: v })} options={FLOW_TRIGGERS.map((t) => [t, t] as const)} />
        <Field label={`Actions in order (${FLOW_ACTIONS.join(", ")})`} name="flow-actions" value={f.actions} onInput={(v) => setF({ ...f, actions: v })} hint="Separated by commas, e.g. hold, notify" />
        <NairaField label="Minimum amount (₦)" name="flow-min" value={f.minAmount} onInput={(v) => setF({ ...f, minAmount: v })} allowZero />
        <Field label="Minimum risk score" name="flow-risk" inputMode="numeric" value={f.minRiskScore} onInput={(v) => setF({ ...f, minRiskScore: v })} />
        <Field label="Priority" name="flow-priority" inputMode="numeric" value={f.priority} onInput={(v) => setF({ ...f, priority: v })} />
        <Checkbox label="Enabled" name="flow-enabled" checked={f.enabled} onChange={(v) => setF({ ...f, enabled: v })} />
      </div>
      <ErrorBox error={act.error} />
      <Button type="submit" kind="primary" busy={act.busy}>Create flow</Button>
    </Form>
  )
}

export const AutomationPage = () => {
  const s = useSession()!
  const role = s.me?.user.role
  const rules = useLoad(() => dash((c) => c.rules.list({ urlParams: { take: 100 } })), [s.mode])
  const flows = useLoad(() => dash((c) => c.flows.list({ urlParams: { take: 100 } })), [s.mode])
  const runs = useLoad(() => dash((c) => c.flows.runs({ urlParams: { take: 25 } })), [s.mode])
  const [dry, setDry] = useState<{ flow: string; rows: ReadonlyArray<DryRun> } | null>(null)
  const act = useAction()
  return (
    <>
      <Section title="Money rules">
        <ErrorBox error={rules.error ?? act.error} />
        <Table caption="Rules in the order they run" head={["Trigger", "Action", "Gate", "Priority", "Created", ""]}>
          {rules.data?.data.length === 0 && <Empty cols={6} text="No rules." />}
          {rules.data?.data.map((r) => (
            <tr key={r.id}>
              <td>{r.trigger}</td><td>{r.action}</td>
              <td>{r.thresholdKobo !== null ? <>≥ <Money kobo={r.thresholdKobo} /></> : r.minRiskScore !== null ? `risk ≥ ${r.minRiskScore}` : "—"}</td>
              <td>{r.priority}</td><td>{lagos(r.createdAt)}</td>
              <td>{can(role, "rulesWrite") && <Button kind="danger" label={`Delete rule ${r.trigger} ${r.action}`} busy={act.busy} onClick={() => act.run(async () => { await dash((c) => c.rules.delete({ path: { id: r.id } })); rules.reload() })}>Delete</Button>}</td>
            </tr>
          ))}
        </Table>
        <h3>{can(role, "rulesWrite") ? "New rule" : "Try a rule (dry-run)"}</h3>
        <RuleForm mayWrite={can(role, "rulesWrite")} onCreated={rules.reload} />
      </Section>
      <Section title="Payment flows">
        <ErrorBox error={flows.error} />
        <Table caption="Flows in the order they run" head={["Name", "Trigger", "Actions", "Gates", "Enabled", ""]}>
          {flows.data?.data.length === 0 && <Empty cols={6} text="No flows." />}
          {flows.data?.data.map((f) => (
            <tr key={f.id}>
              <td>{f.name}</td><td>{f.trigger}</td><td>{f.actions.join(" → ")}</td>
              <td>{f.minAmountKobo !== null ? <>≥ <Money kobo={f.minAmountKobo} /></> : "—"}{f.minRiskScore !== null ? ` · risk ≥ ${f.minRiskScore}` : ""}</td>
              <td><Badge text={f.enabled ? "Enabled" : "Disabled"} /></td>
              <td class="actions">
                <Button label={`Dry-run flow ${f.name}`} busy={act.busy} onClick={() => act.run(async () => setDry({ flow: f.name, rows: (await dash((c) => c.flows.dryRun({ path: { id: f.id }, payload: {} }))).data }))}>Dry-run</Button>
                {can(role, "flowsWrite") && <>
                  <Button label={`${f.enabled ? "Disable" : "Enable"} flow ${f.name}`} busy={act.busy} onClick={() => act.run(async () => { await dash((c) => c.flows.setEnabled({ path: { id: f.id }, payload: { enabled: !f.enabled } })); flows.reload() })}>{f.enabled ? "Disable" : "Enable"}</Button>
                  <Button kind="danger" label={`Delete flow ${f.name}`} busy={act.busy} onClick={() => act.run(async () => { await dash((c) => c.flows.delete({ path: { id: f.id } })); flows.reload() })}>Delete</Button>
                </>}
              </td>
            </tr>
          ))}
        </Table>
        {dry && <><h3>Dry-run of {dry.flow}</h3><DryRunTable rows={dry.rows} /></>}
        {can(role, "flowsWrite") ? <><h3>New flow</h3><FlowForm onCreated={flows.reload} /></> : <Notice>Creating and changing flows needs an Owner or Admin.</Notice>}
      </Section>
      <Section title="Flow runs">
        <ErrorBox error={runs.error} />
        <Table caption="Recent flow runs" head={["Flow", "Deposit", "Account", "Fired", "Steps"]}>
          {runs.data?.data.length === 0 && <Empty cols={5} text="No flow has fired yet." />}
          {runs.data?.data.map((r) => (
            <tr key={r.id}><td>{r.flowName}</td><td>{r.transactionReference}</td><td>{r.accountRef}</td><td>{lagos(r.firedAt)}</td><td>{r.steps.map((s) => `${s.action}: ${s.outcome}`).join("; ")}</td></tr>
          ))}
        </Table>
      </Section>
    </>
  )
}
