/**
 * An integer setting from the environment (operators' knobs read at start-up: money-out timings, settlement runs):
 * the fallback when unset or blank, and a start-up error naming the variable when it is not a safe integer of at
 * least `min`.
 */
export const integerFromEnv = (name: string, fallback: number, min: 0 | 1, unit = "") => {
  const raw = process.env[name]
  const n = raw === undefined || raw.trim() === "" ? fallback : Number(raw)
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error(`${name} must be a ${min === 0 ? "non-negative" : "positive"} integer${unit ? ` of ${unit}` : ""}, got ${JSON.stringify(raw)}`)
  }
  return n
}
