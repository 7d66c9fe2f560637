import { useState } from "preact/hooks"
import { can } from "../Access.js"
import type { Answer, CollectionsClient } from "../../client/index.js"
import { formBody } from "../Client.js"
import { count } from "../Plural.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { formatNaira, nairaInput } from "../Money.js"
import { useSession } from "../Session.js"
import { Badge, Button, Checkbox, Empty, ErrorBox, Field, Form, koboOf, Money, NairaField, Notice, Section, Table, useAction, useLoad } from "../ui.js"

type Settings = Answer<CollectionsClient["settings"]["getSettlement"]>
interface Leg { subMerchantRef: string | null; bps: number | null; flatKobo: number | null; priority: number }

const SettingsForm = ({ s0, onSaved, mayWrite }: { s0: Settings; onSaved: (s: Settings) => void; mayWrite: boolean }) => {
  const [f, setF] = useState({
    accountNumber: s0.settlementAccountNumber ?? "", bankCode: s0.settlementBankCode ?? "", accountName: s0.settlementAccountName ?? "",
    autoSettle: s0.autoSettle, minPayout: nairaInput(s0.minPayoutKobo)
  })
  const act = useAction()
  return (
    <Form label="Settlement settings" onSubmit={() => act.run(async () => {
      const body: Record<string, unknown> = { autoSettle: f.autoSettle, minPayoutKobo: koboOf("Minimum payout", f.minPayout, { allowZero: true }) }
      if (f.accountNumber.trim() || f.bankCode.trim() || f.accountName.trim()) {
        Object.assign(body, { settlementAccountNumber: f.accountNumber.trim(), settlementBankCode: f.bankCode.trim(), settlementAccountName: f.accountName.trim() })
      }
      onSaved(await dash((c) => c.settings.putSettlement({ payload: body })))
    })}>
      <div class="grid3">
        <Field label="Settlement account number" name="settle-account" inputMode="numeric" value={f.accountNumber} onInput={(v) => setF({ ...f, accountNumber: v })} />
        <Field label="Bank code" name="settle-bank" inputMode="numeric" value={f.bankCode} onInput={(v) => setF({ ...f, bankCode: v })} />
        <Field label="Account name" name="settle-name" value={f.accountName} onInput={(v) => setF({ ...f, accountName: v })} />
        <NairaField label="Minimum payout (₦)" name="settle-min" value={f.minPayout} onInput={(v) => setF({ ...f, minPayout: v })} allowZero />
        <Checkbox label="Settle automatically" name="settle-auto" checked={f.autoSettle} onChange={(v) => setF({ ...f, autoSettle: v })} />
      </div>
      <ErrorBox error={act.error} />
      {mayWrite && <Button type="submit" kind="primary" busy={act.busy}>Save settings</Button>}
    </Form>
  )
}

const legText = (l: Leg) => `${l.subMerchantRef ?? "settlement account"}: ${l.bps !== null ? `${l.bps} bps` : ""}${l.flatKobo !== null ? `flat ${formatNaira(l.flatKobo)}` : ""} (priority ${l.priority})`

const SplitsEditor = ({ legs, onSaved, mayWrite }: { legs: ReadonlyArray<Leg>; onSaved: () => void; mayWrite: boolean }) => {
  const [rows, setRows] = useState(legs.map((l) => ({ subMerchantRef: l.subMerchantRef ?? "", bps: l.bps === null ? "" : String(l.bps), flat: l.flatKobo === null ? "" : nairaInput(l.flatKobo), priority: String(l.priority) })))
  const act = useAction()
  const set = (i: number, k: string, v: string) => setRows(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)))
  if (!mayWrite) return <ul>{legs.length === 0 ? <li>No split plan: everything goes to the settlement account.</li> : legs.map((l, i) => <li key={i}>{legText(l)}</li>)}</ul>
  return (
    <Form label="Split plan" onSubmit={() => act.run(async () => {
      const splits = rows.map((r, i) => {
        const leg: Record<string, unknown> = { subMerchantRef: r.subMerchantRef.trim() || null, priority: Number(r.priority || i) }
        if (r.bps.trim()) leg.bps = Number(r.bps.trim())
        const flat = koboOf(`Leg ${i + 1} flat amount`, r.flat, { optional: true })
        if (flat !== undefined) leg.flatKobo = flat
        return leg
      })
      await dash((c) => c.settings.putSplits({ payload: { splits: formBody(splits) } }))
      onSaved()
    })}>
      {rows.length === 0 && <p class="muted">No legs: everything goes to the settlement account.</p>}
      {rows.map((r, i) => (
        <fieldset key={i} class="leg">
          <legend>Leg {i + 1}</legend>
          <div class="grid3">
            <Field label="Sub-merchant reference (empty: settlement account)" name={`leg-sm-${i}`} value={r.subMerchantRef} onInput={(v) => set(i, "subMerchantRef", v)} />
            <Field label="Share (bps, 100 = 1%)" name={`leg-bps-${i}`} inputMode="numeric" value={r.bps} onInput={(v) => set(i, "bps", v)} />
            <NairaField label="Or a flat amount (₦)" name={`leg-flat-${i}`} value={r.flat} onInput={(v) => set(i, "flat", v)} />
            <Field label="Priority" name={`leg-priority-${i}`} inputMode="numeric" value={r.priority} onInput={(v) => set(i, "priority", v)} />
          </div>
          <Button kind="danger" onClick={() => setRows(rows.filter((_, j) => j !== i))}>Remove leg {i + 1}</Button>
        </fieldset>
      ))}
      <Button onClick={() => setRows([...rows, { subMerchantRef: "", bps: "", flat: "", priority: String(rows.length) }])}>Add a leg</Button>{" "}
      <Button type="submit" kind="primary" busy={act.busy}>Save split plan</Button>
      <ErrorBox error={act.error} />
    </Form>
  )
}

export const SettlementPage = () => {
  const s = useSession()!
  const role = s.me?.user.role
  const settings = useLoad(() => dash((c) => c.settings.getSettlement()), [s.mode])
  const splits = useLoad(() => dash((c) => c.settings.getSplits()), [s.mode])
  const list = useLoad(() => dash((c) => c.settlements.list({ urlParams: { take: 25 } })), [s.mode])
  const run = useAction()
  const [ran, setRan] = useState<string | null>(null)
  return (
    <>
      <Section title="Settlement settings">
        <ErrorBox error={settings.error} />
        {settings.data && <>
          <p>Auto-settle: <Badge text={settings.data.active ? "on" : settings.data.autoSettle ? "on, waiting for a verified account" : "off"} /> {settings.data.verifiedAt ? `· account verified ${lagos(settings.data.verifiedAt)}` : "· no verified account"} · last run {lagos(settings.data.lastRunAt)}</p>
          <SettingsForm key={JSON.stringify(settings.data)} s0={settings.data} mayWrite={can(role, "settlementWrite")} onSaved={settings.setData} />
        </>}
        {!can(role, "settlementWrite") && <Notice>Changing settlement needs an Owner or Admin.</Notice>}
      </Section>
      <Section title="Split plan">
        <ErrorBox error={splits.error} />
        {splits.data && <SplitsEditor key={JSON.stringify(splits.data)} legs={splits.data.splits} mayWrite={can(role, "settlementWrite")} onSaved={splits.reload} />}
      </Section>
      <Section title="Settlements">
        {can(role, "settlementRun") && <Button kind="primary" busy={run.busy} onClick={() => run.run(async () => {
          const r = await dash((c) => c.settlements.run())
          setRan(`Settled ${count(r.settledCount, "account")}, skipped ${count(r.skippedCount, "account")}.`)
          list.reload()
        })}>Settle now</Button>}
        {ran && <Notice kind="ok">{ran}</Notice>}
        <ErrorBox error={run.error ?? list.error} />
        <Table caption="Recent settlements" head={["Account", "Net", "Status", "Legs", "Created"]}>
          {list.data?.data.length === 0 && <Empty cols={5} text="No settlements yet." />}
          {list.data?.data.map((x) => (
            <tr key={x.id}><td>{x.accountRef}</td><td><Money kobo={x.netKobo} /></td><td><Badge text={x.status} />{x.reason ? ` ${x.reason}` : ""}</td>
              <td>{x.legs.map((l) => <div key={l.legNo}>{l.kind}: <Money kobo={l.amountKobo} /> {l.status ?? ""}</div>)}</td><td>{lagos(x.createdAt)}</td></tr>
          ))}
        </Table>
      </Section>
    </>
  )
}
