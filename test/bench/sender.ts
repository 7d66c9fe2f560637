/**
 * The webhook sender of the deposit benchmark, run as its own process (so its CPU is not the service's event loop):
 * `node --import tsx test/bench/sender.ts <plan.json> <results.json>`.
 *
 * The plan holds the base URL, the concurrency and the pre-signed requests (body + signature, in send order). The
 * sender keeps `concurrency` requests in flight, one per keep-alive connection, and records, per request, the epoch ms it was
 * first sent, the epoch ms its final answer arrived, the HTTP status and the receiver's `result`. Like a provider, it
 * retries a request that got no answer or a 5xx (a few times, briefly); the send time stays that of the first attempt.
 */
import * as fs from "node:fs"
import * as net from "node:net"

export interface SenderPlan {
  readonly baseUrl: string
  readonly path: string
  readonly concurrency: number
  readonly requests: ReadonlyArray<{ readonly body: string; readonly signature: string }>
}

export interface SenderResults {
  readonly sendMs: ReadonlyArray<number>
  readonly doneMs: ReadonlyArray<number>
  readonly status: ReadonlyArray<number>
  readonly result: ReadonlyArray<string | null>
  readonly retries: number
  /** The sender's own CPU seconds (user + system). */
  readonly cpuSeconds: number
}

const MAX_ATTEMPTS = 5
const ANSWER_TIMEOUT_MS = 60_000

/**
 * One keep-alive HTTP/1.1 connection that sends one request at a time and reads the answer itself: the status line,
 * the headers it needs (Content-Length, Connection) and the body. Node's http client cost about 0.15 ms of CPU per
 * request, more than a tenth of the whole machine's budget per deposit, and the load generator's CPU is not the
 * service's; this costs a fraction of that. Answers without a Content-Length (the service always sends one) count as
 * failures, as do a dropped connection and a timeout; the connection is then replaced.
 */
class Connection {
  private socket: net.Socket | undefined
  private buffer: Buffer = Buffer.alloc(0)
  private waiting: ((answer: { status: number; text: string }) => void) | undefined
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly host: string, private readonly port: number) {}

  /** `bytes`: the whole request, head and body, written at once (one segment, so the service reads it in one go). */
  send(bytes: Buffer): Promise<{ status: number; text: string }> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.timer = setTimeout(() => this.fail(), ANSWER_TIMEOUT_MS)
      const socket = this.socket ?? this.open()
      socket.write(bytes)
    })
  }

  close() {
    this.socket?.destroy()
    this.socket = undefined
  }

  private open() {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true })
    socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
      this.parse()
    })
    // Only the current connection's loss fails the request in flight (a replaced one closes later, harmlessly).
    const lost = () => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.fail()
    }
    socket.on("error", lost)
    socket.on("close", lost)
    this.socket = socket
    this.buffer = Buffer.alloc(0)
    return socket
  }

  private finish(answer: { status: number; text: string }) {
    const resolve = this.waiting
    this.waiting = undefined
    clearTimeout(this.timer)
    resolve?.(answer)
  }

  private fail() {
    if (!this.waiting) return
    this.close()
    this.finish({ status: 0, text: "" })
  }

  private parse() {
    const end = this.buffer.indexOf("\r\n\r\n")
    if (end < 0) return
    const head = this.buffer.toString("latin1", 0, end)
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    if (!length) return this.fail()
    const total = end + 4 + Number(length[1])
    if (this.buffer.length < total) return
    const text = this.buffer.toString("utf8", end + 4, total)
    this.buffer = this.buffer.subarray(total)
    if (/\r\nconnection:\s*close/i.test(head)) this.close()
    this.finish({ status, text })
  }
}

const main = async () => {
  const [planFile, resultsFile] = process.argv.slice(2)
  if (!planFile || !resultsFile) throw new Error("usage: sender.ts <plan.json> <results.json>")
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8")) as SenderPlan
  const url = new URL(plan.path, plan.baseUrl)
  const n = plan.requests.length
  const sendMs = new Array<number>(n).fill(0)
  const doneMs = new Array<number>(n).fill(0)
  const status = new Array<number>(n).fill(0)
  const result = new Array<string | null>(n).fill(null)
  let retries = 0
  // Each request's bytes, made before the clock starts.
  const requests = plan.requests.map(({ body, signature }) => {
    const bytes = Buffer.from(body, "utf8")
    const head = `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n` +
      `X-Sandbox-Signature: ${signature}\r\n\r\n`
    return Buffer.concat([Buffer.from(head, "latin1"), bytes])
  })

  let next = 0
  let done = 0
  const worker = async () => {
    const connection = new Connection(url.hostname, Number(url.port))
    for (;;) {
      const i = next++
      if (i >= n) break
      const bytes = requests[i]!
      sendMs[i] = Date.now()
      let answer = await connection.send(bytes)
      for (let attempt = 2; attempt <= MAX_ATTEMPTS && (answer.status === 0 || answer.status >= 500); attempt++) {
        retries++
        await new Promise((r) => setTimeout(r, 100 * attempt))
        answer = await connection.send(bytes)
      }
      doneMs[i] = Date.now()
      status[i] = answer.status
      try {
        const parsed = JSON.parse(answer.text) as { result?: unknown }
        result[i] = typeof parsed.result === "string" ? parsed.result : null
      } catch {
        result[i] = null
      }
      done++
    }
    connection.close()
  }

  const progress = setInterval(() => process.stdout.write(`sender: ${done}/${n} answered\n`), 2_000)
  await Promise.all(Array.from({ length: Math.max(1, plan.concurrency) }, worker))
  clearInterval(progress)
  const usage = process.cpuUsage()
  const out: SenderResults = { sendMs, doneMs, status, result, retries, cpuSeconds: (usage.user + usage.system) / 1e6 }
  fs.writeFileSync(resultsFile, JSON.stringify(out))
  process.stdout.write(`sender: ${done}/${n} answered, ${retries} retries\n`)
}

main().catch((e) => {
  process.stderr.write(`sender failed: ${e instanceof Error ? e.stack : String(e)}\n`)
  process.exit(1)
})
