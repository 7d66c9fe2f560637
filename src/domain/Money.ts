import { Schema } from "effect"

const KOBO_HINT = "integer kobo (1 naira = 100 kobo)"

/** What was sent instead of a number, in words a 400 can carry (never throws: a bigint has no JSON). */
const describeSent = (actual: unknown): string => {
  if (typeof actual === "string") return "a string"
  if (typeof actual === "bigint") return "a bigint"
  if (actual === undefined) return "that"
  try {
    return JSON.stringify(actual) ?? "that"
  } catch {
    return "that"
  }
}

/**
 * An amount of naira in kobo (1 NGN = 100 kobo): a JSON integer, never a float or a string.
 * Each refinement carries its own message so a 400 says exactly what was wrong.
 */
export const Kobo = Schema.Number.annotations({
  message: (issue) => `must be a JSON number in ${KOBO_HINT}, not ${describeSent(issue._tag === "Type" ? issue.actual : undefined)}`
}).pipe(
  Schema.filter((n) => Number.isFinite(n), { message: () => `must be a finite number in ${KOBO_HINT}` }),
  Schema.filter((n) => Number.isInteger(n), {
    message: () => `must be ${KOBO_HINT}; a fraction was given (did you send naira?)`
  }),
  Schema.filter((n) => n >= 0, { message: () => `must be ${KOBO_HINT} and not negative` }),
  Schema.filter((n) => n <= Number.MAX_SAFE_INTEGER, { message: () => `must be ${KOBO_HINT} within the safe integer range` }),
  Schema.brand("Kobo"),
  Schema.annotations({
    identifier: "Kobo",
    description: `Money as ${KOBO_HINT}.`,
    jsonSchema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: `Money as ${KOBO_HINT}.` }
  })
)
export type Kobo = typeof Kobo.Type

/** A strictly positive amount of kobo, for money that moves. */
export const PositiveKobo = Kobo.pipe(
  Schema.filter((n) => n > 0, { message: () => `must be ${KOBO_HINT} greater than zero` }),
  Schema.annotations({
    identifier: "PositiveKobo",
    description: `Money that moves, as ${KOBO_HINT}: at least 1.`,
    jsonSchema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: `Money that moves, as ${KOBO_HINT}: at least 1.` }
  })
)

/** Postgres int8 arrives as text; parse it into a safe integer of kobo. */
export const koboFromDb = (value: string | number | bigint): number => {
  const n = typeof value === "number" ? value : Number(value)
  if (!Number.isSafeInteger(n)) throw new Error(`kobo value out of safe range: ${String(value)}`)
  return n
}
