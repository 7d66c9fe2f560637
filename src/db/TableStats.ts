import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { pacedPasses } from "../Pacing.js"
import { outageLog } from "../OutageLog.js"

/** One user table as `pg_stat_user_tables` and `pg_class` see it. */
export interface TableActivity {
  readonly table: string
  /** Postgres's row estimate; -1 (never analysed) counts as 0. */
  readonly reltuples: number
  readonly modifiedSinceAnalyze: number
  readonly deadTuples: number
  /** Whether autovacuum looks after this table (the server setting and the table's own autovacuum_enabled). */
  readonly autovacuum: boolean
}

export type Upkeep = "analyze" | "vacuum-analyze" | "none"

/**
 * What a table needs, by autovacuum's own default thresholds: ANALYZE once more than 50 + 10% of its rows changed
 * since the last one; VACUUM (then ANALYZE) once more than 50 + 20% are dead, when autovacuum does not look after it.
 *
 * Analyzing is not left to autovacuum even when it runs: it wakes once a minute, and a burst into a young table is
 * planned from no statistics at all until then. The deposit pipeline looks rows up by a key that two indexes share a
 * prefix of; without statistics Postgres may pick the wrong one and read a tenant's every row per lookup, a cost that grows
 * with the table (docs/performance.md, "Statistics").
 */
export const upkeepFor = (t: TableActivity): Upkeep => {
  const rows = Math.max(0, t.reltuples)
  if (!t.autovacuum && t.deadTuples > 50 + 0.2 * rows) return "vacuum-analyze"
  if (t.modifiedSinceAnalyze > 50 + 0.1 * rows) return "analyze"
  return "none"
}

/**
 * Every 5 s while a pass finds a table to refresh (a burst of writes); after passes that find none the wait doubles up
 * to a minute, autovacuum's own nap, so an idle service does not read the statistics views every 5 s.
 */
export const TABLE_STATS_PACE = { baseMs: 5_000, idleMaxMs: 60_000 } as const

/**
 * Below this many rows a table is young: it grows by a tenth between most passes, so the keeper analyses it often, and
 * with a small sample (statistics target 10: Postgres samples 300 rows per unit of target, so 3,000 rows instead of
 * the default 100's 30,000). That sample is what the pipeline's lookups need (which index serves a key). With the full
 * one, the keeper's two passes during a 20,000-deposit benchmark took 2.2 s of a Postgres backend, most of it ANALYZE
 * (after that run, on an idle machine: transactions 266 ms, inbox 200, outbox 137, ledger 118; with target 10: 40, 18,
 * 30, 13). A grown table changes by a tenth rarely, and gets the server's own target then, as autovacuum would give it.
 */
export const YOUNG_TABLE_ROWS = 100_000
export const YOUNG_TABLE_STATISTICS_TARGET = 10

/** The statistics target the keeper's ANALYZE of a table uses; undefined: the server's own (`default_statistics_target`). */
export const keeperStatisticsTarget = (t: Pick<TableActivity, "reltuples">): number | undefined =>
  t.reltuples < YOUNG_TABLE_ROWS ? YOUNG_TABLE_STATISTICS_TARGET : undefined

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Reads every user table's activity and runs the ANALYZE or VACUUM each needs; returns what it did. */
export const keepTableStatsOnce = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<TableActivity>`
    SELECT s.relname AS "table", c.reltuples::float8 AS reltuples, s.n_mod_since_analyze::bigint AS modified_since_analyze,
      s.n_dead_tup::bigint AS dead_tuples,
      (current_setting('autovacuum') = 'on' AND NOT coalesce('autovacuum_enabled=false' = ANY(c.reloptions), false)) AS autovacuum
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()`
  const done: Array<{ readonly table: string; readonly upkeep: Upkeep }> = []
  for (const t of tables) {
    const upkeep = upkeepFor(t)
    if (upkeep === "none") continue
    const table = quoteIdent(t.table)
    // VACUUM cannot run in a transaction block; the ANALYZE after it then runs in one of its own, so that the
    // smaller sample of a young table is a SET LOCAL that ends with it (the pool's connection keeps its settings).
    if (upkeep === "vacuum-analyze") yield* sql.unsafe(`VACUUM ${table}`)
    const target = keeperStatisticsTarget(t)
    yield* target === undefined
      ? sql.unsafe(`ANALYZE ${table}`)
      : sql.withTransaction(sql.unsafe(`SET LOCAL default_statistics_target = ${target}`).pipe(Effect.zipRight(sql.unsafe(`ANALYZE ${table}`))))
    done.push({ table: t.table, upkeep })
  }
  if (done.length > 0) yield* Effect.logDebug(`table statistics refreshed: ${done.map((d) => `${d.table} (${d.upkeep})`).join(", ")}`)
  return done
})

/** Keeps planner statistics fresh (and tables vacuumed where autovacuum is off) while the service runs. */
export const TableStatsKeeperLive = Layer.scopedDiscard(
  Effect.flatMap(outageLog("table statistics"), (outages) =>
    pacedPasses(TABLE_STATS_PACE, keepTableStatsOnce, (done) => done.length > 0, { outages }).pipe(Effect.forkScoped))
)
