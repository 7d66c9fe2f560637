/**
 * Checks every request makes before routing, shared by the HttpApi middleware and the receiver's fast path so both
 * answer alike: text that holds a NUL character or a lone UTF-16 surrogate (in the path, the query or any JSON string,
 * escaped or not) is refused, and a JSON endpoint refuses a body of another media type.
 */

/** Why a string is refused, or undefined when it is clean. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const badText = (s: string): string | undefined =>
  s.includes("\u0000") ? "a NUL character" : LONE_SURROGATE.test(s) ? "a lone UTF-16 surrogate" : undefined

export interface TextProblem {
  readonly code: "invalid_text"
  readonly message: string
}

const problem = (where: string, what: string): TextProblem => ({
  code: "invalid_text",
  message: `The ${where} holds ${what}; text must be valid Unicode without NUL characters.`
})

/** The path and query of a request URL, percent-decoded; bytes that are not UTF-8 count as invalid text too. */
export const invalidTextInUrl = (url: string): TextProblem | undefined => {
  const q = url.indexOf("?")
  const parts: Array<[string, string]> = q < 0 ? [["path", url]] : [["path", url.slice(0, q)], ["query", url.slice(q + 1)]]
  for (const [where, raw] of parts) {
    if (!raw.includes("%") && !raw.includes("\u0000")) continue
    let decoded: string
    try {
      decoded = decodeURIComponent(where === "query" ? raw.replace(/\+/g, " ") : raw)
    } catch {
      return problem(where, "a percent-encoded byte sequence that is not UTF-8")
    }
    const bad = badText(decoded)
    if (bad) return problem(where, bad)
  }
  return undefined
}

const walk = (value: unknown): string | undefined => {
  if (typeof value === "string") return badText(value)
  if (Array.isArray(value)) {
    for (const v of value) {
      const bad = walk(v)
      if (bad) return bad
    }
    return undefined
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const bad = badText(k) ?? walk(v)
      if (bad) return bad
    }
  }
  return undefined
}

/**
 * A JSON body's strings and keys. UTF-8 decoding never yields a lone surrogate and JSON forbids a raw NUL in a string,
 * so only an escape (`\u0000`, `\ud800`) can smuggle one in: a body without `\u` costs one scan and no parse. A body
 * that is not JSON is left to the endpoint (400 malformed_request there).
 */
export const invalidTextInJson = (body: string): TextProblem | undefined => {
  if (!body.includes("\\u") && !body.includes("\u0000")) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body.includes("\u0000") ? problem("request body", "a NUL character") : undefined
  }
  const bad = walk(parsed)
  return bad ? problem("request body", bad) : undefined
}

/** Media types a JSON endpoint reads: application/json and any `+json` type. */
export const isJsonMediaType = (contentType: string | undefined) => {
  if (contentType === undefined || contentType.trim() === "") return true
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type)
}

export const UNSUPPORTED_MEDIA_TYPE = (contentType: string) => ({
  code: "unsupported_media_type",
  message: `This endpoint reads JSON: send the body with content-type application/json (got ${JSON.stringify(contentType.split(";")[0]!.trim().slice(0, 100))}).`
}) as const

/**
 * A kobo field (a key ending in `Kobo`) whose number is written with a decimal point or an exponent in the JSON text:
 * `1500.00` parses to the integer 1500, so the schema alone would take naira written with kobo for kobo. The raw text
 * is checked (DESIGN.md, "API conventions, second round"); every such field is named. Undefined when there is none.
 */
const KOBO_NUMBER = /"([A-Za-z0-9_]*Kobo)"\s*:\s*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/g
export const decimalKoboInJson = (body: string) => {
  if (!body.includes("Kobo")) return undefined
  const errors: Array<{ readonly path: string; readonly message: string }> = []
  for (const m of body.matchAll(KOBO_NUMBER)) {
    const [, field, number] = m
    if (!/[.eE]/.test(number!)) continue
    errors.push({ path: field!, message: `must be integer kobo (1 naira = 100 kobo): a fraction, decimal point or exponent was sent (${number}); did you send naira?` })
  }
  if (errors.length === 0) return undefined
  return {
    code: "validation_failed" as const,
    message: `Invalid request. ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
    errors
  }
}
