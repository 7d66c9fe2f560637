import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Queue } from "effect"
import { Metrics } from "../../src/Metrics.js"
import { outageLog } from "../../src/OutageLog.js"
import { INSIGHTS_TURN, tryTurn } from "../outbox/Registry.js"
import { OutboxWakeups } from "../outbox/Wakeups.js"
import { Rollups } from "./Rollups.js"
import { direct } from "../../src/db/Direct.js"

/**
 * The insights consumer's deposits, read by commit horizon (issue 33). A deposit, and a later change of what the
 * roll-ups count of it (its status, account or review: migration 0024's trigger), stamps the transaction's row with the
 * writing transaction's id (`insight_xid`). Every transaction id below the horizon, `pg_snapshot_xmin` of the pass's
 * own snapshot, has ended, so the rows stamped below it are all committed and visible, or never will be: the
 * window from the cursor up to the horizon is final, and is counted in the pass's transaction together with moving the
 * cursor. Nothing is lost when transactions commit out of id order (a row stamped by a transaction still running
 * waits for the horizon to pass it), and nothing is counted twice (the cursor moves with the counts, past the last row
 * counted, and a row is read again only when a change stamps it anew, ahead of the cursor).
 *
 * What a row counts as: new, unless it carries a record of what was counted of it (`insight_tx`), which migration
 * 0029's trigger writes when a row the cursor has passed changes; then the difference. So a deposit that never changes
 * costs the roll-ups no record at all (issue 33: a row and a key entry per deposit before).
 *
 * This replaced a pending row per deposit for the insights consumer, claimed and deleted by the runner, and a lookup
 * of each event's transaction by the reference in its envelope (a parse of the whole envelope): together about a third
 * of what the roll-ups cost a deposit. Account and schedule changes still come as internal events through the
 * runner (InsightsConsumer.ts), which also drains any deposit events staged for it before this change.
 *
 * The horizon is the server's oldest running writer: a writing transaction left open anywhere on the server, in any
 * database, holds the roll-ups back until it ends; it delays them and loses nothing. (A read-only one, such as a long
 * `pg_dump`, has no transaction id and does not count.)
 */

/**
 * The transactions the cursor has not passed yet, as a condition on `t` (a `transactions` row): the deposits and review
 * decisions still to count. The consumer's lag (src/http/MetricsRoute.ts) and the tests that wait for it read it.
 */
export const NOT_COUNTED_YET =
  "t.insight_xid IS NOT NULL AND (t.insight_xid, t.id) > ((SELECT xid FROM insight_cursor), (SELECT tx_id FROM insight_cursor))"

/** Rows per batch: a pass counts batches back to back while they come full. */
export const CURSOR_BATCH = 2_000

export interface CursorPass {
  /** Rows counted. */
  readonly counted: number
  /** Another pass had the insights turn: nothing was looked at. */
  readonly busy: boolean
  /** Committed rows wait beyond the horizon (an older transaction is still open): worth looking again soon. */
  readonly behind: boolean
}

/** One batch, in one transaction: the window from the cursor to the horizon (at most `batchSize` rows), counted. */
export const cursorBatch = (batchSize: number = CURSOR_BATCH) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rollups = yield* Rollups
    if (!(yield* tryTurn(sql, INSIGHTS_TURN))) return { counted: 0, busy: true, behind: false, full: false }
    // The cursor and the horizon first. Every transaction below the horizon had ended before this statement's snapshot,
    // so any later snapshot (the next statement's) sees all their rows: the window read next is final. `behind`: a
    // committed row waits beyond the horizon (ORDER BY ... LIMIT 1, so the plan is a probe of the index, not a scan).
    const [c] = yield* direct(sql<{ xid: string; txId: number; horizon: string; behind: boolean }>`
      SELECT c.xid::text AS xid, c.tx_id, pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
        (SELECT b.insight_xid FROM transactions b WHERE b.insight_xid IS NOT NULL AND b.insight_xid >= pg_snapshot_xmin(pg_current_snapshot())
          ORDER BY b.insight_xid LIMIT 1) IS NOT NULL AS behind
      FROM insight_cursor c`)
    if (c === undefined) return { counted: 0, busy: false, behind: false, full: false }
    // The window (a range of the (insight_xid, id) index, in its order), counted in one statement; then the accounts
    // it touches, recomputed.
    const w = yield* rollups.countWindow({ xid: c.xid, txId: Number(c.txId) }, c.horizon, batchSize)
    if (w.counted === 0 || w.last === undefined) return { counted: 0, busy: false, behind: c.behind, full: false }
    yield* rollups.touchAccounts(w.touches)
    // A full batch may have left rows of its last transaction id: the cursor stops at its last row. Otherwise the whole
    // window to the horizon is counted.
    const full = w.counted >= batchSize
    const next = full ? w.last : { xid: c.horizon, txId: 0 }
    yield* direct(sql`UPDATE insight_cursor SET xid = ${next.xid}::xid8, tx_id = ${next.txId}`)
    return { counted: w.counted, busy: false, behind: c.behind, full }
  }).pipe((batch) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(batch)))

/** One pass: batches while they come full. */
export const cursorPass = (batchSize: number = CURSOR_BATCH): Effect.Effect<CursorPass, unknown, SqlClient.SqlClient | Rollups> =>
  Effect.gen(function* () {
    let counted = 0
    for (;;) {
      const b = yield* cursorBatch(batchSize)
      counted += b.counted
      if (!b.full) return { counted, busy: b.busy, behind: b.behind }
    }
  })

/**
 * The loop: a pass, then `pollMs` while passes find work (or another pass has the turn, or rows wait beyond the
 * horizon); once they find nothing, it waits for a nudge (a deposit or a review staged in this process, or another's
 * through Postgres: services/outbox/Wakeups.ts) or `idlePollMs`, and looks again `pollMs` after a nudge too (the
 * nudging transaction may not have committed yet). Idle is idle. A failed pass (Postgres away) goes to the consumers'
 * outage log and is tried again a second later.
 */
export const cursorLoop = (options: { readonly pollMs: number; readonly idlePollMs: number }) =>
  Effect.gen(function* () {
    const hub = yield* OutboxWakeups
    const metrics = yield* Metrics
    const outages = yield* outageLog("consumers", "consumer passes")
    const wake = yield* Queue.sliding<void>(1)
    yield* Effect.acquireRelease(
      Effect.sync(() => hub.listen({ eventTypes: ["deposit.reconciled", "transaction.reviewed"] }, () => void Queue.unsafeOffer(wake, undefined))),
      (off) => Effect.sync(off)
    )
    const pass = cursorPass().pipe(
      Effect.tap((r) => Effect.sync(() => r.counted > 0 && metrics.consumerEvents.inc({ consumer: "insights", outcome: "handled" }, r.counted))),
      Effect.zipLeft(outages.succeeded("insights")),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(outages.failed(cause, "insights"), undefined)
      )
    )
    const loop = Effect.gen(function* () {
      let recheck = false
      for (;;) {
        const r = yield* pass
        if (r === undefined) {
          yield* Effect.sleep(Duration.seconds(1))
          continue
        }
        if (r.counted > 0 || r.busy || r.behind || recheck) {
          recheck = false
          yield* Effect.sleep(Duration.millis(options.pollMs))
          continue
        }
        recheck = yield* Effect.raceFirst(Queue.take(wake).pipe(Effect.as(true)), Effect.sleep(Duration.millis(options.idlePollMs)).pipe(Effect.as(false)))
      }
    })
    yield* Effect.forkScoped(loop)
  }).pipe(Effect.annotateLogs({ component: "insights" }))
