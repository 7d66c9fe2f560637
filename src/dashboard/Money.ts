/**
 * Naira as people type and read it, kobo as the API takes it. Parsing is string arithmetic (no floats): "1,500.50"
 * is exactly 150050 kobo. Pure, shared by the browser bundle and the unit tests.
 */

export type ParsedNaira = { readonly ok: true; readonly kobo: number } | { readonly ok: false; readonly error: string }

const MAX_KOBO = BigInt(Number.MAX_SAFE_INTEGER)
// Whole naira: plain digits, or digits in groups of three separated by commas; then at most two kobo digits.
const NAIRA = /^(?:(\d{1,3}(?:,\d{3})+)|(\d+))(?:\.(\d{1,2}))?$/

/**
 * Parses an amount in naira ("1500", "1,500.5", "₦1,500.50", "NGN 20") into integer kobo. Refuses anything else:
 * negatives, more than two decimals, misplaced commas, exponents, letters, and amounts beyond what the API takes.
 * `allowZero` (default false) accepts 0.
 */
export const parseNaira = (input: string, options: { readonly allowZero?: boolean } = {}): ParsedNaira => {
  const text = input.trim().replace(/^(?:₦|NGN)\s*/i, "")
  if (text === "") return { ok: false, error: "Enter an amount in naira, such as 1,500.00" }
  if (text.startsWith("-")) return { ok: false, error: "The amount cannot be negative" }
  const m = NAIRA.exec(text)
  if (m === null) {
    if (/^\d[\d,]*\.\d{3,}$/.test(text)) return { ok: false, error: "Use at most two digits after the point (kobo)" }
    return { ok: false, error: "Enter an amount in naira, such as 1,500.00 (digits, commas between thousands, two decimals at most)" }
  }
  const whole = (m[1] ?? m[2]!).replace(/,/g, "")
  const fraction = (m[3] ?? "").padEnd(2, "0")
  const kobo = BigInt(whole) * 100n + BigInt(fraction)
  if (kobo > MAX_KOBO) return { ok: false, error: "The amount is too large" }
  if (kobo === 0n && options.allowZero !== true) return { ok: false, error: "The amount must be more than ₦0.00" }
  return { ok: true, kobo: Number(kobo) }
}

const group = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",")

/** Integer kobo as naira with kobo: 150050 -> "₦1,500.50"; negative amounts get a leading minus. */
export const formatNaira = (kobo: number): string => {
  if (!Number.isSafeInteger(kobo)) return "—"
  const sign = kobo < 0 ? "-" : ""
  const abs = Math.abs(kobo)
  return `${sign}₦${group(String(Math.floor(abs / 100)))}.${String(abs % 100).padStart(2, "0")}`
}

/** Integer kobo as the naira text a person would type back ("1500.50"), for prefilling an input. */
export const nairaInput = (kobo: number): string => `${Math.floor(kobo / 100)}.${String(kobo % 100).padStart(2, "0")}`

/** Basis points as a percentage with two decimals: 9250 -> "92.50%". */
export const formatBps = (bps: number): string => `${Math.floor(bps / 100)}.${String(Math.abs(bps) % 100).padStart(2, "0")}%`
