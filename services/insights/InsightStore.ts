import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { RUN_RATE_WINDOW_DAYS } from "../../src/domain/Insights.js"
import type { Scope } from "../../src/domain/Mode.js"

/**
 * The SQL of the insight reads: the roll-ups the insights consumer keeps (`insight_days`, `insight_due_days`,
 * `insight_customers`, `insight_receivables`), each read scoped by the caller's tenant and mode. Days are Lagos day
 * numbers (src/domain/InsightRollups.ts).
 */
export const makeInsightStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** Per roll-up key (except the schedule's), the count and amount over the days `lo`..`hi`. */
  const dayTotals = (scope: Scope, lo: number, hi: number) =>
    sql<{ key: string; count: number; amountKobo: number }>`SELECT key, sum(count)::bigint AS count, sum(amount_kobo)::bigint AS amount_kobo
          FROM insight_days WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND key <> 'sched' AND day BETWEEN ${lo} AND ${hi}
          GROUP BY key`

  /** What fell due over the days `lo`..`hi`, and what of it was collected. */
  const dueTotals = (scope: Scope, lo: number, hi: number) =>
    sql<{ expected: number | null; collected: number | null }>`SELECT sum(expected_kobo)::bigint AS expected, sum(collected_kobo)::bigint AS collected
          FROM insight_due_days WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND due_day BETWEEN ${lo} AND ${hi}`

  /** Every due day with something still outstanding: how many receivables and how much. */
  const outstandingDueDays = (scope: Scope) =>
    sql<{ dueDay: number; count: number; outstanding: number }>`
        SELECT due_day, outstanding_count AS count, expected_kobo - collected_kobo AS outstanding FROM insight_due_days
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND outstanding_count > 0`

  /** What is scheduled to fall due on the `days` days from `today`. */
  const scheduledDays = (scope: Scope, today: number, days: number) =>
    sql<{ day: number; amountKobo: number }>`SELECT day, amount_kobo FROM insight_days
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND key = 'sched' AND day >= ${today} AND day < ${today + days}`

  /** What was collected over the run-rate window ending `today`. */
  const trailingCollected = (scope: Scope, today: number) =>
    sql<{ amount: number | null }>`SELECT sum(amount_kobo)::bigint AS amount FROM insight_days
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND key = 'collected'
            AND day > ${today - RUN_RATE_WINDOW_DAYS} AND day <= ${today}`

  /** The customers with something expected, most outstanding first: `take` and one more (is there another page). */
  const customerPage = (scope: Scope, take: number) =>
    sql<{ customerId: string; name: string; email: string | null; expectedKobo: number; outstandingKobo: number }>`
        SELECT c.customer_id, cu.name, cu.email, c.expected_kobo, c.outstanding_kobo FROM insight_customers c JOIN customers cu ON cu.id = c.customer_id
        WHERE c.tenant_id = ${scope.tenantId} AND c.mode = ${scope.mode} AND c.expected_kobo > 0
        ORDER BY c.outstanding_kobo DESC, c.customer_id LIMIT ${take + 1}`

  /** The customers' active accounts, oldest first. */
  const accountRefsOf = (ids: ReadonlyArray<string>) =>
    sql<{ customerId: string; accountRef: string }>`SELECT customer_id, account_ref FROM virtual_accounts
          WHERE customer_id = ANY(${ids}::text[]) AND status = 'Active' ORDER BY created_at, id`

  /** The customers' receivables, for their scores. */
  const receivablesOf = (ids: ReadonlyArray<string>) =>
    sql<{ customerId: string; dueDay: number; amountKobo: number; collectedKobo: number; paidDay: number | null }>`
          SELECT customer_id, due_day, amount_kobo, collected_kobo, paid_day FROM insight_receivables WHERE customer_id = ANY(${ids}::text[])`

  return { dayTotals, dueTotals, outstandingDueDays, scheduledDays, trailingCollected, customerPage, accountRefsOf, receivablesOf } as const
})
