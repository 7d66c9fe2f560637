import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Schedule } from "effect"
import { PLAN_EACH_TIME } from "../../src/db/PreparedStatements.js"
import { dayOf } from "../../src/domain/InsightRollups.js"
import type { Mode } from "../../src/domain/Mode.js"
import { INSIGHTS, INSIGHTS_ACCOUNT, INSIGHTS_SCHEDULE } from "../outbox/Registry.js"
import { type ConsumedEvent, type Consumer, makeConsumerRunner } from "../outbox/Runner.js"
import { Billing } from "../billing/Billing.js"
import { cursorLoop, cursorPass } from "./InsightsCursor.js"
import { type AccountTouch, Rollups, type ScheduleTouch } from "./Rollups.js"


/**
 * The deposits (transactions) the outbox events `ids` name, by their reference. A probe of transactions' reference index
 * per event (LATERAL, LIMIT 1). As a join, Postgres hashed the whole transactions table on every pass once it held some
 * thousands of rows (the join key is an expression on the envelope, which it cannot estimate): a pass cost a scan of
 * every deposit ever made, 40-60 ms at 20,000 (issue 33, auto_explain in the bench), growing with the table. With the
 * tenant and mode as index conditions, a plan made while the table was small probed the tenant's rows instead
 * (transactions_list_idx, the reference as a filter): one pass took 6.7 s. So the reference is the only index key
 * offered, and the statement is planned on every execution (`PLAN_EACH_TIME`), for the table's size as it is then.
 */
export const depositsOfEvents = (sql: SqlClient.SqlClient, ids: ReadonlyArray<number>) =>
  sql<{ id: number; tenantId: string; mode: Mode; virtualAccountId: string | null; paidAt: Date; reviewedAt: Date | null }>`
    SELECT ${sql.literal(PLAN_EACH_TIME)} t.id, t.tenant_id, t.mode, t.virtual_account_id, t.paid_at, t.reviewed_at
    FROM outbox o CROSS JOIN LATERAL (
      SELECT t.id, t.tenant_id, t.mode, t.virtual_account_id, t.paid_at, t.reviewed_at FROM transactions t
      -- The tenant and mode as a filter only (IS NOT DISTINCT FROM is no index condition; both are NOT NULL): the
      -- reference is the one key an index can take, so no plan probes by tenant (transactions_list_idx).
      WHERE t.reference = o.envelope #>> '{data,transaction,reference}' AND (t.tenant_id, t.mode) IS NOT DISTINCT FROM (o.tenant_id, o.mode)
      LIMIT 1 -- the key is unique; the LIMIT keeps Postgres from flattening this back into a join
    ) t
    WHERE o.id = ANY(${ids}::bigint[])`

/**
 * The insights consumer's runner: one batch of events, in the runner's transaction, becomes one set-based update of the
 * roll-ups. Deposits and reviews come by commit horizon now (InsightsCursor.ts); the deposit events here are those
 * staged for this consumer before that change, drained once. A deposit (`deposit.reconciled`, `transaction.reviewed`)
 * is counted, or its collected part corrected, and its account recomputed (a receivable it fully pays counts as paid on
 * the deposit's day, or the review's); an account created, removed or refunded, and a billing schedule changed or a
 * period opened, come as internal events.
 *
 * What it reads of each event is taken by Postgres from the staged envelope (issue 33): the deposit's
 * reference, or the internal event's account and schedule ids. The runner hands it the events' columns only, so no
 * envelope crosses to the service and nothing is decoded (decoding the whole deposit to read one reference cost
 * about 37 µs a deposit). An event without them matches nothing and is passed over, as a malformed one would be.
 */
export const handleInsights = (events: ReadonlyArray<ConsumedEvent>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rollups = yield* Rollups
    const billing = yield* Billing
    const nowMs = yield* Clock.currentTimeMillis
    const depositIds: Array<number> = []
    const internalIds: Array<number> = []
    for (const e of events) (e.eventType === INSIGHTS_ACCOUNT || e.eventType === INSIGHTS_SCHEDULE ? internalIds : depositIds).push(e.outboxId)
    const accounts: Array<AccountTouch> = []
    const scheduleIds: Array<{ tenantId: string; mode: Mode; scheduleId: string }> = []
    if (internalIds.length > 0) {
      const rows = yield* sql<{ eventType: string; tenantId: string; mode: Mode; accountId: string | null; scheduleId: string | null }>`
        SELECT o.event_type, o.tenant_id, o.mode, o.envelope #>> '{data,accountId}' AS account_id, o.envelope #>> '{data,scheduleId}' AS schedule_id
        FROM outbox o WHERE o.id = ANY(${internalIds}::bigint[]) ORDER BY o.id`
      for (const r of rows) {
        if (r.accountId !== null) accounts.push({ tenantId: r.tenantId, mode: r.mode, accountId: r.accountId, atMs: nowMs })
        if (r.eventType === INSIGHTS_SCHEDULE && r.scheduleId !== null) scheduleIds.push({ tenantId: r.tenantId, mode: r.mode, scheduleId: r.scheduleId })
      }
    }
    if (depositIds.length > 0) {
      const rows = yield* depositsOfEvents(sql, depositIds)
      yield* rollups.applyTransactions(rows.map((r) => Number(r.id)))
      for (const r of rows) {
        if (r.virtualAccountId === null) continue
        accounts.push({
          tenantId: r.tenantId, mode: r.mode, accountId: r.virtualAccountId,
          atMs: Math.max(r.paidAt.getTime(), r.reviewedAt?.getTime() ?? 0)
        })
      }
    }
    yield* rollups.touchAccounts(accounts)
    if (scheduleIds.length > 0) {
      const days = new Map<string, number>()
      const touches: Array<ScheduleTouch> = []
      for (const s of scheduleIds) {
        const k = `${s.tenantId}|${s.mode}`
        if (!days.has(k)) days.set(k, dayOf(yield* billing.nowFor({ tenantId: s.tenantId, mode: s.mode })))
        touches.push({ ...s, day: days.get(k)! })
      }
      yield* rollups.touchSchedules(touches)
    }
  })

export const insightsConsumer: Consumer<SqlClient.SqlClient | Rollups | Billing> = {
  ...INSIGHTS,
  handle: handleInsights
}

/**
 * Builds the roll-ups once from the data that was here before them (`insight_state.built`), then leaves them to the
 * consumer. The build and the consumer may overlap: both recompute and add differences.
 */
export const buildOnce = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rollups = yield* Rollups
  const billing = yield* Billing
  const [state] = yield* sql<{ built: boolean }>`SELECT built FROM insight_state`.pipe(Effect.orDie)
  if (state?.built !== false) return
  const started = Date.now()
  yield* rollups.build((tenantId, mode) => Effect.map(billing.nowFor({ tenantId, mode }), dayOf))
  // The stamped deposits (a seeded benchmark's, say) are the cursor's: counted to the horizon before `built` is set, so
  // the figures are whole when it is. A pass another process holds is waited for.
  for (;;) {
    const pass = yield* cursorPass().pipe(Effect.orDie)
    if (pass.busy) yield* Effect.sleep("100 millis")
    else if (pass.counted === 0) break
  }
  yield* sql`UPDATE insight_state SET built = true, built_at = now()`.pipe(Effect.orDie)
  yield* Effect.logInfo("insight roll-ups built from the existing data", { ms: Date.now() - started })
})

/**
 * The insights consumer's loops (the runner's for internal events, the cursor's for deposits and reviews), and the
 * one-time build beside it. All three write through the roll-ups' writer lock, so they take turns.
 */
export const InsightsLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    // Insights may lag a second: fewer, fuller batches cost the deposit path less CPU than a pass every 200 ms.
    const runner = yield* makeConsumerRunner(insightsConsumer, { pollMs: 1_000 })
    // Deposits and reviews: read by commit horizon (InsightsCursor.ts), at the same pace.
    yield* cursorLoop({ pollMs: 1_000, idlePollMs: runner.options.idlePollMs })
    // In its own fiber: a build over a big existing data set must not hold up the service's start.
    // A failed build (the database gone for a while) is logged and tried again; the consumer starts either way.
    const build = buildOnce.pipe(
      Effect.tapErrorCause((cause) => Effect.logError("insight roll-ups: the build from the existing data failed; retrying", cause)),
      Effect.sandbox,
      Effect.retry(Schedule.exponential("1 second", 2).pipe(Schedule.either(Schedule.spaced("1 minute")))),
      Effect.ignore
    )
    yield* Effect.forkScoped(build)
    yield* runner.start
  }).pipe(Effect.annotateLogs({ component: "insights" }))
)
