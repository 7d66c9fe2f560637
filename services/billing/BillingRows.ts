import * as crypto from "node:crypto"
import { Conflict, NotFound } from "../../src/contract/Problems.js"
import { type BillingInterval, type LagosDate, periodCalendar, type PeriodState } from "../../src/domain/Billing.js"
import type { Scope } from "../../src/domain/Mode.js"

// Billing's rows as Postgres has them, and as the wire shows them (src/contract/Billing.ts).

export interface ScheduleRow {
  readonly id: string
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly virtualAccountId: string
  readonly accountRef: string
  readonly reference: string
  readonly requestFingerprint: string
  readonly interval: BillingInterval
  readonly amountKobo: number
  readonly nextAmountKobo: number | null
  readonly dueOffsetDays: number
  readonly description: string | null
  readonly status: "Active" | "Paused" | "Cancelled"
  readonly anchorDate: string
  readonly nextK: number
  readonly periodsOpened: number
  readonly baseKobo: number
  readonly createdAt: Date
}

export interface PeriodRow {
  readonly id: string
  readonly scheduleId: string
  readonly index: number
  readonly periodStart: Date
  readonly periodEnd: Date
  readonly dueDate: string
  readonly dueAt: Date
  readonly overdueAt: Date
  readonly amountKobo: number
  readonly cancelled: boolean
  readonly paidAt: Date | null
  readonly dueNotified: boolean
  readonly paidNotified: boolean
  readonly overdueNotified: boolean
}

export const anchorOf = (s: Pick<ScheduleRow, "anchorDate">): LagosDate => {
  const [y, m, d] = s.anchorDate.split("-").map(Number) as [number, number, number]
  return { y, m, d }
}

/** When the `k`-th period (0-based) of a schedule starts. */
export const startOf = (s: Pick<ScheduleRow, "anchorDate" | "interval">, k: number) => new Date(periodCalendar(anchorOf(s), s.interval, k + 1, 0).startMs)

export const toSchedule = (s: ScheduleRow) => ({
  id: s.id,
  accountRef: s.accountRef,
  interval: s.interval,
  amountKobo: s.amountKobo,
  dueOffsetDays: s.dueOffsetDays,
  description: s.description,
  reference: s.reference,
  status: s.status,
  nextPeriodStart: s.status === "Cancelled" ? null : new Date(periodCalendar(anchorOf(s), s.interval, s.nextK + 1, 0).startMs).toISOString(),
  nextAmountKobo: s.nextAmountKobo ?? s.amountKobo,
  createdAt: s.createdAt.toISOString(),
  mode: s.mode
})

export const toPeriod = (p: PeriodRow, st: PeriodState) => ({
  id: p.id,
  scheduleId: p.scheduleId,
  index: p.index,
  periodStart: p.periodStart.toISOString(),
  periodEnd: p.periodEnd.toISOString(),
  dueDate: p.dueDate,
  amountKobo: p.amountKobo,
  paidKobo: st.paidKobo,
  outstandingKobo: st.outstandingKobo,
  status: st.status,
  paidAt: st.status === "Paid" ? p.paidAt?.toISOString() ?? null : null
})

export type Schedule = ReturnType<typeof toSchedule>
export type Period = ReturnType<typeof toPeriod>

export interface CreateSchedule {
  readonly accountRef: string
  readonly interval: BillingInterval
  readonly amountKobo: number
  readonly dueOffsetDays?: number | undefined
  readonly description?: string | undefined
  readonly reference: string
}

export const notFound = (id: string) => new NotFound({ code: "schedule_not_found", message: `No billing schedule ${JSON.stringify(id)} in this tenant and mode.` })
export const reused = (reference: string) =>
  new Conflict({ code: "reference_reused", message: `reference ${JSON.stringify(reference)} already names a schedule with different details.` })

export const fingerprintOf = (i: CreateSchedule) =>
  crypto.createHash("sha256").update(JSON.stringify([i.accountRef, i.interval, i.amountKobo, i.dueOffsetDays ?? 0, i.description ?? null])).digest("hex")
