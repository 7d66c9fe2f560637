import { expect, layer } from "@effect/vitest"
import { Cause, Context, Effect, HashMap, Layer, Logger, LogLevel, Option } from "effect"
import { createAccount, sendSigned, testTenant, waitForTransactions } from "../support/Pipeline.js"
import { NAMES, tcpProxy, type TcpProxy } from "../support/Resilience.js"
import { makeTestApp } from "../support/TestApp.js"
import { sleep, waitFor } from "../support/Wait.js"

class Proxy extends Context.Tag("test/OutagePgProxy")<Proxy, TcpProxy>() {}

interface Line {
  readonly level: string
  readonly message: string
  readonly component: string | undefined
  readonly hasCause: boolean
  readonly text: string
}

/** Every line the app logs, as an operator would read it (level, message, component, whether a cause is attached). */
const lines: Array<Line> = []
const capture = Layer.merge(
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, cause, logLevel, message }) => {
      const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
      const component = Option.getOrUndefined(HashMap.get(annotations, "component"))
      const hasCause = !Cause.isEmpty(cause)
      lines.push({
        level: logLevel.label,
        message: text,
        component: component === undefined ? undefined : String(component),
        hasCause,
        text: `${logLevel.label} ${text}${component === undefined ? "" : ` component=${String(component)}`}${hasCause ? `\n${Cause.pretty(cause)}` : ""}`
      })
    })
  ),
  Logger.minimumLogLevel(LogLevel.Debug)
)

/** The app reaches Postgres through a proxy the test cuts for a few seconds; NATS stays up. */
const App = Layer.unwrapScoped(
  Effect.map(tcpProxy(5432), (proxy) =>
    makeTestApp({ databasePort: proxy.port, config: { logLevel: LogLevel.Debug } }).pipe(Layer.provideMerge(Layer.succeed(Proxy, proxy)))
  )
).pipe(Layer.provide(capture))

const OUTAGE_MS = 5_000

layer(App, { timeout: 120_000, excludeTestServices: true })("a Postgres outage, as the log tells it", (it) => {
  it.effect("one warning per component when it begins, one recovery line per component when it ends, no error with a stack", () =>
    Effect.gen(function* () {
      const proxy = yield* Proxy
      const t = yield* testTenant
      const acct = yield* createAccount(t.token, "outage-log-1", NAMES[0])
      expect((yield* sendSigned(t, { accountNumber: acct.nuban, amountKobo: 10_000, senderName: NAMES[0] })).status).toBe(200)
      yield* waitForTransactions(t.tenantId, 1)
      yield* sleep(500)
      const before = lines.length

      yield* proxy.cut
      yield* sleep(OUTAGE_MS)
      yield* proxy.restore
      // After: a deposit goes through again, and the components have had time to pass once more.
      yield* waitFor("a deposit after the outage", sendSigned(t, { accountNumber: acct.nuban, amountKobo: 20_000, senderName: NAMES[0] }), {
        until: (r) => r.status === 200, timeoutMs: 20_000, intervalMs: 500
      })
      yield* waitForTransactions(t.tenantId, 2)
      yield* sleep(8_000)

      // What an operator reads: the access log's lines aside (a 503 per refused request is the API's own answer).
      const read = lines.slice(before).filter((l) => l.level !== "DEBUG" && !/^(GET|POST|PUT|DELETE) /.test(l.message))
      const shown = read.map((l) => l.text.split("\n").slice(0, 2).join(" | ")).join("\n")
      if (process.env.SHOW_OUTAGE_LOG) console.log(shown)
      // No error, and no line with a stack.
      expect(read.filter((l) => l.level === "ERROR" || l.level === "FATAL" || l.hasCause), shown).toEqual([])
      const began = read.filter((l) => l.level === "WARN" && / Postgres unreachable; /.test(l.message))
      const ended = read.filter((l) => l.level === "INFO" && / Postgres back; recovered after \d+\.\d s; \d+ /.test(l.message))
      const componentOf = (l: Line) => l.message.split(":")[0]!
      // One warning per component, and each component that warned said it recovered, once.
      const warned = began.map(componentOf)
      expect(new Set(warned).size, shown).toBe(warned.length)
      expect(ended.map(componentOf).sort(), shown).toEqual([...warned].sort())
      // The components whose passes run through the outage. (The sandbox bank's reporter is not one: with no report
      // due it sleeps until one is, or until the sandbox bank accepts a transfer.)
      expect(warned, shown).toEqual(expect.arrayContaining(["consumers", "transfer completer"]))
      // Nothing else at warning level, and the whole outage in a few lines (it was about 130 errors with stacks).
      expect(read.filter((l) => l.level === "WARN").length, shown).toBe(began.length)
      expect(read.length, shown).toBeLessThan(40)
      // The component is also a log annotation (LOG_FORMAT=json has it as a field).
      expect(began.every((l) => l.component === componentOf(l)), shown).toBe(true)
    })
  )
})
