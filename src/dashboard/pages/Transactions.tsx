import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { formBody } from "../Client.js"
import type { Answer, CollectionsClient } from "../../client/index.js"
import { params } from "../Client.js"
import { count } from "../Plural.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, Checkbox, Empty, ErrorBox, Field, Form, koboOf, Loading, Money, NairaField, Notice, Pager, Section, Select, Table, useAction, useLoad, usePager } from "../ui.js"

export interface RiskReason { code: string; points: number; detail: string }
export type Transaction = Answer<CollectionsClient["transactions"]["get"]>
const dateOf = (iso: string | undefined) => (iso === undefined ? undefined : new Date(iso))

const STATUSES = ["", "Completed", "PendingReview", "Rejected", "Reversed"] as const
const RECON = ["", "Exact", "Underpaid", "Overpaid", "Duplicate", "Reversal", "Credited", "Unmatched"] as const
/** A yyyy-mm-dd from a date input as the start (or the end) of that day in Lagos (UTC+1, no daylight saving). */
export const lagosDay = (d: string, end: boolean) => (d ? new Date(`${d}T${end ? "23:59:59.999" : "00:00:00.000"}+01:00`).toISOString() : undefined)

export const RiskReasons = ({ reasons }: { reasons: ReadonlyArray<RiskReason> }) =>
  reasons.length === 0 ? <span class="muted">None</span> : (
    <ul class="reasons">
      {reasons.map((r) => <li key={r.code}><strong>{r.code}</strong> (+{r.points}): {r.detail}</li>)}
    </ul>
  )

export const TransactionsPage = () => {
  const s = useSession()!
  const pager = usePager()
  const [f, setF] = useState({ status: "", reconciliation: "", accountRef: "", from: "", to: "", flagged: false })
  const [applied, setApplied] = useState(f)
  const query = {
    status: applied.status, reconciliation: applied.reconciliation, accountRef: applied.accountRef.trim(),
    from: dateOf(lagosDay(applied.from, false)), to: dateOf(lagosDay(applied.to, true)), flagged: applied.flagged ? "true" : undefined
  }
  const list = useLoad(() => dash((c) => c.transactions.list({ urlParams: params({ ...query, take: 25, startingAfter: pager.startingAfter }) })), [s.mode, JSON.stringify(applied), pager.startingAfter])
  const summary = useLoad(() => dash((c) => c.transactions.summary({ urlParams: params({ from: query.from, to: query.to }) })), [s.mode, applied.from, applied.to])
  return (
    <>
      <Section title="Totals">
        <ErrorBox error={summary.error} />
        {summary.data && (
          <div class="stats">
            <div class="stat"><span>All</span><strong><Money kobo={summary.data.total.amountKobo} /></strong><small>{count(summary.data.total.count, "deposit")}</small></div>
            <div class="stat"><span>Successful</span><strong><Money kobo={summary.data.successful.amountKobo} /></strong><small>{count(summary.data.successful.count, "deposit")}</small></div>
            <div class="stat"><span>Pending review</span><strong><Money kobo={summary.data.pendingReview.amountKobo} /></strong><small>{count(summary.data.pendingReview.count, "deposit")}</small></div>
            <div class="stat"><span>Failed</span><strong><Money kobo={summary.data.failed.amountKobo} /></strong><small>{count(summary.data.failed.count, "deposit")}</small></div>
          </div>
        )}
      </Section>
      <Section title="Filters">
        <Form label="Transaction filters" onSubmit={() => { pager.reset(); setApplied(f) }}>
          <div class="grid3">
            <Select label="Status" name="status" value={f.status} onChange={(v) => setF({ ...f, status: v })} options={STATUSES.map((v) => [v, v || "Any"] as const)} />
            <Select label="Reconciliation" name="reconciliation" value={f.reconciliation} onChange={(v) => setF({ ...f, reconciliation: v })} options={RECON.map((v) => [v, v || "Any"] as const)} />
            <Field label="Account reference" name="accountRef" value={f.accountRef} onInput={(v) => setF({ ...f, accountRef: v })} />
            <Field label="From (Lagos date)" name="from" type="date" value={f.from} onInput={(v) => setF({ ...f, from: v })} />
            <Field label="To (Lagos date)" name="to" type="date" value={f.to} onInput={(v) => setF({ ...f, to: v })} />
            <Checkbox label="Flagged by a rule or flow only" name="flagged" checked={f.flagged} onChange={(v) => setF({ ...f, flagged: v })} />
          </div>
          <Button type="submit" kind="primary">Apply filters</Button>
        </Form>
      </Section>
      <Section title="Transactions">
        <ErrorBox error={list.error} />
        {list.loading && !list.data ? <Loading what="transactions" /> : (
          <Table caption={`Transactions (${s.mode})`} head={["Reference", "Account", "Amount", "Status", "Reconciliation", "Risk", "Paid at"]}>
            {list.data?.data.length === 0 && <Empty cols={7} text="No transactions match." />}
            {list.data?.data.map((t) => (
              <tr key={t.reference}>
                <td><a href={`#/transactions/${enc(t.reference)}`}>{t.reference}</a>{t.flagged && <> <Badge text="Flagged" /></>}</td>
                <td>{t.accountRef ? <a href={`#/accounts/${enc(t.accountRef)}`}>{t.accountRef}</a> : "Unmatched"}</td>
                <td><Money kobo={t.amountKobo} /></td>
                <td><Badge text={t.status} /></td>
                <td>{t.reconciliationStatus}</td>
                <td>{t.riskScore}</td>
                <td>{lagos(t.paidAt)}</td>
              </tr>
            ))}
          </Table>
        )}
        <Pager pager={pager} hasMore={list.data?.hasMore ?? false} lastKey={list.data?.data[list.data.data.length - 1]?.reference} />
      </Section>
    </>
  )
}

interface Hold { reference: string; accountRef: string; heldKobo: number; status: string; reason: string | null; createdAt: string; releasedAt: string | null }
interface Refund { reference: string; status: string; amountKobo: number; destination: { accountNumber: string; bankCode: string; accountName: string }; merchantTxRef: string; transferStatus: string }

const HoldsAndRefunds = ({ t, onChange }: { t: Transaction; onChange: () => void }) => {
  const [amount, setAmount] = useState("")
  const [reason, setReason] = useState("")
  const [dest, setDest] = useState({ accountNumber: "", bankCode: "", accountName: "" })
  const [hold, setHold] = useState<Hold | null>(null)
  const [refund, setRefund] = useState<Refund | null>(null)
  const act = useAction()
  return (
    <Section title="Hold and refund">
      <Form label="Hold this deposit's money" onSubmit={() => act.run(async () => {
        const amountKobo = koboOf("Amount to hold", amount, { optional: true })
        const body: Record<string, unknown> = {}
        if (amountKobo !== undefined) body.amountKobo = amountKobo
        if (reason.trim()) body.reason = reason.trim()
        setHold(await dash((c) => c.settlements.hold({ path: { ref: t.reference }, payload: formBody(body) })))
        onChange()
      })}>
        <div class="grid2">
          <NairaField label="Amount to hold (₦)" name="hold-amount" value={amount} onInput={setAmount} hint="Empty: all of the deposit's free money" />
          <Field label="Reason" name="hold-reason" value={reason} onInput={setReason} />
        </div>
        <Button type="submit" kind="primary" busy={act.busy}>Hold in escrow</Button>{" "}
        <Button busy={act.busy} onClick={() => act.run(async () => {
          setHold(await dash((c) => c.settlements.release({ path: { ref: t.reference } })))
          onChange()
        })}>Release hold</Button>
      </Form>
      {hold && <Notice kind="ok">Hold {hold.status}: <Money kobo={hold.heldKobo} />{hold.reason ? ` (${hold.reason})` : ""}.</Notice>}
      <Form label="Refund the overpayment" onSubmit={() => act.run(async () => {
        const body = Object.fromEntries(Object.entries(dest).filter(([, v]) => v.trim() !== "").map(([k, v]) => [k, v.trim()]))
        setRefund(await dash((c) => c.transactions.refund({ path: { reference: t.reference }, payload: formBody(body) })))
        onChange()
      })}>
        <p class="muted">Sends the deposit's unrefunded surplus back; to the payer's account unless you give another.</p>
        <div class="grid3">
          <Field label="Account number (optional)" name="refund-account" inputMode="numeric" value={dest.accountNumber} onInput={(v) => setDest({ ...dest, accountNumber: v })} />
          <Field label="Bank code (optional)" name="refund-bank" inputMode="numeric" value={dest.bankCode} onInput={(v) => setDest({ ...dest, bankCode: v })} />
          <Field label="Account name (optional)" name="refund-name" value={dest.accountName} onInput={(v) => setDest({ ...dest, accountName: v })} />
        </div>
        <Button type="submit" kind="danger" busy={act.busy}>Refund surplus</Button>
      </Form>
      {refund && <Notice kind="ok">Refund {refund.status}: <Money kobo={refund.amountKobo} /> to {refund.destination.accountName} ({refund.destination.accountNumber}), transfer {refund.merchantTxRef} {refund.transferStatus}.</Notice>}
      <ErrorBox error={act.error} />
    </Section>
  )
}

export const ReviewDecision = ({ t, onDecided }: { t: Transaction; onDecided: (t: Transaction) => void }) => {
  const [note, setNote] = useState("")
  const { busy, error, run } = useAction()
  const decide = (decision: "approve" | "reject") => run(async () => {
    const body: Record<string, unknown> = { decision }
    if (note.trim()) body.note = note.trim()
    onDecided(await dash((c) => c.transactions.review({ path: { reference: t.reference }, payload: formBody(body) })))
  })
  return (
    <div class="decision">
      <Field label={`Note on ${t.reference} (optional)`} name={`note-${t.reference}`} value={note} onInput={setNote} />
      <Button kind="primary" busy={busy} label={`Approve ${t.reference}`} onClick={() => decide("approve")}>Approve</Button>{" "}
      <Button kind="danger" busy={busy} label={`Reject ${t.reference}`} onClick={() => decide("reject")}>Reject</Button>
      <ErrorBox error={error} />
    </div>
  )
}

export const TransactionDetailPage = ({ reference }: { reference: string }) => {
  const s = useSession()!
  const tx = useLoad(() => dash((c) => c.transactions.get({ path: { reference: reference } })), [s.mode, reference])
  if (tx.error) return <><ErrorBox error={tx.error} /><p><a href="#/transactions">Back to transactions</a></p></>
  if (!tx.data) return <Loading what="the transaction" />
  const t = tx.data
  const role = s.me?.user.role
  return (
    <>
      <p><a href="#/transactions">← All transactions</a></p>
      <Section title="Deposit">
        <dl class="kv">
          <dt>Amount</dt><dd><Money kobo={t.amountKobo} /></dd>
          <dt>Status</dt><dd id="tx-status"><Badge text={t.status} /></dd>
          <dt>Reconciliation</dt><dd>{t.reconciliationStatus}</dd>
          <dt>Account</dt><dd>{t.accountRef ? <a href={`#/accounts/${enc(t.accountRef)}`}>{t.accountRef}</a> : "Unmatched"} (<code>{t.nuban}</code>)</dd>
          <dt>Sender</dt><dd>{t.senderName ?? "—"} {t.senderAccountNumber ? `· ${t.senderAccountNumber}` : ""} {t.senderBankCode ? `· bank ${t.senderBankCode}` : ""}</dd>
          <dt>Narration</dt><dd>{t.narration ?? "—"}</dd>
          <dt>Risk score</dt><dd>{t.riskScore}</dd>
          <dt>Risk reasons</dt><dd><RiskReasons reasons={t.riskReasons} /></dd>
          {t.flagged && <><dt>Flagged</dt><dd>{t.flagReasons.join("; ")}</dd></>}
          {t.review && <><dt>Review</dt><dd>{t.review.decision} by {t.review.decidedBy} at {lagos(t.review.decidedAt)}{t.review.note ? `: ${t.review.note}` : ""}</dd></>}
          <dt>Paid at</dt><dd>{lagos(t.paidAt)}</dd>
          <dt>Reconciled at</dt><dd>{lagos(t.reconciledAt)}</dd>
        </dl>
      </Section>
      {t.status === "PendingReview" && can(role, "review") && (
        <Section title="Review"><ReviewDecision t={t} onDecided={(n) => tx.setData(n)} /></Section>
      )}
      {t.status === "Completed" && can(role, "hold") && <HoldsAndRefunds t={t} onChange={tx.reload} />}
      {!can(role, "hold") && <Notice>Holds, refunds and review decisions need an Owner or Admin.</Notice>}
    </>
  )
}
