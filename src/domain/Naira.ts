import { Either } from "effect"

/**
 * Naira as providers write them (Monnify: JSON numbers such as `3000` or `1500.5`, decimal strings such as
 * `"2990.00"`, PROVIDERS.md B3/B4) to integer kobo, exactly: from the decimal text, never through a float
 * multiplication. A number is read through its shortest round-trip text (`String(1500.5)` is `"1500.5"`), so a
 * number that is not exactly a decimal of at most two places (`0.1 + 0.2`) is refused, as is any fraction finer than
 * a kobo (`"1.005"`), a negative, an exponent, or anything past the safe integer range. Trailing zeros are fine
 * (`"2990.000"`).
 */
export const nairaToKobo = (value: unknown): Either.Either<number, string> => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : typeof value === "string" ? value.trim() : undefined
  if (text === undefined) return Either.left(`a naira amount must be a number or a decimal string, not ${value === null ? "null" : typeof value}`)
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (!m) return Either.left(`${JSON.stringify(value)} is not a plain decimal amount of naira`)
  const whole = m[1]!
  const fraction = (m[2] ?? "").replace(/0+$/, "")
  if (fraction.length > 2) return Either.left(`${JSON.stringify(value)} has a fraction finer than a kobo`)
  const kobo = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0") || "0")
  if (kobo > BigInt(Number.MAX_SAFE_INTEGER)) return Either.left(`${JSON.stringify(value)} is beyond the largest amount we hold`)
  return Either.right(Number(kobo))
}

/** Kobo as the naira JSON number a provider wants (`150050` → `1500.5`): the shortest text of kobo/100 is exact. */
export const koboToNaira = (kobo: number): number => {
  if (!Number.isSafeInteger(kobo) || kobo < 0) throw new Error(`not an amount of kobo: ${kobo}`)
  return Number(`${Math.floor(kobo / 100)}.${String(kobo % 100).padStart(2, "0")}`)
}
