/** Dates as people in Lagos read them: every timestamp shown in Africa/Lagos time. */

const dateTime = new Intl.DateTimeFormat("en-GB", {
  timeZone: "Africa/Lagos", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false
})
const dateOnly = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", day: "numeric", month: "short", year: "numeric" })

/** An ISO timestamp in Lagos time ("23 Nov 2026, 14:05 WAT"); a plain date ("2026-11-23") as that calendar day. */
export const lagos = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined || iso === "") return "—"
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) {
    const d = new Date(`${iso}T00:00:00Z`)
    return Number.isNaN(d.getTime()) ? iso : dateOnly.format(d)
  }
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : `${dateTime.format(d)} WAT`
}

// Lagos days for date ranges: Nigeria keeps West Africa Time (UTC+1) all year.
const WAT_MS = 60 * 60 * 1000
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/

/** Today's date in Lagos ("2026-05-14"), or the date of `at`. */
export const lagosDay = (at: Date = new Date()): string => new Date(at.getTime() + WAT_MS).toISOString().slice(0, 10)

/** The first day of `day`'s month ("2026-05-14" -> "2026-05-01"). */
export const monthStart = (day: string): string => `${day.slice(0, 8)}01`

/**
 * A Lagos day ("2026-05-01") as the instant a range bound means, as the API reads a date: as a `start` 00:00 WAT that
 * day, as an `end` 00:00 WAT the next day (so the day is included). Undefined for anything that is not a real date.
 */
export const lagosBound = (day: string, side: "start" | "end"): Date | undefined => {
  const m = DAY.exec(day)
  if (m === null) return undefined
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const utc = Date.UTC(y, mo - 1, d)
  const back = new Date(utc)
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined
  return new Date(utc + (side === "end" ? 24 * WAT_MS : 0) - WAT_MS)
}
