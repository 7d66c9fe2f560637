import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { PROBLEM_STATUS, STATUS_TITLES } from "../client/index.js"
import { Failure, isProblem } from "./Client.js"
import { formatNaira, parseNaira } from "./Money.js"

/** Shared pieces: labelled fields, the error box, async actions, tables, the pager, copy buttons. */

let nextId = 0
export const useId = (prefix: string) => useRef(`${prefix}-${++nextId}`).current

export const ErrorBox = ({ error }: { error: unknown }) => {
  if (!error) return null
  // A problem class (the operation's typed error) shows its status, title and message; a Failure its words.
  const status = isProblem(error) ? PROBLEM_STATUS[error._tag] : error instanceof Failure ? error.status : 0
  const title = isProblem(error) ? STATUS_TITLES[status] : undefined
  const message = error instanceof Error ? error.message : String(error)
  const fields = isProblem(error) || error instanceof Failure ? error.errors ?? [] : []
  return (
    <div class="error" role="alert" title={title}>
      <strong>{status > 0 ? `Error ${status}: ` : "Error: "}</strong>
      <span class="error-message">{message}</span>
      {fields.length > 0 && (
        <ul class="field-errors">
          {fields.map((f, i) => (
            <li key={i}>
              {f.path ? <code>{f.path}</code> : null} {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

export const Notice = ({ children, kind = "info" }: { children: ComponentChildren; kind?: "info" | "ok" | "warn" }) => (
  <div class={`notice notice-${kind}`} role="status">{children}</div>
)

/** Runs an async action with a busy flag and its error; `run` returns the value or undefined on failure. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = useCallback(async <A,>(f: () => Promise<A>): Promise<A | undefined> => {
    setBusy(true)
    setError(null)
    try {
      return await f()
    } catch (e) {
      setError(e)
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, setError, run }
}

/** Loads data when `deps` change; `reload()` loads again. */
export const useLoad = <A,>(f: () => Promise<A>, deps: ReadonlyArray<unknown>) => {
  const [data, setData] = useState<A | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setLoading(true)
    f().then(
      (d) => live && (setData(d), setError(null), setLoading(false)),
      (e) => live && (setError(e), setLoading(false))
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  return { data, error, loading, reload: () => setTick((n) => n + 1), setData }
}

export const Loading = ({ what }: { what: string }) => <p class="muted" aria-live="polite">Loading {what}…</p>

interface FieldProps {
  label: string
  name: string
  value: string
  onInput: (v: string) => void
  type?: string
  required?: boolean
  hint?: string
  placeholder?: string
  autoComplete?: string
  inputMode?: "numeric" | "decimal" | "text" | "email" | "tel"
  error?: string | null
}

export const Field = (p: FieldProps) => {
  const id = useId(p.name)
  const hintId = `${id}-hint`
  const errId = `${id}-err`
  const described = [p.hint ? hintId : null, p.error ? errId : null].filter(Boolean).join(" ")
  return (
    <div class="field">
      <label for={id}>{p.label}{p.required ? <span aria-hidden="true"> *</span> : null}</label>
      <input
        id={id}
        name={p.name}
        type={p.type ?? "text"}
        value={p.value}
        required={p.required}
        placeholder={p.placeholder}
        autoComplete={p.autoComplete ?? "off"}
        inputMode={p.inputMode}
        aria-invalid={p.error ? "true" : undefined}
        aria-describedby={described || undefined}
        onInput={(e) => p.onInput((e.currentTarget as HTMLInputElement).value)}
      />
      {p.hint && <small id={hintId} class="hint">{p.hint}</small>}
      {p.error && <small id={errId} class="field-error">{p.error}</small>}
    </div>
  )
}

/** A naira amount typed by a person; shows the parse error as they type, and what it means in naira. */
export const NairaField = (p: Omit<FieldProps, "inputMode" | "error"> & { allowZero?: boolean }) => {
  const parsed = p.value.trim() === "" ? null : parseNaira(p.value, { allowZero: p.allowZero === true })
  return (
    <Field
      {...p}
      inputMode="decimal"
      placeholder={p.placeholder ?? "1,500.00"}
      hint={parsed?.ok ? `= ${formatNaira(parsed.kobo)}` : p.hint ?? "In naira, e.g. 1,500.50"}
      error={parsed && !parsed.ok ? parsed.error : null}
    />
  )
}

/** The kobo of a naira field, or throws the parse error (shown by the action's error box). */
export const koboOf = (label: string, value: string, options: { optional?: boolean; allowZero?: boolean } = {}): number | undefined => {
  if (options.optional && value.trim() === "") return undefined
  const r = parseNaira(value, { allowZero: options.allowZero === true })
  if (!r.ok) throw new Error(`${label}: ${r.error}`)
  return r.kobo
}

export const Select = (p: { label: string; name: string; value: string; onChange: (v: string) => void; options: ReadonlyArray<readonly [string, string]> }) => {
  const id = useId(p.name)
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      <select id={id} name={p.name} value={p.value} onChange={(e) => p.onChange((e.currentTarget as HTMLSelectElement).value)}>
        {p.options.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
      </select>
    </div>
  )
}

export const Checkbox = (p: { label: string; name: string; checked: boolean; onChange: (v: boolean) => void }) => {
  const id = useId(p.name)
  return (
    <div class="field field-check">
      <input id={id} type="checkbox" name={p.name} checked={p.checked} onChange={(e) => p.onChange((e.currentTarget as HTMLInputElement).checked)} />
      <label for={id}>{p.label}</label>
    </div>
  )
}

export const Button = (p: { children: ComponentChildren; onClick?: () => void; busy?: boolean; kind?: "primary" | "secondary" | "danger"; type?: "button" | "submit"; label?: string; disabled?: boolean }) => (
  <button
    type={p.type ?? "button"}
    class={`btn btn-${p.kind ?? "secondary"}`}
    onClick={p.onClick}
    disabled={p.busy || p.disabled}
    aria-busy={p.busy ? "true" : undefined}
    aria-label={p.label}
  >
    {p.children}
  </button>
)

/** A form whose submit runs `onSubmit` (no page load). */
export const Form = (p: { children: ComponentChildren; onSubmit: () => void; label: string; class?: string }) => (
  <form
    class={p.class ?? "form"}
    aria-label={p.label}
    noValidate
    onSubmit={(e) => {
      e.preventDefault()
      p.onSubmit()
    }}
  >
    {p.children}
  </form>
)

/** A copy button: it reads "Copy" and is named for what it copies ("Copy the client secret"). */
export const CopyButton = ({ text, label }: { text: string; label: string }) => {
  const [copied, setCopied] = useState(false)
  const what = label.replace(/^Copy\s+/, "")
  return (
    <button
      type="button"
      class="btn btn-secondary btn-small"
      onClick={() => {
        navigator.clipboard?.writeText(text).then(() => {
          setCopied(true)
          setTimeout(() => setCopied(false), 2000)
        }, () => {})
      }}
    >
      {copied ? "Copied" : "Copy"}<span class="sr-only"> {what}</span>
    </button>
  )
}

/** A table that scrolls sideways on a phone instead of widening the page. */
export const Table = ({ caption, head, children }: { caption: string; head: ReadonlyArray<string>; children: ComponentChildren }) => (
  <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)

export const Empty = ({ cols, text }: { cols: number; text: string }) => (
  <tr><td colSpan={cols} class="muted">{text}</td></tr>
)

/** `startingAfter` paging: a stack of cursors, so "Previous" goes back exactly. */
export const usePager = () => {
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  return {
    startingAfter: cursors[cursors.length - 1],
    page: cursors.length + 1,
    next: (last: string) => setCursors((c) => [...c, last]),
    previous: () => setCursors((c) => c.slice(0, -1)),
    reset: () => setCursors([])
  }
}

export const Pager = ({ pager, hasMore, lastKey }: { pager: ReturnType<typeof usePager>; hasMore: boolean; lastKey: string | undefined }) => (
  <nav class="pager" aria-label="Pages">
    <Button onClick={pager.previous} disabled={pager.page === 1}>Previous page</Button>
    <span aria-live="polite">Page {pager.page}</span>
    <Button onClick={() => lastKey && pager.next(lastKey)} disabled={!hasMore || !lastKey}>Next page</Button>
  </nav>
)

export const Badge = ({ text }: { text: string }) => <span class={`badge badge-${text.toLowerCase()}`}>{text}</span>

export const Money = ({ kobo }: { kobo: number | null | undefined }) => (
  <span class="money">{kobo === null || kobo === undefined ? "—" : formatNaira(kobo)}</span>
)

export const Section = ({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) => (
  <section class="card" aria-labelledby={id ?? undefined}>
    <h2 id={id}>{title}</h2>
    {children}
  </section>
)
