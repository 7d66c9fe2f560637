/**
 * Times as a payer in Nigeria reads them: West Africa Time (Africa/Lagos), UTC+1 all year (no daylight saving), written
 * `29 Nov 2026, 14:05 WAT` (day without a leading zero, the month's English abbreviation, 24-hour clock). Computed from
 * the fixed offset, not the host's time zone or locale data, so every process writes the same text.
 */

const WAT_OFFSET_MS = 60 * 60 * 1000
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const

const twoDigits = (n: number) => String(n).padStart(2, "0")

/** `29 Nov 2026, 14:05 WAT` for an instant (epoch milliseconds; seconds are dropped, not rounded). */
export const formatWat = (epochMs: number): string => {
  if (!Number.isFinite(epochMs)) throw new RangeError(`formatWat: not an instant: ${epochMs}`)
  const t = new Date(Math.floor(epochMs / 60_000) * 60_000 + WAT_OFFSET_MS)
  return `${t.getUTCDate()} ${MONTHS[t.getUTCMonth()]} ${t.getUTCFullYear()}, ${twoDigits(t.getUTCHours())}:${twoDigits(t.getUTCMinutes())} WAT`
}
