import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { formBody } from "../Client.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Button, Empty, ErrorBox, Field, Form, Money, Notice, Section, Table, useAction, useLoad } from "../ui.js"

interface SubMerchant { id: string; name: string; reference: string; payoutAccount: { bankName: string; bankCode: string; accountNumber: string; accountName: string; verifiedAt: string } | null; platformFeeBps: number; createdAt: string }

const PayoutForm = ({ sm, onSaved }: { sm: SubMerchant; onSaved: () => void }) => {
  const [f, setF] = useState({ accountNumber: "", bankCode: "", platformFeeBps: String(sm.platformFeeBps) })
  const act = useAction()
  return (
    <Form label={`Payout account of ${sm.name}`} class="inline-form" onSubmit={() => act.run(async () => {
      const body: Record<string, unknown> = { accountNumber: f.accountNumber.trim(), bankCode: f.bankCode.trim() }
      if (f.platformFeeBps.trim() !== "") {
        if (!/^\d+$/.test(f.platformFeeBps.trim())) throw new Error("Platform fee must be whole basis points (100 = 1%)")
        body.platformFeeBps = Number(f.platformFeeBps.trim())
      }
      await dash((c) => c.subMerchants.setPayout({ path: { id: sm.id }, payload: formBody(body) }))
      onSaved()
    })}>
      <Field label="Account number" name={`sm-acct-${sm.id}`} inputMode="numeric" value={f.accountNumber} onInput={(v) => setF({ ...f, accountNumber: v })} />
      <Field label="Bank code" name={`sm-bank-${sm.id}`} inputMode="numeric" value={f.bankCode} onInput={(v) => setF({ ...f, bankCode: v })} />
      <Field label="Platform fee (bps)" name={`sm-fee-${sm.id}`} inputMode="numeric" value={f.platformFeeBps} onInput={(v) => setF({ ...f, platformFeeBps: v })} />
      <Button type="submit" busy={act.busy}>Verify and save</Button>
      <ErrorBox error={act.error} />
    </Form>
  )
}

const BalanceOf = ({ id }: { id: string }) => {
  const b = useLoad(() => dash((c) => c.subMerchants.balance({ path: { id: id } })), [id])
  if (b.error) return <ErrorBox error={b.error} />
  if (!b.data) return <span class="muted">…</span>
  return <span>collected <Money kobo={b.data.collectedKobo} />, settled <Money kobo={b.data.settledKobo} />, pending <Money kobo={b.data.pendingKobo} />, unswept <Money kobo={b.data.unsweptKobo} /></span>
}

export const SubMerchantsPage = () => {
  const s = useSession()!
  const mayWrite = can(s.me?.user.role, "subMerchantsWrite")
  const list = useLoad(() => dash((c) => c.subMerchants.list({ urlParams: { take: 100 } })), [s.mode])
  const [f, setF] = useState({ name: "", reference: "" })
  const act = useAction()
  return (
    <>
      {mayWrite ? (
        <Section title="New sub-merchant">
          <Form label="New sub-merchant" onSubmit={() => act.run(async () => {
            await dash((c) => c.subMerchants.create({ payload: { name: f.name.trim(), reference: f.reference.trim() } }))
            setF({ name: "", reference: "" })
            list.reload()
          })}>
            <div class="grid2">
              <Field label="Name" name="sm-name" value={f.name} onInput={(v) => setF({ ...f, name: v })} required />
              <Field label="Reference" name="sm-reference" value={f.reference} onInput={(v) => setF({ ...f, reference: v })} required />
            </div>
            <ErrorBox error={act.error} />
            <Button type="submit" kind="primary" busy={act.busy}>Create sub-merchant</Button>
          </Form>
        </Section>
      ) : <Notice>Creating sub-merchants and setting their payout accounts needs an Owner or Admin.</Notice>}
      <Section title="Sub-merchants and their balances">
        <ErrorBox error={list.error} />
        <Table caption="Sub-merchants" head={["Name", "Reference", "Payout account", "Fee", "Balance", "Created"]}>
          {list.data?.data.length === 0 && <Empty cols={6} text="No sub-merchants." />}
          {list.data?.data.map((m) => (
            <tr key={m.id}>
              <td>{m.name}</td><td>{m.reference}</td>
              <td>{m.payoutAccount ? `${m.payoutAccount.accountName} · ${m.payoutAccount.bankName} ${m.payoutAccount.accountNumber}` : mayWrite ? <PayoutForm sm={m} onSaved={list.reload} /> : "Not set"}</td>
              <td>{m.platformFeeBps} bps</td>
              <td><BalanceOf id={m.id} /></td>
              <td>{lagos(m.createdAt)}</td>
            </tr>
          ))}
        </Table>
      </Section>
    </>
  )
}
