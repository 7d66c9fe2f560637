import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { formBody } from "../Client.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, Empty, ErrorBox, Field, Form, koboOf, Loading, Money, NairaField, Notice, Pager, Section, Select, Table, useAction, useLoad, usePager } from "../ui.js"

interface Bank { name: string; code: string }
interface Transfer { merchantTxRef: string; amountKobo: number; accountNumber: string; bankCode: string; bankName: string; accountName: string; narration: string | null; status: string; failureReason: string | null; source: string; createdAt: string; completedAt: string | null }

const newRef = () => `payout-${Date.now().toString(36)}`

const SendPayout = ({ banks, onSent }: { banks: ReadonlyArray<Bank>; onSent: () => void }) => {
  const [f, setF] = useState({ accountNumber: "", bankCode: banks[0]?.code ?? "", amount: "", narration: "", merchantTxRef: newRef() })
  const [name, setName] = useState<string | null>(null)
  const lookup = useAction()
  const send = useAction()
  const [sent, setSent] = useState<Transfer | null>(null)
  const set = (k: keyof typeof f) => (v: string) => { setF({ ...f, [k]: v }); if (k === "accountNumber" || k === "bankCode") setName(null) }
  return (
    <Form label="Send a payout" onSubmit={() => send.run(async () => {
      const amountKobo = koboOf("Amount", f.amount)!
      const body: Record<string, unknown> = { merchantTxRef: f.merchantTxRef.trim(), amountKobo, accountNumber: f.accountNumber.trim(), bankCode: f.bankCode }
      if (f.narration.trim()) body.narration = f.narration.trim()
      if (name) body.accountName = name
      setSent(await dash((c) => c.transfers.create({ payload: formBody(body) })))
      setF({ ...f, amount: "", narration: "", merchantTxRef: newRef() })
      onSent()
    })}>
      <div class="grid2">
        <Select label="Bank" name="bankCode" value={f.bankCode} onChange={set("bankCode")} options={banks.map((b) => [b.code, `${b.name} (${b.code})`] as const)} />
        <Field label="Account number (NUBAN)" name="accountNumber" inputMode="numeric" value={f.accountNumber} onInput={set("accountNumber")} required />
      </div>
      <Button busy={lookup.busy} onClick={() => lookup.run(async () => {
        const r = await dash((c) => c.transfers.lookup({ payload: { accountNumber: f.accountNumber.trim(), bankCode: f.bankCode } }))
        setName(r.accountName)
      })}>Look up the account name</Button>
      {name && <p role="status">Account name: <strong id="looked-up-name">{name}</strong></p>}
      <ErrorBox error={lookup.error} />
      <div class="grid2">
        <NairaField label="Amount (₦)" name="payout-amount" value={f.amount} onInput={set("amount")} required />
        <Field label="Narration" name="narration" value={f.narration} onInput={set("narration")} />
        <Field label="Your reference (idempotency)" name="merchantTxRef" value={f.merchantTxRef} onInput={set("merchantTxRef")} required />
      </div>
      <ErrorBox error={send.error} />
      <Button type="submit" kind="primary" busy={send.busy}>Send payout</Button>
      {sent && <Notice kind="ok">Payout {sent.merchantTxRef}: <Money kobo={sent.amountKobo} /> to {sent.accountName}, {sent.status}.</Notice>}
    </Form>
  )
}

export const PayoutsPage = () => {
  const s = useSession()!
  const pager = usePager()
  const balance = useLoad(() => dash((c) => c.transfers.balance()), [s.mode])
  const banks = useLoad(() => dash((c) => c.transfers.banks()), [s.mode])
  const list = useLoad(() => dash((c) => c.transfers.list({ urlParams: { take: 25, startingAfter: pager.startingAfter } })), [s.mode, pager.startingAfter])
  const b = balance.data
  return (
    <>
      <Section title="Balance">
        <ErrorBox error={balance.error} />
        {b ? (
          <div class="stats">
            <div class="stat"><span>Available</span><strong id="available"><Money kobo={b.availableKobo} /></strong></div>
            <div class="stat"><span>Held</span><strong><Money kobo={b.heldKobo} /></strong></div>
            <div class="stat"><span>Pending review</span><strong><Money kobo={b.pendingReviewKobo} /></strong></div>
            <div class="stat"><span>In transit</span><strong><Money kobo={b.inTransitKobo} /></strong></div>
            <div class="stat"><span>Payout cap left today ({b.day})</span><strong><Money kobo={b.payoutCapRemainingKobo} /></strong><small>of <Money kobo={b.dailyPayoutCapKobo} /></small></div>
          </div>
        ) : !balance.error && <Loading what="the balance" />}
      </Section>
      <Section title="Send a payout">
        <ErrorBox error={banks.error} />
        {!can(s.me?.user.role, "payout") ? <Notice>Payouts need an Owner or Admin.</Notice>
          : banks.data ? <SendPayout banks={banks.data.data} onSent={() => { pager.reset(); list.reload(); balance.reload() }} /> : <Loading what="banks" />}
      </Section>
      <Section title="Transfers">
        <ErrorBox error={list.error} />
        <Table caption={`Outbound transfers (${s.mode})`} head={["Reference", "Amount", "To", "Status", "Source", "Created"]}>
          {list.data?.data.length === 0 && <Empty cols={6} text="No transfers yet." />}
          {list.data?.data.map((t) => (
            <tr key={t.merchantTxRef}>
              <td><code>{t.merchantTxRef}</code></td>
              <td><Money kobo={t.amountKobo} /></td>
              <td>{t.accountName} · {t.bankName} {t.accountNumber}</td>
              <td><Badge text={t.status} />{t.failureReason ? ` ${t.failureReason}` : ""}</td>
              <td>{t.source}</td>
              <td>{lagos(t.createdAt)}</td>
            </tr>
          ))}
        </Table>
        <Pager pager={pager} hasMore={list.data?.hasMore ?? false} lastKey={list.data?.data[list.data.data.length - 1]?.merchantTxRef} />
      </Section>
    </>
  )
}
