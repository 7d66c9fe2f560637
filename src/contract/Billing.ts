import { Schema } from "effect"
import { BILLING_INTERVALS, DUE_OFFSET_MAX_DAYS } from "../domain/Billing.js"
import { PositiveKobo } from "../domain/Money.js"
import { Body, CaseInsensitiveLiteral, ModeSchema, Reference, Timestamp, CalendarDate } from "./Schemas.js"

// Recurring billing on the wire (DESIGN.md "Wire shapes for billing, checkout, insights and the copilot").

export const CreateSchedule = Body({
  accountRef: Reference("accountRef", 64),
  interval: CaseInsensitiveLiteral("interval", BILLING_INTERVALS),
  amountKobo: PositiveKobo,
  dueOffsetDays: Schema.optional(Schema.Int.annotations({ message: () => `dueOffsetDays must be an integer from 0 to ${DUE_OFFSET_MAX_DAYS}` }).pipe(
    Schema.between(0, DUE_OFFSET_MAX_DAYS, { message: () => `dueOffsetDays must be an integer from 0 to ${DUE_OFFSET_MAX_DAYS}` })
  )),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(200, { message: () => "description must be at most 200 characters" }))),
  reference: Reference("reference", 64)
}).annotations({ identifier: "CreateSchedule" })

export const Schedule = Schema.Struct({
  id: Schema.String,
  accountRef: Schema.String,
  interval: Schema.Literal(...BILLING_INTERVALS),
  amountKobo: Schema.Int,
  dueOffsetDays: Schema.Int,
  description: Schema.NullOr(Schema.String),
  reference: Schema.String,
  status: Schema.Literal("Active", "Paused", "Cancelled"),
  nextPeriodStart: Schema.NullOr(Timestamp),
  nextAmountKobo: Schema.Int,
  createdAt: Timestamp,
  mode: ModeSchema
}).annotations({ identifier: "BillingSchedule" })

export const Period = Schema.Struct({
  id: Schema.String,
  scheduleId: Schema.String,
  index: Schema.Int,
  periodStart: Timestamp,
  periodEnd: Timestamp,
  dueDate: CalendarDate,
  amountKobo: Schema.Int,
  paidKobo: Schema.Int,
  outstandingKobo: Schema.Int,
  status: Schema.Literal("Open", "Due", "Paid", "Overdue", "Cancelled"),
  paidAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "BillingPeriod" })

export const SandboxClock = Schema.Struct({ now: Timestamp, offsetSeconds: Schema.Int, mode: ModeSchema }).annotations({ identifier: "SandboxClock" })
export const AdvanceSandboxClock = Body({
  seconds: Schema.Int.annotations({ message: () => "seconds must be an integer from 1 to 31622400 (a year)" }).pipe(
    Schema.between(1, 31_622_400, { message: () => "seconds must be an integer from 1 to 31622400 (a year)" })
  )
}).annotations({ identifier: "AdvanceSandboxClock" })

/** The problem codes recurring billing answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const BILLING_PROBLEMS = {
  schedule_not_found: 404,
  schedule_exists: 409,
  schedule_cancelled: 409,
  account_not_billable: 409
} as const satisfies Record<string, number>
