import { useState } from "preact/hooks"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { formatBps, formatNaira } from "../Money.js"
import { useSession } from "../Session.js"
import type { CopilotAnswer } from "../../contract/Copilot.js"
import { Button, ErrorBox, Form, Section, Table, useAction, useId } from "../ui.js"

const figure = (name: string, v: number | string | null) =>
  v === null ? "—" : typeof v === "number" && /kobo$/i.test(name) ? formatNaira(v) : typeof v === "number" && /bps$/i.test(name) ? formatBps(v) : typeof v === "string" && /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(v) ? lagos(v) : String(v)

const refLink = (kind: string, id: string) =>
  /account/i.test(kind) ? `#/accounts/${enc(id)}` : /transaction|deposit/i.test(kind) ? `#/transactions/${enc(id)}` : null

const EXAMPLES = ["How much did we collect this month?", "Who owes us the most?", "What is the forecast for the next 30 days?", "How many deposits are waiting for review?"]

export const CopilotPage = () => {
  const s = useSession()!
  const [prompt, setPrompt] = useState("")
  const [answers, setAnswers] = useState<ReadonlyArray<{ prompt: string; a: CopilotAnswer }>>([])
  const { busy, error, run } = useAction()
  const id = useId("prompt")
  const ask = (p: string) => run(async () => {
    const a = await dash((c) => c.copilot.ask({ payload: { prompt: p } }))
    setAnswers([{ prompt: p, a }, ...answers])
    setPrompt("")
  })
  return (
    <>
      <Section title="Ask about your collections">
        <p class="muted">Answers come from your {s.mode} data only; the copilot reads and never changes anything.</p>
        <Form label="Ask the copilot" onSubmit={() => ask(prompt)}>
          <div class="field">
            <label for={id}>Your question</label>
            <textarea id={id} name="prompt" rows={3} value={prompt} onInput={(e) => setPrompt((e.currentTarget as HTMLTextAreaElement).value)} />
          </div>
          <ErrorBox error={error} />
          <Button type="submit" kind="primary" busy={busy}>Ask</Button>
        </Form>
        <p>Try: {EXAMPLES.map((e) => <button key={e} type="button" class="chip" onClick={() => ask(e)}>{e}</button>)}</p>
      </Section>
      {answers.map(({ prompt: p, a }, i) => (
        <Section key={i} title={`“${p}”`}>
          <p class="answer" id={i === 0 ? "copilot-answer" : undefined}>{a.answer}</p>
          <p class="muted">Intent: {a.intent}{a.rephrased ? " · rephrased by a language model from these figures" : ""}</p>
          {Object.keys(a.figures).length > 0 && (
            <Table caption="Figures used" head={["Figure", "Value"]}>
              {Object.entries(a.figures).map(([k, v]) => <tr key={k}><td>{k}</td><td>{figure(k, v)}</td></tr>)}
            </Table>
          )}
          {a.references.length > 0 && (
            <>
              <h3>References</h3>
              <ul class="refs">
                {a.references.map((r, j) => {
                  const href = refLink(r.kind, r.id)
                  return <li key={j}>{r.kind}: {href ? <a href={href}>{r.id}</a> : <code>{r.id}</code>}</li>
                })}
              </ul>
            </>
          )}
        </Section>
      ))}
    </>
  )
}
