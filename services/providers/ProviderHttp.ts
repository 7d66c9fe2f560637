import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Duration, Effect, Either, Redacted, Ref } from "effect"
import { admit, CLOSED, type CircuitPolicy, type CircuitState, DEFAULT_CIRCUIT, onFailure, onSuccess } from "../../src/domain/Circuit.js"
import { ProviderError } from "./BankProvider.js"
import { Metrics, secondsSince } from "../../src/Metrics.js"

export interface ProviderCall {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>
  readonly body?: unknown
  /** A read (or a write the provider de-duplicates): retried after a 5xx, a timeout or a broken connection. */
  readonly idempotent: boolean
  /** What the call is for, in words (for logs and errors; never the URL's query or any header). */
  readonly what: string
  /** This call's Authorization header, in place of the client's (Monnify: Basic for the login, the token after). */
  readonly authorization?: Redacted.Redacted<string>
}

export interface ProviderAnswer {
  readonly status: number
  /** The parsed JSON body, or undefined when it was not JSON. */
  readonly json: unknown
}

export interface ProviderHttpOptions {
  readonly provider: string
  readonly baseUrl: string
  /** The Authorization header's value; kept Redacted so it never prints. */
  readonly authorization: Effect.Effect<Redacted.Redacted<string>, ProviderError>
  readonly timeoutMs: number
  /** Attempts for an idempotent call that meets a 5xx, timeout or broken connection (1 = no retry). */
  readonly idempotentAttempts?: number
  /** Attempts after a 429 (the provider did not act on it, so any call may be retried). */
  readonly rateLimitAttempts?: number
  /** The first backoff; doubled each time, capped at 2 s (429s honour Retry-After when given, capped likewise). */
  readonly backoffMs?: number
}

/** The circuit of each provider (all tenants share it: a provider that is down is down for everyone). */
export class ProviderCircuits extends Effect.Service<ProviderCircuits>()("services/providers/ProviderCircuits", {
  effect: Effect.map(Ref.make(new Map<string, CircuitState>()), (states) => {
    const policy: CircuitPolicy = DEFAULT_CIRCUIT
    const update = <A>(key: string, f: (s: CircuitState, now: number) => readonly [A, CircuitState]) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(states, (m): readonly [A, Map<string, CircuitState>] => {
          const [a, next] = f(m.get(key) ?? CLOSED, now)
          const copy = new Map(m)
          copy.set(key, next)
          return [a, copy]
        }))
    return {
      admit: (key: string) => update(key, (s, now) => { const a = admit(s, now); return [a, a.state] as const }),
      success: (key: string) => update(key, (s) => [undefined, onSuccess(s)] as const),
      failure: (key: string) => update(key, (s, now) => [undefined, onFailure(s, now, policy)] as const),
      state: (key: string) => Effect.map(Ref.get(states), (m) => m.get(key) ?? CLOSED)
    }
  })
}) {}

/** A failure that says nothing of the outcome: the provider may or may not have acted. */
type Unanswered = { readonly _tag: "Unanswered"; readonly reason: string }

const MAX_BACKOFF_MS = 2_000

const retryAfterMs = (headers: Readonly<Record<string, string>>): number | undefined => {
  // PROVIDERS.md A1/Q1: Paystack names three rate-limit headers whose names were not captured; Retry-After is the
  // standard one. Assumption: when absent we back off exponentially.
  const raw = headers["retry-after"]
  if (raw === undefined) return undefined
  const seconds = Number(raw)
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined
}

/**
 * One provider's HTTP calls: a timeout on each, retries only where the call is idempotent (and after a 429, which the
 * provider did not act on), and the provider's circuit: after repeated 5xx, timeouts or broken connections every call
 * fails at once until a cool-down has passed. Errors carry the provider, the call's purpose and what went wrong, never
 * a header, a key or a query string.
 */
export const makeProviderHttp = (options: ProviderHttpOptions) =>
  Effect.gen(function* () {
    const circuits = yield* ProviderCircuits
    const metrics = yield* Metrics
    const client = yield* HttpClient.HttpClient
    const circuitKey = `${options.provider}|${options.baseUrl}`
    const idempotentAttempts = options.idempotentAttempts ?? 3
    const rateLimitAttempts = options.rateLimitAttempts ?? 4
    const backoff = (n: number) => Math.min((options.backoffMs ?? 200) * 2 ** n, MAX_BACKOFF_MS)
    const fail = (what: string, why: string) => new ProviderError({ provider: options.provider, reason: `${options.provider} ${what}: ${why}` })

    const once = (call: ProviderCall, authorization: Redacted.Redacted<string>) =>
      Effect.gen(function* () {
        let req = HttpClientRequest.make(call.method)(new URL(call.path, options.baseUrl).toString()).pipe(
          HttpClientRequest.setHeader("authorization", Redacted.value(authorization)),
          HttpClientRequest.setHeader("accept", "application/json")
        )
        const query = Object.entries(call.query ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as const]))
        if (query.length > 0) req = HttpClientRequest.setUrlParams(req, query)
        if (call.body !== undefined) req = HttpClientRequest.bodyUnsafeJson(req, call.body)
        const res = yield* client.execute(req)
        const text = yield* res.text
        let json: unknown
        try {
          json = text === "" ? undefined : JSON.parse(text)
        } catch {
          json = undefined
        }
        return { status: res.status, json, headers: res.headers as Readonly<Record<string, string>> }
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({ duration: Duration.millis(options.timeoutMs), onTimeout: (): Unanswered => ({ _tag: "Unanswered", reason: `no answer in ${options.timeoutMs} ms` }) }),
        Effect.catchTags({
          RequestError: (e): Effect.Effect<never, Unanswered> => Effect.fail({ _tag: "Unanswered", reason: `could not connect (${e.reason})` }),
          ResponseError: (e): Effect.Effect<never, Unanswered> => Effect.fail({ _tag: "Unanswered", reason: `the answer broke off (${e.reason})` })
        })
      )

    /** Sends the call; answers any status but 5xx and 429 (the caller reads the provider's envelope). */
    const send = (call: ProviderCall): Effect.Effect<ProviderAnswer, ProviderError> =>
      Effect.gen(function* () {
        const authorization = call.authorization ?? (yield* options.authorization)
        let unanswered = 0
        let limited = 0
        for (;;) {
          const admission = yield* circuits.admit(circuitKey)
          if (!admission.allowed) {
            return yield* fail(call.what, `the circuit is open after repeated failures; calls fail fast until ${new Date(admission.retryAt).toISOString()}`)
          }
          const startedMs = Date.now()
          const result = yield* Effect.either(once(call, authorization))
          const answered = Either.isRight(result) && result.right.status < 500
          metrics.providerCalls.inc({ provider: options.provider, call: call.what, outcome: answered ? "answered" : "failed" })
          metrics.providerDuration.observe({ provider: options.provider, call: call.what }, secondsSince(startedMs))
          if (Either.isRight(result) && result.right.status < 500 && result.right.status !== 429) {
            yield* circuits.success(circuitKey)
            return { status: result.right.status, json: result.right.json }
          }
          if (Either.isRight(result) && result.right.status === 429) {
            // Rate limited: not acted on. The circuit stays as it is (the provider is up); back off and try again.
            yield* circuits.success(circuitKey)
            limited++
            if (limited >= rateLimitAttempts) return yield* fail(call.what, `rate limited (429) ${limited} times in a row`)
            const wait = Math.min(retryAfterMs(result.right.headers) ?? backoff(limited - 1), MAX_BACKOFF_MS)
            yield* Effect.logWarning(`${options.provider} ${call.what}: rate limited (429); trying again in ${wait} ms`)
            yield* Effect.sleep(Duration.millis(wait))
            continue
          }
          const why = Either.isRight(result) ? `answered ${result.right.status}` : result.left.reason
          yield* circuits.failure(circuitKey)
          unanswered++
          if (!call.idempotent || unanswered >= idempotentAttempts) return yield* fail(call.what, why)
          yield* Effect.logWarning(`${options.provider} ${call.what}: ${why}; trying again (attempt ${unanswered + 1} of ${idempotentAttempts})`)
          yield* Effect.sleep(Duration.millis(backoff(unanswered - 1)))
        }
      }).pipe(Effect.withSpan(`${options.provider}.${call.what}`, { attributes: { provider: options.provider, call: call.what } }))

    return { send } as const
  }).pipe(Effect.provide(FetchHttpClient.layer))
