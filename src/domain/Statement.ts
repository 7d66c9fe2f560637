import type { JournalDescription } from "./Journals.js"

/**
 * A virtual account's statement: the money the service holds for that customer, its opening figure, each journal that
 * moved it with the running figures, and its closing figure. The balance is what the account's three ledger accounts
 * hold (liabilities, so the negated sum of their entries): free = customer_funds, held = escrow (holds) +
 * review_pending (deposits awaiting review), balance = free + held. A hold moves money from free to held and leaves the
 * balance as it is. Opening + every movement = closing, to the kobo, by construction.
 */

export interface Figures {
  readonly balanceKobo: number
  readonly freeKobo: number
  readonly heldKobo: number
}

/** What a journal (or the entries before a date) posted to one virtual account's accounts: signed ledger sums (debit +). */
export interface AccountSums {
  readonly customerFundsKobo: number
  readonly escrowKobo: number
  readonly reviewPendingKobo: number
}

export interface StatementJournal {
  readonly journalId: string
  readonly createdAt: string
  readonly sums: AccountSums
  readonly description: JournalDescription
}

export interface StatementLine extends JournalDescription {
  readonly createdAt: string
  readonly journalId: string
  /** The change to the balance: + money in for the customer, - money out. */
  readonly amountKobo: number
  readonly freeChangeKobo: number
  readonly heldChangeKobo: number
  readonly balanceKobo: number
  readonly freeBalanceKobo: number
  readonly heldBalanceKobo: number
}

/** Liabilities: the customer's money is the negated sum (written `0 - x`, so nothing is ever -0). */
export const figuresOf = (s: AccountSums): Figures => {
  const freeKobo = 0 - s.customerFundsKobo
  const heldKobo = 0 - s.escrowKobo - s.reviewPendingKobo
  return { balanceKobo: freeKobo + heldKobo, freeKobo, heldKobo }
}

/** The movements after `opening`, in the order given, each with the figures after it; journals that move nothing are left out. */
export const statementLines = (
  opening: Figures,
  journals: ReadonlyArray<StatementJournal>
): { readonly lines: ReadonlyArray<StatementLine>; readonly closing: Figures } => {
  let free = opening.freeKobo
  let held = opening.heldKobo
  const lines: Array<StatementLine> = []
  for (const j of journals) {
    const change = figuresOf(j.sums)
    if (change.freeKobo === 0 && change.heldKobo === 0) continue
    free += change.freeKobo
    held += change.heldKobo
    lines.push({
      createdAt: j.createdAt, journalId: j.journalId, reason: j.description.reason, reference: j.description.reference,
      amountKobo: change.balanceKobo, freeChangeKobo: change.freeKobo, heldChangeKobo: change.heldKobo,
      balanceKobo: free + held, freeBalanceKobo: free, heldBalanceKobo: held
    })
  }
  return { lines, closing: { balanceKobo: free + held, freeKobo: free, heldKobo: held } }
}

// ---------------------------------------------------------------------------------------------------------------
// Date ranges: a date is a Lagos calendar day
// ---------------------------------------------------------------------------------------------------------------

/** Nigeria keeps West Africa Time (UTC+1) all year. */
const WAT_MS = 60 * 60 * 1000
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i

/**
 * A range bound from its text: a date-time with its offset (`2026-05-01T09:30:00Z`, `...+01:00`) is that instant; a
 * date alone (`2026-05-01`) is a calendar day in Lagos: as a `start` its first instant (00:00 WAT), as an `end` the
 * first instant after it (so `to=2026-05-31` includes the 31st). Undefined for anything else.
 */
export const rangeBound = (text: string, side: "start" | "end"): Date | undefined => {
  const d = DATE.exec(text)
  if (d !== null) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])]
    const utc = Date.UTC(y, m - 1, day)
    const back = new Date(utc)
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== day) return undefined
    return new Date(utc + (side === "end" ? 24 * WAT_MS : 0) - WAT_MS)
  }
  if (!DATE_TIME.test(text)) return undefined
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? undefined : new Date(ms)
}

// ---------------------------------------------------------------------------------------------------------------
// CSV (RFC 4180)
// ---------------------------------------------------------------------------------------------------------------

/** One field: quoted (inner quotes doubled) when it holds a comma, a quote, CR or LF. */
export const csvField = (value: string | number | null): string => {
  const s = value === null ? "" : String(value)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, "\"\"")}"` : s
}

/** Rows as RFC 4180 text: fields joined by commas, every record ended by CRLF. */
export const csvText = (rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string =>
  rows.map((r) => r.map(csvField).join(",") + "\r\n").join("")

/** Kobo as naira text for people: `150050` -> `1,500.50`, `-5000` -> `-50.00`. */
export const nairaText = (kobo: number): string => {
  if (!Number.isSafeInteger(kobo)) throw new Error(`not an amount of kobo: ${kobo}`)
  const abs = Math.abs(kobo)
  const whole = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return `${kobo < 0 ? "-" : ""}${whole}.${String(abs % 100).padStart(2, "0")}`
}

export const STATEMENT_CSV_HEADER = [
  "date", "reason", "reference", "journal_id", "amount_kobo", "free_change_kobo", "held_change_kobo",
  "balance_kobo", "free_balance_kobo", "held_balance_kobo", "amount_naira", "balance_naira"
] as const

/**
 * The statement as CSV: a header row, an `opening_balance` row (dated `from`, empty when the statement starts at the
 * account's beginning), one row per movement, a `closing_balance` row (dated `to`, or when the statement was made).
 */
export const statementCsv = (s: {
  readonly from: string | null
  readonly to: string
  readonly opening: Figures
  readonly movements: ReadonlyArray<StatementLine>
  readonly closing: Figures
}): string => {
  const balanceRow = (date: string | null, reason: string, f: Figures) =>
    [date, reason, null, null, null, null, null, f.balanceKobo, f.freeKobo, f.heldKobo, null, nairaText(f.balanceKobo)]
  return csvText([
    STATEMENT_CSV_HEADER,
    balanceRow(s.from, "opening_balance", s.opening),
    ...s.movements.map((m) => [
      m.createdAt, m.reason, m.reference, m.journalId, m.amountKobo, m.freeChangeKobo, m.heldChangeKobo,
      m.balanceKobo, m.freeBalanceKobo, m.heldBalanceKobo, nairaText(m.amountKobo), nairaText(m.balanceKobo)
    ]),
    balanceRow(s.to, "closing_balance", s.closing)
  ])
}
