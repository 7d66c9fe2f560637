/**
 * The webhook sender of the deposit benchmark, run as its own process (so its CPU is not the service's event loop):
 * `node --import tsx test/bench/sender.ts <plan.json> <results.json>`.
 *
 * The plan holds the base URL, the concurrency and the pre-signed requests (body + signature, in send order). The
 * sender keeps `concurrency` requests in flight over a keep-alive agent and records, per request, the epoch ms it was
 * first sent, the epoch ms its final answer arrived, the HTTP status and the receiver's `result`. Like a provider, it
 * retries a request that got no answer or a 5xx (a few times, briefly); the send time stays that of the first attempt.
 */
import * as fs from "node:fs"
import * as http from "node:http"

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

const main = async () => {
  const [planFile, resultsFile] = process.argv.slice(2)
  if (!planFile || !resultsFile) throw new Error("usage: sender.ts <plan.json> <results.json>")
  const plan = JSON.parse(fs.readFileSync(planFile, "utf8")) as SenderPlan
  const url = new URL(plan.path, plan.baseUrl)
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency, maxFreeSockets: plan.concurrency })
  const n = plan.requests.length
  const sendMs = new Array<number>(n).fill(0)
  const doneMs = new Array<number>(n).fill(0)
  const status = new Array<number>(n).fill(0)
  const result = new Array<string | null>(n).fill(null)
  let retries = 0

  const once = (body: string, signature: string) =>
    new Promise<{ status: number; text: string }>((resolve) => {
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-sandbox-signature": signature }
        },
        (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (c: string) => (text += c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
          res.on("error", () => resolve({ status: 0, text: "" }))
        }
      )
      req.setTimeout(60_000, () => req.destroy(new Error("timed out")))
      req.on("error", () => resolve({ status: 0, text: "" }))
      req.end(body)
    })

  let next = 0
  let done = 0
  const worker = async () => {
    for (;;) {
      const i = next++
      if (i >= n) return
      const { body, signature } = plan.requests[i]!
      sendMs[i] = Date.now()
      let answer = await once(body, signature)
      for (let attempt = 2; attempt <= MAX_ATTEMPTS && (answer.status === 0 || answer.status >= 500); attempt++) {
        retries++
        await new Promise((r) => setTimeout(r, 100 * attempt))
        answer = await once(body, signature)
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
  }

  const progress = setInterval(() => process.stdout.write(`sender: ${done}/${n} answered\n`), 2_000)
  await Promise.all(Array.from({ length: Math.max(1, plan.concurrency) }, worker))
  clearInterval(progress)
  agent.destroy()
  const usage = process.cpuUsage()
  const out: SenderResults = { sendMs, doneMs, status, result, retries, cpuSeconds: (usage.user + usage.system) / 1e6 }
  fs.writeFileSync(resultsFile, JSON.stringify(out))
  process.stdout.write(`sender: ${done}/${n} answered, ${retries} retries\n`)
}

main().catch((e) => {
  process.stderr.write(`sender failed: ${e instanceof Error ? e.stack : String(e)}\n`)
  process.exit(1)
})
