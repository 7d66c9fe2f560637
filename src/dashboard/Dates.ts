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
