import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { formatNaira } from "../../src/domain/CopilotIntents.js"
import { integerFromEnv } from "../../src/EnvInteger.js"

/**
 * The copilot's language-model port. It may only rephrase an answer the copilot already computed: it is given the
 * deterministic answer and its figures (never the question, the tenant or any other data), and its text is used only
 * when every number in it is one the answer or its figures state. Off by default: the deterministic answer is used as
 * it is. With `COPILOT_LLM_URL` set it calls an OpenAI-compatible `POST {url}/chat/completions`; any error, timeout,
 * empty or rejected text keeps the deterministic answer.
 */

export type Figures = Readonly<Record<string, number | string | null>>

export interface RephraseRequest {
  readonly answer: string
  readonly figures: Figures
}

export interface LlmSettingsShape {
  /** The OpenAI-compatible base URL (`…/v1`); null: the port is off. */
  readonly url: string | null
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | null
  readonly timeoutMs: number
}

const blankToNull = (v: string | undefined) => (v === undefined || v.trim() === "" ? null : v.trim())

/** The port's settings: from the environment unless a test provides its own. */
export class CopilotLlmSettings extends Context.Reference<CopilotLlmSettings>()("services/insights/CopilotLlmSettings", {
  defaultValue: (): LlmSettingsShape => {
    const apiKey = blankToNull(process.env.COPILOT_LLM_API_KEY)
    return {
      url: blankToNull(process.env.COPILOT_LLM_URL)?.replace(/\/+$/, "") ?? null,
      model: blankToNull(process.env.COPILOT_LLM_MODEL) ?? "gpt-4o-mini",
      apiKey: apiKey === null ? null : Redacted.make(apiKey),
      timeoutMs: integerFromEnv("COPILOT_LLM_TIMEOUT_MS", 5_000, 1, "milliseconds")
    }
  }
}) {}

export class LanguageModel extends Context.Tag("services/insights/LanguageModel")<LanguageModel, {
  readonly enabled: boolean
  /** The accepted rephrasing, or none (off, failed, timed out, or a number that is not the answer's). */
  readonly rephrase: (request: RephraseRequest) => Effect.Effect<Option.Option<string>>
}>() {}

/** Every number written in a text, as a canonical decimal: "₦1,500.00" -> "1500", "75.50%" -> "75.5". */
export const numbersIn = (text: string): ReadonlyArray<string> =>
  (text.match(/\d[\d,]*(?:\.\d+)?/g) ?? []).map((t) => String(Number(t.replace(/,/g, ""))))

/** A figure as the answer writes it: kobo as naira, basis points as a percentage, anything else as it is. */
export const formattedFigure = (key: string, value: number | string | null): string => {
  if (value === null) return ""
  if (typeof value === "number" && /Kobo$/.test(key)) return formatNaira(value)
  if (typeof value === "number" && /Bps$/.test(key)) return `${(value / 100).toFixed(2)}%`
  return String(value)
}

/** The rephrasing is kept only when it is not empty, not runaway long, and states no number the answer does not. */
export const acceptRephrasing = (rephrased: string, request: RephraseRequest): boolean => {
  const text = rephrased.trim()
  if (text === "" || text.length > 2 * request.answer.length + 400) return false
  const allowed = new Set([
    ...numbersIn(request.answer),
    ...Object.entries(request.figures).flatMap(([k, v]) => numbersIn(formattedFigure(k, v)))
  ])
  return numbersIn(text).every((n) => allowed.has(n))
}

const INSTRUCTIONS = "You rephrase answers of a payments assistant for a finance person in Nigeria. Rewrite the answer " +
  "below in clear, friendly English. Keep every amount (naira with kobo, like ₦1,500.00), count, percentage, date and " +
  "reference exactly as written. Add no number, fact, advice or guess that is not in the answer or its figures. Reply " +
  "with the rephrased answer only."

const Completion = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({ message: Schema.Struct({ content: Schema.String }) }))
})

const off = LanguageModel.of({ enabled: false, rephrase: () => Effect.succeedNone })

const openAiCompatible = (s: LlmSettingsShape & { readonly url: string }) =>
  Effect.gen(function* () {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const ask = (request: RephraseRequest) =>
      HttpClientRequest.post(`${s.url}/chat/completions`).pipe(
        HttpClientRequest.acceptJson,
        s.apiKey === null ? (r) => r : HttpClientRequest.bearerToken(Redacted.value(s.apiKey)),
        HttpClientRequest.bodyUnsafeJson({
          model: s.model,
          temperature: 0,
          messages: [
            { role: "system", content: INSTRUCTIONS },
            { role: "user", content: JSON.stringify({ answer: request.answer, figures: request.figures }) }
          ]
        }),
        client.execute,
        Effect.flatMap((res) => res.json),
        Effect.flatMap(Schema.decodeUnknown(Completion)),
        Effect.map((c) => c.choices[0].message.content),
        Effect.scoped,
        Effect.timeoutFail({ duration: Duration.millis(s.timeoutMs), onTimeout: () => new Error(`no answer in ${s.timeoutMs} ms`) })
      )
    return LanguageModel.of({
      enabled: true,
      rephrase: (request) =>
        ask(request).pipe(
          Effect.flatMap((text) => {
            if (acceptRephrasing(text, request)) return Effect.succeed(Option.some(text.trim()))
            return Effect.as(Effect.logWarning("copilot: the language model's rephrasing was empty, too long, or stated a number the answer does not; kept the deterministic answer"), Option.none())
          }),
          Effect.catchAllCause((cause) =>
            Effect.as(Effect.logWarning("copilot: the language model failed; kept the deterministic answer", cause), Option.none<string>()))
        )
    })
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** Off unless the settings name a URL. */
export const LanguageModelLive = Layer.effect(
  LanguageModel,
  Effect.flatMap(CopilotLlmSettings, (s) => (s.url === null ? Effect.succeed(off) : openAiCompatible({ ...s, url: s.url })))
)
