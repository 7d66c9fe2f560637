import { useState } from "preact/hooks"
import { liveUnlocked } from "../Access.js"
import { call, formBody } from "../Client.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, Empty, ErrorBox, Field, Form, koboOf, Loading, Money, NairaField, Notice, Pager, Section, Table, useAction, useLoad, usePager } from "../ui.js"
import { requireSandboxToken, SandboxKeyPanel } from "./Sandbox.js"
import { StatementSection } from "./Statement.js"

export interface VirtualAccount {
  accountRef: string; nuban: string; bankName: string; bankCode: string; accountName: string; name: string
  email: string | null; phone: string | null; expectedAmountKobo: number | null; expiryDateUtc: string | null
  subMerchantRef: string | null; amountPaidKobo: number; deficit: number; overpayment: number
  paymentState: "Open" | "AwaitingPayment" | "PartiallyPaid" | "FullyPaid" | "Overpaid"; mode: string; createdAt: string
}

const PAGE_SIZE = 20

const CreateAccount = ({ onCreated }: { onCreated: (a: VirtualAccount) => void }) => {
  const s = useSession()!
  const [f, setF] = useState({ accountRef: "", name: "", email: "", phone: "", expected: "", subMerchantRef: "" })
  const field = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v })
  const { busy, error, run } = useAction()
  if (s.mode === "live" && !liveUnlocked(s.me?.tenant.onboardingStatus)) {
    return <Notice kind="warn">Live accounts can be created once your onboarding is approved. Switch to test mode to try things out.</Notice>
  }
  return (
    <>
      {s.mode === "test" && <SandboxKeyPanel />}
      <Form label="Create a virtual account" onSubmit={() => run(async () => {
        const expectedAmountKobo = koboOf("Expected amount", f.expected, { optional: true })
        const body: Record<string, unknown> = { accountRef: f.accountRef.trim(), name: f.name.trim() }
        if (f.email.trim()) body.email = f.email.trim()
        if (f.phone.trim()) body.phone = f.phone.trim()
        if (f.subMerchantRef.trim()) body.subMerchantRef = f.subMerchantRef.trim()
        if (expectedAmountKobo !== undefined) body.expectedAmountKobo = expectedAmountKobo
        // Test accounts through the tab's test key; live ones with the dashboard token (the API provisions those live).
        const a = s.mode === "test"
          ? await call((c) => c.virtualAccounts.create({ payload: formBody(body) }), { token: await requireSandboxToken() })
          : await dash((c) => c.virtualAccounts.create({ payload: formBody(body) }))
        setF({ accountRef: "", name: "", email: "", phone: "", expected: "", subMerchantRef: "" })
        onCreated(a)
      })}>
        <div class="grid2">
          <Field label="Account reference" name="accountRef" value={f.accountRef} onInput={field("accountRef")} required hint="Your own id for this customer or invoice, e.g. order-1001" />
          <Field label="Customer name" name="name" value={f.name} onInput={field("name")} required />
          <NairaField label="Expected amount (₦)" name="expected" value={f.expected} onInput={field("expected")} hint="Leave empty for an open account (any amount)" />
          <Field label="E-mail" name="email" type="email" value={f.email} onInput={field("email")} />
          <Field label="Phone" name="phone" type="tel" value={f.phone} onInput={field("phone")} />
          <Field label="Sub-merchant reference" name="subMerchantRef" value={f.subMerchantRef} onInput={field("subMerchantRef")} />
        </div>
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>Create {s.mode} account</Button>
      </Form>
    </>
  )
}

export const AccountsPage = () => {
  const s = useSession()!
  const pager = usePager()
  const [search, setSearch] = useState("")
  const list = useLoad(() => dash((c) => c.virtualAccounts.list({ urlParams: { take: PAGE_SIZE, startingAfter: pager.startingAfter } })), [s.mode, pager.startingAfter])
  const [created, setCreated] = useState<VirtualAccount | null>(null)
  const q = search.trim().toLowerCase()
  const rows = (list.data?.data ?? []).filter((a) => q === "" || [a.accountRef, a.name, a.nuban, a.email ?? ""].some((v) => v.toLowerCase().includes(q)))
  return (
    <>
      <Section title="New virtual account">
        <CreateAccount onCreated={(a) => { setCreated(a); pager.reset(); list.reload() }} />
        {created && <Notice kind="ok">Created <a href={`#/accounts/${enc(created.accountRef)}`}>{created.accountRef}</a>: pay into {created.bankName} {created.nuban}.</Notice>}
      </Section>
      <Section title="Accounts">
        <Form label="Search accounts" class="inline-form" onSubmit={() => { if (q && rows.length === 0) location.hash = `#/accounts/${enc(search.trim())}` }}>
          <Field label="Search this page (reference, name, NUBAN, e-mail); Enter opens an exact reference" name="search" type="search" value={search} onInput={setSearch} />
        </Form>
        <ErrorBox error={list.error} />
        {list.loading && !list.data ? <Loading what="accounts" /> : (
          <Table caption={`Virtual accounts (${s.mode})`} head={["Reference", "Customer", "NUBAN", "Expected", "Paid", "State", "Created"]}>
            {rows.length === 0 && <Empty cols={7} text={q ? "No account on this page matches." : "No accounts yet."} />}
            {rows.map((a) => (
              <tr key={a.accountRef}>
                <td><a href={`#/accounts/${enc(a.accountRef)}`}>{a.accountRef}</a></td>
                <td>{a.name}</td>
                <td><code>{a.nuban}</code></td>
                <td>{a.expectedAmountKobo === null ? "Open" : <Money kobo={a.expectedAmountKobo} />}</td>
                <td><Money kobo={a.amountPaidKobo} /></td>
                <td><Badge text={a.paymentState} /></td>
                <td>{lagos(a.createdAt)}</td>
              </tr>
            ))}
          </Table>
        )}
        <Pager pager={pager} hasMore={list.data?.hasMore ?? false} lastKey={list.data?.data[list.data.data.length - 1]?.accountRef} />
      </Section>
    </>
  )
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const SimulateDeposit = ({ account, onDone }: { account: VirtualAccount; onDone: () => Promise<number> }) => {
  const [amount, setAmount] = useState("")
  const [senderName, setSenderName] = useState("")
  const [narration, setNarration] = useState("")
  const [result, setResult] = useState<string | null>(null)
  const { busy, error, run } = useAction()
  return (
    <Section title="Simulate a deposit (sandbox)">
      <SandboxKeyPanel />
      <Form label="Simulate a deposit" onSubmit={() => run(async () => {
        const amountKobo = koboOf("Amount", amount)!
        const body: Record<string, unknown> = { accountRef: account.accountRef, amountKobo }
        if (senderName.trim()) body.senderName = senderName.trim()
        if (narration.trim()) body.narration = narration.trim()
        const before = await onDone()
        const r = await call((c) => c.sandbox.simulateDeposit({ payload: formBody(body) }), { token: await requireSandboxToken() })
        setResult(`Bank sent ${r.reference}: ${r.result}.`)
        // Reconciliation runs after the receiver has it: look again until the transaction shows, every 300 ms at first
        // and then less often, for at most about 30 s (a busy machine can take seconds).
        for (let i = 0, waited = 0; waited < 30_000 && (await onDone()) === before; i++) {
          const pause = Math.min(2_000, 300 * 2 ** Math.floor(i / 5))
          await sleep(pause)
          waited += pause
        }
        setAmount("")
      })}>
        <div class="grid2">
          <NairaField label="Amount (₦)" name="simulate-amount" value={amount} onInput={setAmount} required />
          <Field label="Sender name" name="senderName" value={senderName} onInput={setSenderName} hint="The payer's name as the bank reports it" />
          <Field label="Narration" name="narration" value={narration} onInput={setNarration} />
        </div>
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>Send test deposit</Button>
      </Form>
      {result && <Notice kind="ok">{result}</Notice>}
    </Section>
  )
}

export const AccountDetailPage = ({ accountRef }: { accountRef: string }) => {
  const s = useSession()!
  const acc = useLoad(() => dash((c) => c.virtualAccounts.get({ path: { accountRef: accountRef } })), [s.mode, accountRef])
  const txs = useLoad(() => dash((c) => c.transactions.list({ urlParams: { accountRef, take: 50 } })), [s.mode, accountRef])
  const del = useAction()
  // Bumped by every refresh, so the statement is read again with the figures.
  const [version, setVersion] = useState(0)
  const refresh = async () => {
    const [a, t] = await Promise.all([
      dash((c) => c.virtualAccounts.get({ path: { accountRef: accountRef } })),
      dash((c) => c.transactions.list({ urlParams: { accountRef, take: 50 } }))
    ])
    acc.setData(a)
    txs.setData(t)
    setVersion((v) => v + 1)
    return t.data.length
  }
  if (acc.error) return <><ErrorBox error={acc.error} /><p><a href="#/accounts">Back to accounts</a></p></>
  if (!acc.data) return <Loading what="the account" />
  const a = acc.data
  return (
    <>
      <p><a href="#/accounts">← All accounts</a></p>
      <Section title="Account">
        <dl class="kv">
          <dt>Customer</dt><dd>{a.name}</dd>
          <dt>Pay into</dt><dd>{a.bankName} · <code id="nuban">{a.nuban}</code> ({a.accountName})</dd>
          <dt>Expected</dt><dd>{a.expectedAmountKobo === null ? "Open (any amount)" : <Money kobo={a.expectedAmountKobo} />}</dd>
          <dt>Paid</dt><dd id="amount-paid"><Money kobo={a.amountPaidKobo} /></dd>
          <dt>Still owed</dt><dd><Money kobo={a.deficit} /></dd>
          <dt>Overpaid by</dt><dd><Money kobo={a.overpayment} /></dd>
          <dt>Payment state</dt><dd id="payment-state" data-state={a.paymentState}><Badge text={a.paymentState} /></dd>
          <dt>E-mail / phone</dt><dd>{a.email ?? "—"} / {a.phone ?? "—"}</dd>
          <dt>Sub-merchant</dt><dd>{a.subMerchantRef ?? "—"}</dd>
          <dt>Created</dt><dd>{lagos(a.createdAt)}</dd>
        </dl>
        <Button onClick={() => void refresh()}>Refresh</Button>{" "}
        <Button kind="danger" busy={del.busy} onClick={() => {
          if (!confirm(`Delete ${a.accountRef}? Only an account with no payment activity can be deleted.`)) return
          del.run(async () => {
            await dash((c) => c.virtualAccounts.delete({ path: { accountRef: a.accountRef } }))
            location.hash = "#/accounts"
          })
        }}>Delete account</Button>
        <ErrorBox error={del.error} />
      </Section>
      {s.mode === "test" && <SimulateDeposit account={a} onDone={refresh} />}
      <Section title="Transactions">
        <ErrorBox error={txs.error} />
        <Table caption={`Transactions of ${a.accountRef}`} head={["Reference", "Amount", "Status", "Reconciliation", "Risk", "Sender", "Paid at"]}>
          {txs.data?.data.length === 0 && <Empty cols={7} text="No deposits yet." />}
          {txs.data?.data.map((t) => (
            <tr key={t.reference}>
              <td><a href={`#/transactions/${enc(t.reference)}`}>{t.reference}</a></td>
              <td><Money kobo={t.amountKobo} /></td>
              <td><Badge text={t.status} /></td>
              <td>{t.reconciliationStatus}</td>
              <td>{t.riskScore}</td>
              <td>{t.senderName ?? "—"}</td>
              <td>{lagos(t.paidAt)}</td>
            </tr>
          ))}
        </Table>
      </Section>
      <StatementSection accountRef={a.accountRef} version={version} />
    </>
  )
}
