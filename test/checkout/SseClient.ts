/**
 * A small Server-Sent Events reader for the checkout tests: `fetch` over real HTTP and a parser of the `event:`,
 * `id:`, `data:` and `retry:` fields and `:` comments, block by block, as a browser's EventSource reads them.
 */
import { waitForPromise } from "../support/Wait.js"

export interface SseBlock {
  readonly event?: string
  readonly id?: string
  readonly data?: string
  readonly retry?: string
  /** A comment line (`: heartbeat`), without its colon and space. */
  readonly comment?: string
}

export interface SseStream {
  readonly status: number
  readonly headers: Headers
  /** The answer's body when it is not a stream (an error), parsed as JSON when it is JSON. */
  readonly body: any
  /** Every block read so far, in order. */
  readonly blocks: Array<SseBlock>
  /** Everything read so far, as it came. */
  readonly raw: () => string
  /** Blocks that carry an event (snapshot, update, expired). */
  readonly events: () => Array<SseBlock & { readonly event: string }>
  readonly heartbeats: () => number
  /** True once the server ended the stream. */
  readonly ended: () => boolean
  /** Waits until `check` holds over what was read (bounded), answers the events. */
  readonly until: (what: string, check: (s: SseStream) => boolean, ms?: number) => Promise<Array<SseBlock & { readonly event: string }>>
  /** Waits for `n` events in all. */
  readonly eventCount: (n: number, ms?: number) => Promise<Array<SseBlock & { readonly event: string }>>
  /** The client hangs up. */
  readonly close: () => void
}

export const parseBlock = (text: string): SseBlock => {
  const block: { -readonly [K in keyof SseBlock]: SseBlock[K] } = {}
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) {
      block.comment = line.slice(1).trimStart()
      continue
    }
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "event" || field === "id" || field === "retry") block[field] = value
    else if (field === "data") block.data = block.data === undefined ? value : `${block.data}\n${value}`
  }
  return block
}

/** Opens `url` as an event stream (optionally with `Last-Event-ID`) and reads it in the background. */
export const openSse = async (url: string, options: { lastEventId?: string; headers?: Record<string, string> } = {}): Promise<SseStream> => {
  const ctrl = new AbortController()
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers }
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId
  const res = await fetch(url, { headers, signal: ctrl.signal })
  const blocks: Array<SseBlock> = []
  let raw = ""
  let done = false
  let body: any = null
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await res.text()
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    done = true
  } else {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let pending = ""
    void (async () => {
      try {
        for (;;) {
          const { value, done: end } = await reader.read()
          if (end) break
          const text = decoder.decode(value, { stream: true })
          raw += text
          pending += text
          for (let at = pending.indexOf("\n\n"); at >= 0; at = pending.indexOf("\n\n")) {
            blocks.push(parseBlock(pending.slice(0, at)))
            pending = pending.slice(at + 2)
          }
        }
      } catch {
        // aborted by `close`
      }
      done = true
    })()
  }
  const events = () => blocks.filter((b): b is SseBlock & { event: string } => b.event !== undefined)
  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    body,
    blocks,
    raw: () => raw,
    events,
    heartbeats: () => blocks.filter((b) => b.comment === "heartbeat").length,
    ended: () => done,
    until: async (what, check, ms = 30_000) => {
      await waitForPromise(what, () => check(stream), { timeoutMs: ms, intervalMs: 20, detail: () => `read so far:\n${raw}` })
      return events()
    },
    eventCount: (n, ms) => stream.until(`${n} events`, () => events().length >= n, ms),
    close: () => ctrl.abort()
  }
  return stream
}
