import { useState } from "preact/hooks"
import type { Statement } from "../../contract/Ledger.js"
import { Failure } from "../Client.js"
import { dash, dashCsv } from "../calls.js"
import { lagos, lagosBound, lagosDay, monthStart } from "../Dates.js"
import { saveFile } from "../Download.js"
import { useSession } from "../Session.js"
import { Button, Empty, ErrorBox, Field, Form, Loading, Money, Section, Table, useAction, useLoad } from "../ui.js"

/**
 * A virtual account's statement (docs/ledger.md): a from/to range of Lagos days (this month by default), the opening
 * figures, every movement with the running balance and what is held, the closing figures; and the same as the
 * service's CSV, downloaded as `statement-<accountRef>-<from>-<to>.csv`.
 */

interface Range {
  readonly from: string
  readonly to: string
}

/** The range as the API's query: `from` 00:00 WAT of its day, `to` the end of its day; or the problem in words. */
const bounds = (r: Range) => {
  const from = lagosBound(r.from, "start")
  const to = lagosBound(r.to, "end")
  if (from === undefined || to === undefined) throw new Failure("Enter both dates as days, such as 2026-05-01.")
  if (from.getTime() >= to.getTime()) throw new Failure("The start date is after the end date.")
  return { from, to }
}

const statementOf = async (accountRef: string, r: Range): Promise<Statement> => {
  const urlParams = bounds(r)
  const s = await dash((c) => c.ledger.statement({ path: { accountRef }, urlParams }))
  if (typeof s === "string") throw new Failure("The service answered CSV where JSON was asked for.")
  return s
}

const reasonText = (reason: string) => reason.replace(/_/g, " ")

const Figures = ({ id, label, f }: { id: string; label: string; f: Statement["opening"] }) => (
  <>
    <dt>{label}</dt>
    <dd id={id} data-balance={f.balanceKobo} data-held={f.heldKobo}>
      <Money kobo={f.balanceKobo} /> <span class="muted">(free <Money kobo={f.freeKobo} />, held <Money kobo={f.heldKobo} />)</span>
    </dd>
  </>
)

/** `version` changes when the page's figures were refreshed (a deposit came in): the statement is read again. */
export const StatementSection = ({ accountRef, version }: { accountRef: string; version: number }) => {
  const s = useSession()!
  const today = lagosDay()
  const [form, setForm] = useState<Range>({ from: monthStart(today), to: today })
  const [range, setRange] = useState<Range>(form)
  const st = useLoad(() => statementOf(accountRef, range), [s.mode, accountRef, range.from, range.to, version])
  const csv = useAction()
  const download = () =>
    csv.run(async () => {
      const urlParams = bounds(range)
      const text = await dashCsv((c) => c.ledger.statement({ path: { accountRef }, urlParams }))
      saveFile(`statement-${accountRef}-${range.from}-${range.to}.csv`, text, "text/csv;charset=utf-8")
    })
  const d = st.data
  return (
    <Section title="Statement" id="statement">
      <Form label="Statement dates" class="inline-form" onSubmit={() => setRange({ ...form })}>
        <Field label="From (Lagos day)" name="statement-from" type="date" value={form.from} onInput={(v) => setForm({ ...form, from: v })} />
        <Field label="To (Lagos day, included)" name="statement-to" type="date" value={form.to} onInput={(v) => setForm({ ...form, to: v })} />
        <Button type="submit">Show statement</Button>
        <Button kind="primary" busy={csv.busy} disabled={!d} onClick={() => void download()}>Download CSV</Button>
      </Form>
      <ErrorBox error={st.error ?? csv.error} />
      {st.loading && !d ? <Loading what="the statement" /> : d && (
        <>
          <dl class="kv statement-figures">
            <dt>Period</dt><dd id="statement-period">{lagos(range.from)} to {lagos(range.to)}</dd>
            <Figures id="statement-opening" label="Opening balance" f={d.opening} />
            <Figures id="statement-closing" label="Closing balance" f={d.closing} />
          </dl>
          <Table caption={`Statement of ${d.accountRef} (${d.nuban})`} head={["Date", "Reason", "Reference", "Amount", "Balance", "Held"]}>
            {d.movements.length === 0 && <Empty cols={6} text="No movements in these dates." />}
            {d.movements.map((m) => (
              <tr key={m.journalId} class="movement" data-journal={m.journalId}>
                <td>{lagos(m.createdAt)}</td>
                <td>{reasonText(m.reason)}</td>
                <td><code>{m.reference}</code></td>
                <td data-kobo={m.amountKobo}><Money kobo={m.amountKobo} /></td>
                <td data-kobo={m.balanceKobo}><Money kobo={m.balanceKobo} /></td>
                <td data-kobo={m.heldBalanceKobo}><Money kobo={m.heldBalanceKobo} /></td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </Section>
  )
}
