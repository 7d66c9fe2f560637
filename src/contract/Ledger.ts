import { ParseResult, Schema } from "effect"
import { JOURNAL_REASONS } from "../domain/Journals.js"
import { rangeBound } from "../domain/Statement.js"
import { PageParams, Timestamp } from "./Schemas.js"

// Reading the ledger (DESIGN.md, "Reading the ledger, events and statements"; docs/ledger.md).

/** The schema with a description (typed by its parts: `Schema.Schema.Any` would leave the context `unknown`, which the typed client refuses). */
const described = <A, I, R>(schema: Schema.Schema<A, I, R>, description: string): Schema.Schema<A, I, R> => schema.annotations({ description })

/**
 * `from` / `to` of a ledger read: a date-time with its offset (`2026-05-01T09:30:00Z`) is that instant; a date alone
 * (`2026-05-01`) a calendar day in Lagos (WAT): `from` its start, `to` its end, so `to=2026-05-31` includes the 31st.
 * `from` is inclusive, `to` exclusive. Anything else is a 400.
 */
const RangeBound = (side: "start" | "end") =>
  Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
    strict: true,
    decode: (text, _, ast) => {
      const d = rangeBound(text.trim(), side)
      return d === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, text, "must be a date such as 2026-05-01 (a day in Lagos time) or a date-time with its offset such as 2026-05-01T09:30:00Z"))
        : ParseResult.succeed(d)
    },
    encode: (d) => ParseResult.succeed(d.toISOString())
  }).annotations({
    jsonSchema: {
      type: "string",
      anyOf: [{ format: "date" }, { format: "date-time" }],
      description: side === "start"
        ? "Inclusive start: a date-time with its offset (2026-05-01T09:30:00Z), or a date (2026-05-01) meaning 00:00 that day in Lagos (WAT, UTC+1)."
        : "Exclusive end: a date-time with its offset, or a date (2026-05-31) meaning the end of that day in Lagos (WAT), so the day is included."
    }
  })

export const RangeParams = { from: Schema.optional(RangeBound("start")), to: Schema.optional(RangeBound("end")) }

export const LedgerEntriesParams = Schema.Struct({
  accountRef: Schema.optional(Schema.String),
  ...RangeParams,
  ...PageParams
})

export const JournalReason = Schema.Literal(...JOURNAL_REASONS)

export const LedgerEntry = Schema.Struct({
  id: described(Schema.String, "The entry's id (`le_` and 22 characters): the page key (`startingAfter`). Opaque: it says nothing about how many entries exist."),
  journalId: described(Schema.String, "The journal the entry belongs to; every journal's entries sum to zero."),
  account: described(Schema.String, "The ledger account. Per virtual account the name carries its accountRef (`customer_funds:order-1001`, `escrow:order-1001`, `review_pending:order-1001`)."),
  amountKobo: described(Schema.Int, "Signed kobo: a debit is positive, a credit negative."),
  reason: described(JournalReason, "Why the journal was posted (docs/ledger.md lists every reason)."),
  reference: described(Schema.String, "What the journal is about: a deposit's reference, a transfer's merchantTxRef, or a settlement's id."),
  createdAt: described(Timestamp, "When the entry was posted (ISO-8601, UTC).")
}).annotations({ identifier: "LedgerEntry" })
export type LedgerEntry = typeof LedgerEntry.Type

export const StatementFigures = Schema.Struct({
  balanceKobo: described(Schema.Int, "What the service holds for the customer: free + held."),
  freeKobo: described(Schema.Int, "Free money (customer_funds): not held, not settled, not refunded."),
  heldKobo: described(Schema.Int, "Held money: holds (escrow) and deposits awaiting review (review_pending).")
}).annotations({ identifier: "StatementFigures" })

export const StatementMovement = Schema.Struct({
  createdAt: described(Timestamp, "When the journal was posted (ISO-8601, UTC)."),
  journalId: described(Schema.String, "The journal."),
  reason: described(JournalReason, "Why it was posted."),
  reference: described(Schema.String, "What it is about: a deposit's reference, a transfer's merchantTxRef, or a settlement's id."),
  amountKobo: described(Schema.Int, "The change to the balance: positive money in, negative money out (0 for a hold or a release)."),
  freeChangeKobo: described(Schema.Int, "The change to the free part."),
  heldChangeKobo: described(Schema.Int, "The change to the held part."),
  balanceKobo: described(Schema.Int, "The balance after this movement."),
  freeBalanceKobo: described(Schema.Int, "The free part after this movement."),
  heldBalanceKobo: described(Schema.Int, "The held part after this movement.")
}).annotations({ identifier: "StatementMovement" })

export const Statement = Schema.Struct({
  accountRef: described(Schema.String, "The virtual account."),
  nuban: described(Schema.String, "Its account number."),
  from: described(Schema.NullOr(Timestamp), "The statement's inclusive start (ISO-8601), null from the account's beginning."),
  to: described(Timestamp, "The statement's exclusive end (ISO-8601): the `to` asked for, or when it was made."),
  opening: described(StatementFigures, "The figures at `from` (all zero from the account's beginning)."),
  movements: described(Schema.Array(StatementMovement), "Every movement in the range, oldest first, with the running figures."),
  closing: described(StatementFigures, "The figures at `to`: the opening plus every movement, to the kobo.")
}).annotations({ identifier: "Statement" })
export type Statement = typeof Statement.Type

/** Reading the ledger adds no problem codes: an unknown accountRef is accounts' `virtual_account_not_found`. */
export const LEDGER_PROBLEMS = {} as const satisfies Record<string, number>
