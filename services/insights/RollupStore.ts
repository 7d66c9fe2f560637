import type { SqlClient, Statement } from "@effect/sql"
import type { BillingInterval } from "../../src/domain/Billing.js"
import { collectedSql, daySql, riskBandSql } from "../../src/domain/InsightRollups.js"
import type { Mode } from "../../src/domain/Mode.js"
import { awaitTurn, INSIGHTS_TURN } from "../outbox/Registry.js"
import { direct } from "../../src/db/Direct.js"

/** Where the insights cursor stands: every transaction row stamped before (xid, id) is counted. */
export interface CursorPosition { readonly xid: string; readonly txId: number }

/** What a change adds to one `insight_days` row. */
export interface DayDelta { tenantId: string; mode: string; key: string; day: number; count: number; amount: number }
/** What a change adds to one `insight_due_days` row. */
export interface DueDelta { tenantId: string; mode: string; dueDay: number; receivables: number; outstanding: number; expected: number; collected: number }
/** What a change adds to one `insight_customers` row. */
export interface CustomerDelta { tenantId: string; mode: string; customerId: string; expected: number; outstanding: number }

/** One `insight_receivables` row: an account's receivable as the roll-ups last counted it. */
export interface ReceivableRow {
  accountId: string; seq: number; customerId: string; dueDay: number; amountKobo: number; collectedKobo: number; paidDay: number | null
}

/**
 * The `insight_days` rows that new deposits add, as SQL over `from` (a FROM clause whose alias `s` has `tenant_id`,
 * `mode`, `day`, `reconciliation_status`, `band`, `amount_kobo`, `collected` and `pending`): (tenant_id, mode, key, day,
 * count, amount), grouped by day, status and band BEFORE they are spread over their four keys, so the spread and the
 * grouping after it handle a few rows a day, not four rows a deposit (a 2,000-deposit window: 10 ms instead of 17).
 */
const freshDayRows = (from: string): string => `SELECT f.tenant_id, f.mode, k.key, f.day, k.count, k.amount FROM (
    SELECT s.tenant_id, s.mode, s.day, s.reconciliation_status, s.band, count(*) AS n, sum(s.amount_kobo) AS amount,
      sum(s.collected) AS collected, count(*) FILTER (WHERE s.pending) AS pending
    FROM ${from} GROUP BY s.tenant_id, s.mode, s.day, s.reconciliation_status, s.band
  ) f CROSS JOIN LATERAL (VALUES ('rs:' || f.reconciliation_status, f.n, f.amount), ('risk:' || f.band, f.n, 0::numeric),
    ('collected', 0::bigint, f.collected), ('pending', f.pending, 0::numeric)) AS k(key, count, amount)`

/**
 * The SQL of the insight roll-ups (migrations/0016_insights.ts): one function per statement, on the caller's
 * `SqlClient` so each runs in its caller's transaction. The additive writes take their rows already in key order.
 */
export const makeRollupStore = (sql: SqlClient.SqlClient) => {
  /** Adds each delta to its `insight_days` row (`rows` in key order, none all zero). */
  const addDays = (rows: ReadonlyArray<DayDelta>) =>
    direct(sql`INSERT INTO insight_days (tenant_id, mode, key, day, count, amount_kobo)
      SELECT * FROM unnest(${rows.map((r) => r.tenantId)}::text[], ${rows.map((r) => r.mode)}::text[], ${rows.map((r) => r.key)}::text[],
        ${rows.map((r) => r.day)}::int[], ${rows.map((r) => r.count)}::bigint[], ${rows.map((r) => r.amount)}::bigint[])
      ON CONFLICT (tenant_id, mode, key, day) DO UPDATE SET count = insight_days.count + excluded.count,
        amount_kobo = insight_days.amount_kobo + excluded.amount_kobo`)

  /** Counts the deposits the condition selects that are not counted yet: one statement, whatever their number. */
  const countNew = (where: Statement.Fragment) =>
    direct(sql`WITH src AS (
          SELECT t.id, t.tenant_id, t.mode, ${sql.literal(daySql("t.paid_at"))} AS day, t.reconciliation_status, t.amount_kobo,
            ${sql.literal(riskBandSql("t"))} AS band,
            (${sql.literal(collectedSql("t"))}) AS collected, t.status = 'PendingReview' AS pending
          FROM transactions t WHERE ${where}
        ),
        -- NOT EXISTS rather than ON CONFLICT: the roll-ups have one writer at a time (writerLock), and a speculative
        -- insertion costs a second WAL record per row.
        ins AS (INSERT INTO insight_tx (id, collected_kobo, pending) SELECT id, collected, pending FROM src
          WHERE NOT EXISTS (SELECT 1 FROM insight_tx x WHERE x.id = src.id) ORDER BY id RETURNING id)
      INSERT INTO insight_days (tenant_id, mode, key, day, count, amount_kobo)
      SELECT d.tenant_id, d.mode, d.key, d.day, sum(d.count), sum(d.amount) FROM (${sql.literal(freshDayRows("src s JOIN ins USING (id)"))}) d
      GROUP BY d.tenant_id, d.mode, d.key, d.day
      ORDER BY d.tenant_id, d.mode, d.key, d.day
      ON CONFLICT (tenant_id, mode, key, day) DO UPDATE SET count = insight_days.count + excluded.count,
        amount_kobo = insight_days.amount_kobo + excluded.amount_kobo`)

  /**
   * Counts the transactions `selection` picks (the rest of `SELECT ... FROM transactions t`: its WHERE, ORDER BY and
   * LIMIT) in ONE statement. A row with a record of what was counted of it (`insight_tx`) gets its collected and
   * pending contribution corrected (the record locked, in the selection's order, and updated); a row without one is
   * counted as new, on its paid day (status, risk band, collected, pending). `recordNew`: whether a row counted as new
   * gets its record now. The cursor's rows do not (migration 0029: the trigger writes the record of a counted row
   * when the row changes, so a deposit that never changes costs no record); rows from before the cursor (no stamp),
   * which the drained pending events count, do, as they always did. Answers one row per account the rows touch (the
   * latest of their paid and review times) and one summary row (`accountId` null): the rows counted and the last one's
   * (xid, id) in cursor order. A day row a new deposit counts on is written even when its sum is zero, as `countNew`
   * writes it; a correction's only when it changes something.
   * The insights cursor's window used to go to the service, its ids coming back in two more statements that each read
   * every row again (issue 33: the roll-ups cost the bench's deposit path about a fourteenth of its throughput).
   */
  const countSelected = (selection: Statement.Fragment, recordNew: boolean) =>
    direct(sql<{ accountId: string | null; tenantId: string | null; mode: Mode | null; at: Date | null; counted: number; lastXid: string | null; lastId: number | null }>`
      WITH w AS MATERIALIZED (
          SELECT t.id, t.insight_xid, t.tenant_id, t.mode, t.virtual_account_id, t.paid_at, t.reviewed_at,
            ${sql.literal(daySql("t.paid_at"))} AS day, t.reconciliation_status, t.amount_kobo, ${sql.literal(riskBandSql("t"))} AS band,
            (${sql.literal(collectedSql("t"))}) AS collected, t.status = 'PendingReview' AS pending
          FROM transactions t ${selection}
        ),
        -- Counted before: a probe of insight_tx per row of the window (its primary key), the rows locked.
        x AS MATERIALIZED (
          SELECT k.id, k.collected_kobo AS was, k.pending AS pending_was FROM w
          CROSS JOIN LATERAL (SELECT i.id, i.collected_kobo, i.pending FROM insight_tx i WHERE i.id = w.id FOR UPDATE) k
        ),
        moved AS MATERIALIZED (
          SELECT w.id, w.tenant_id, w.mode, w.day, w.collected AS now, x.was, w.pending AS pending_now, x.pending_was
          FROM w JOIN x ON x.id = w.id WHERE w.collected <> x.was OR w.pending <> x.pending_was
        ),
        recounted AS (UPDATE insight_tx i SET collected_kobo = m.now, pending = m.pending_now FROM moved m WHERE i.id = m.id),
        -- Not counted before: counted as new (and recorded, when recordNew).
        new_rows AS (SELECT w.id, w.collected, w.pending FROM w WHERE NOT EXISTS (SELECT 1 FROM x WHERE x.id = w.id)),
        ${recordNew ? sql`recorded AS (INSERT INTO insight_tx (id, collected_kobo, pending) SELECT id, collected, pending FROM new_rows ORDER BY id),` : sql``}
        days AS (
          INSERT INTO insight_days (tenant_id, mode, key, day, count, amount_kobo)
          SELECT d.tenant_id, d.mode, d.key, d.day, sum(d.count), sum(d.amount) FROM (
            SELECT n.*, true AS fresh FROM (${sql.literal(freshDayRows("w s JOIN new_rows USING (id)"))}) n
            UNION ALL
            SELECT m.tenant_id, m.mode, k.key, m.day, k.count, k.amount, false FROM moved m
              CROSS JOIN LATERAL (VALUES ('collected', 0::bigint, (m.now - m.was)::numeric),
                ('pending', (m.pending_now::int - m.pending_was::int)::bigint, 0::numeric)) AS k(key, count, amount)
          ) d
          GROUP BY d.tenant_id, d.mode, d.key, d.day
          HAVING bool_or(d.fresh) OR sum(d.count) <> 0 OR sum(d.amount) <> 0
          ORDER BY d.tenant_id, d.mode, d.key, d.day
          ON CONFLICT (tenant_id, mode, key, day) DO UPDATE SET count = insight_days.count + excluded.count,
            amount_kobo = insight_days.amount_kobo + excluded.amount_kobo
        )
      SELECT w.virtual_account_id AS account_id, w.tenant_id, w.mode, max(greatest(w.paid_at, coalesce(w.reviewed_at, w.paid_at))) AS at,
        NULL::int AS counted, NULL::text AS last_xid, NULL::int8 AS last_id
      FROM w WHERE w.virtual_account_id IS NOT NULL GROUP BY w.virtual_account_id, w.tenant_id, w.mode
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, c.n::int, l.insight_xid::text, l.id
      FROM (SELECT count(*) AS n FROM w) c LEFT JOIN LATERAL (SELECT insight_xid, id FROM w ORDER BY insight_xid DESC, id DESC LIMIT 1) l ON true`)

  /** The insights cursor's batch: the rows stamped after `after` and below `horizon`, at most `limit`, in cursor order. */
  const countWindow = (after: CursorPosition, horizon: string, limit: number) =>
    countSelected(sql`WHERE t.insight_xid IS NOT NULL AND (t.insight_xid, t.id) > (${after.xid}::xid8, ${after.txId}::bigint)
      AND t.insight_xid < ${horizon}::xid8 ORDER BY t.insight_xid, t.id LIMIT ${limit}`, false)

  /**
   * The transactions of `ids` from before the cursor (no stamp), counted (in id order). A stamped row is the cursor's
   * (migration 0029): counting it here too would count it twice, since the cursor keeps no record of a row it counted.
   */
  const countIds = (ids: ReadonlyArray<number>) =>
    countSelected(sql`WHERE t.id = ANY(${ids}::bigint[]) AND t.insight_xid IS NULL ORDER BY t.id`, true)

  /** The deposits from before the cursor (no stamp) with ids in [lo, hi) not counted yet, counted. */
  const countNewRange = (lo: number, hi: number) => countNew(sql`t.id >= ${lo} AND t.id < ${hi} AND t.insight_xid IS NULL`)

  /**
   * The roll-ups' one writer at a time (issue 33): the insights consumer's turn, the transaction-level advisory lock its
   * passes take (services/outbox/Runner.ts `turn`), taken here by every recompute. A pass holds it already (taking it
   * again is immediate); a chunk of the one-time build waits for it. So no two recomputes of an account or a schedule
   * interleave, and no per-account row lock is written: locking each account's `insight_accounts` row cost a WAL
   * record and a statement per account and pass (51 B a deposit in the bench).
   */
  const writerLock = () => awaitTurn(sql, INSIGHTS_TURN)

  const activeAccounts = (ids: ReadonlyArray<string>) =>
    direct(sql<{
      id: string; customerId: string; expectedAmountKobo: number | null; amountPaidKobo: number; createdAt: Date; expiryDateUtc: Date | null
    }>`SELECT id, customer_id, expected_amount_kobo, amount_paid_kobo, created_at, expiry_date_utc FROM virtual_accounts
      WHERE id = ANY(${ids}::text[]) AND status = 'Active'`)

  /** The accounts' billing periods with an amount, each account's in schedule and period order. */
  const billedPeriods = (ids: ReadonlyArray<string>) =>
    direct(sql<{ accountId: string; amountKobo: number; dueAt: Date }>`
      SELECT s.virtual_account_id AS account_id, p.amount_kobo, p.due_at FROM billing_periods p JOIN billing_schedules s ON s.id = p.schedule_id
      WHERE s.virtual_account_id = ANY(${ids}::text[]) AND p.amount_kobo > 0 ORDER BY s.virtual_account_id, s.created_at, s.id, p.index`)

  const countedReceivables = (ids: ReadonlyArray<string>) =>
    direct(sql<ReceivableRow>`
      SELECT account_id, seq, customer_id, due_day, amount_kobo, collected_kobo, paid_day FROM insight_receivables
      WHERE account_id = ANY(${ids}::text[]) ORDER BY account_id, seq`)

  const deleteReceivables = (deletes: ReadonlyArray<{ accountId: string; seq: number }>) =>
    direct(sql`DELETE FROM insight_receivables r USING unnest(${deletes.map((d) => d.accountId)}::text[], ${deletes.map((d) => d.seq)}::int[]) AS u(a, s)
      WHERE r.account_id = u.a AND r.seq = u.s`)

  const upsertReceivables = (upserts: ReadonlyArray<ReceivableRow>) =>
    direct(sql`INSERT INTO insight_receivables (account_id, seq, customer_id, due_day, amount_kobo, collected_kobo, paid_day)
      SELECT * FROM unnest(${upserts.map((u) => u.accountId)}::text[], ${upserts.map((u) => u.seq)}::int[], ${upserts.map((u) => u.customerId)}::text[],
        ${upserts.map((u) => u.dueDay)}::int[], ${upserts.map((u) => u.amountKobo)}::bigint[], ${upserts.map((u) => u.collectedKobo)}::bigint[],
        ${upserts.map((u) => u.paidDay)}::int[])
      ON CONFLICT (account_id, seq) DO UPDATE SET customer_id = excluded.customer_id, due_day = excluded.due_day, amount_kobo = excluded.amount_kobo,
        collected_kobo = excluded.collected_kobo, paid_day = excluded.paid_day`)

  /** Adds each delta to its `insight_due_days` row (`dueRows` in key order). */
  const addDueDays = (dueRows: ReadonlyArray<DueDelta>) =>
    direct(sql`INSERT INTO insight_due_days (tenant_id, mode, due_day, receivables, outstanding_count, expected_kobo, collected_kobo)
      SELECT * FROM unnest(${dueRows.map((d) => d.tenantId)}::text[], ${dueRows.map((d) => d.mode)}::text[], ${dueRows.map((d) => d.dueDay)}::int[],
        ${dueRows.map((d) => d.receivables)}::bigint[], ${dueRows.map((d) => d.outstanding)}::bigint[], ${dueRows.map((d) => d.expected)}::bigint[],
        ${dueRows.map((d) => d.collected)}::bigint[])
      ON CONFLICT (tenant_id, mode, due_day) DO UPDATE SET receivables = insight_due_days.receivables + excluded.receivables,
        outstanding_count = insight_due_days.outstanding_count + excluded.outstanding_count,
        expected_kobo = insight_due_days.expected_kobo + excluded.expected_kobo,
        collected_kobo = insight_due_days.collected_kobo + excluded.collected_kobo`)

  /** Adds each delta to its `insight_customers` row (`customerRows` in customer id order). */
  const addCustomers = (customerRows: ReadonlyArray<CustomerDelta>) =>
    direct(sql`INSERT INTO insight_customers (customer_id, tenant_id, mode, expected_kobo, outstanding_kobo)
      SELECT * FROM unnest(${customerRows.map((c) => c.customerId)}::text[], ${customerRows.map((c) => c.tenantId)}::text[],
        ${customerRows.map((c) => c.mode)}::text[], ${customerRows.map((c) => c.expected)}::bigint[], ${customerRows.map((c) => c.outstanding)}::bigint[])
      ON CONFLICT (customer_id) DO UPDATE SET expected_kobo = insight_customers.expected_kobo + excluded.expected_kobo,
        outstanding_kobo = insight_customers.outstanding_kobo + excluded.outstanding_kobo`)

  /** Each schedule's row here (made at first sight; `list` in schedule id order), answering the dues it held. */
  const lockSchedules = (list: ReadonlyArray<{ scheduleId: string; tenantId: string; mode: Mode }>) =>
    direct(sql<{ scheduleId: string; days: Array<number>; amounts: Array<number | string> }>`
      INSERT INTO insight_schedules (schedule_id, tenant_id, mode, days, amounts)
      SELECT s, t, m, '{}', '{}' FROM unnest(${list.map((t) => t.scheduleId)}::text[], ${list.map((t) => t.tenantId)}::text[], ${list.map((t) => t.mode)}::text[]) AS u(s, t, m)
      ON CONFLICT (schedule_id) DO UPDATE SET days = insight_schedules.days RETURNING schedule_id, days, amounts`)

  const schedulesOf = (ids: ReadonlyArray<string>) =>
    direct(sql<{
      id: string; status: "Active" | "Paused" | "Cancelled"; interval: BillingInterval; anchorDate: string; dueOffsetDays: number;
      amountKobo: number; nextAmountKobo: number | null; nextK: number
    }>`SELECT id, status, interval, anchor_date::text AS anchor_date, due_offset_days, amount_kobo, next_amount_kobo, next_k
      FROM billing_schedules WHERE id = ANY(${ids}::text[])`)

  /** The schedules' opened periods still owed something. */
  const openedPeriods = (ids: ReadonlyArray<string>) =>
    direct(sql<{ scheduleId: string; amountKobo: number; dueAt: Date }>`
      SELECT schedule_id, amount_kobo, due_at FROM billing_periods WHERE schedule_id = ANY(${ids}::text[]) AND NOT cancelled AND amount_kobo > 0`)

  const setScheduleDues = (id: string, days: ReadonlyArray<number>, amounts: ReadonlyArray<number>) =>
    direct(sql`UPDATE insight_schedules SET days = ${days}::int[], amounts = ${amounts}::bigint[] WHERE schedule_id = ${id}`)

  // A full build's walks.

  const transactionIdBounds = () => sql<{ lo: number | null; hi: number | null }>`SELECT min(id) AS lo, max(id) AS hi FROM transactions`

  const accountsAfter = (after: string, limit: number) =>
    direct(sql<{ id: string; tenantId: string; mode: Mode; lastPaidAt: Date | null }>`
      SELECT va.id, va.tenant_id, va.mode,
        (SELECT max(t.paid_at) FROM transactions t WHERE t.virtual_account_id = va.id AND t.kind = 'inflow') AS last_paid_at
      FROM virtual_accounts va WHERE va.id > ${after} ORDER BY va.id LIMIT ${limit}`)

  const schedulesAfter = (after: string, limit: number) =>
    direct(sql<{ id: string; tenantId: string; mode: Mode }>`
      SELECT id, tenant_id, mode FROM billing_schedules WHERE id > ${after} ORDER BY id LIMIT ${limit}`)

  return {
    addDays, countWindow, countIds, countNewRange, writerLock, activeAccounts, billedPeriods, countedReceivables,
    deleteReceivables, upsertReceivables, addDueDays, addCustomers, lockSchedules, schedulesOf, openedPeriods, setScheduleDues,
    transactionIdBounds, accountsAfter, schedulesAfter
  } as const
}

export type RollupStore = ReturnType<typeof makeRollupStore>
