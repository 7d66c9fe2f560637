import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { keepTableStatsOnce, keeperStatisticsTarget, upkeepFor, YOUNG_TABLE_ROWS } from "../../src/db/TableStats.js"
import { TestSql } from "../support/TestApp.js"
import { waitFor } from "../support/Wait.js"

describe("upkeepFor (autovacuum's default thresholds)", () => {
  const table = { table: "t", reltuples: 1000, modifiedSinceAnalyze: 0, deadTuples: 0, autovacuum: true }
  it("analyzes past 50 + 10% of the rows changed, and not before", () => {
    expect(upkeepFor({ ...table, modifiedSinceAnalyze: 150 })).toBe("none")
    expect(upkeepFor({ ...table, modifiedSinceAnalyze: 151 })).toBe("analyze")
  })
  it("treats a never-analysed table (reltuples -1) as empty: 51 changes are enough", () => {
    expect(upkeepFor({ ...table, reltuples: -1, modifiedSinceAnalyze: 50 })).toBe("none")
    expect(upkeepFor({ ...table, reltuples: -1, modifiedSinceAnalyze: 51 })).toBe("analyze")
  })
  it("vacuums past 50 + 20% dead rows only where autovacuum does not", () => {
    expect(upkeepFor({ ...table, deadTuples: 251, autovacuum: false })).toBe("vacuum-analyze")
    expect(upkeepFor({ ...table, deadTuples: 250, autovacuum: false })).toBe("none")
    expect(upkeepFor({ ...table, deadTuples: 10_000, autovacuum: true })).toBe("none")
  })
})

describe("keeperStatisticsTarget", () => {
  it("samples a young table with statistics target 10, a grown one with the server's own", () => {
    expect(keeperStatisticsTarget({ reltuples: -1 })).toBe(10)
    expect(keeperStatisticsTarget({ reltuples: YOUNG_TABLE_ROWS - 1 })).toBe(10)
    expect(keeperStatisticsTarget({ reltuples: YOUNG_TABLE_ROWS })).toBeUndefined()
  })
})

/** Waits until this table's statistics show `enough` (a backend publishes its counters about once a second). */
const statsShow = (table: string, enough: (s: { modified: number; dead: number }) => boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      `the statistics of ${table} to catch up`,
      Effect.map(sql<{ modified: number; dead: number }>`
        SELECT n_mod_since_analyze::bigint AS modified, n_dead_tup::bigint AS dead FROM pg_stat_user_tables WHERE relname = ${table}`, (r) => r[0]),
      { until: (s) => s !== undefined && enough(s), timeoutMs: 15_000, intervalMs: 100 }
    )).pipe(Effect.asVoid)

layer(TestSql, { timeout: 60_000, excludeTestServices: true })("the table statistics keeper on the real Postgres", (it) => {
  it.effect("analyzes a table that filled up, and a lookup by the unique key then plans on the unique index", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // The shape that bit the pipeline: a unique key and a list index sharing its (tenant, mode) prefix.
      yield* sql`CREATE TABLE stats_probe (id bigserial PRIMARY KEY, tenant_id text NOT NULL, mode text NOT NULL, reference text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (tenant_id, mode, reference))`
      yield* sql`CREATE INDEX stats_probe_list_idx ON stats_probe (tenant_id, mode, created_at DESC, id DESC)`
      yield* sql.withTransaction(sql`INSERT INTO stats_probe (tenant_id, mode, reference) SELECT 'ten_1', 'test', 'ref-' || g FROM generate_series(1, 5000) g`
        .pipe(Effect.zipRight(sql`SELECT pg_stat_force_next_flush()`)))
      yield* statsShow("stats_probe", (s) => s.modified >= 5000)

      const done = yield* keepTableStatsOnce
      expect(done.find((d) => d.table === "stats_probe")?.upkeep).toBe("analyze")
      const [probe] = yield* sql<{ analyzed: boolean }>`SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'stats_probe'`
      expect(probe!.analyzed).toBe(true)
      // The small sample, and only for that ANALYZE: a histogram of at most 11 bounds (target 10) for a column of
      // 5,000 distinct values, where the default target (100) gives 101; the connections' own setting is untouched.
      const [histogram] = yield* sql<{ bounds: number }>`
        SELECT array_length(histogram_bounds::text::text[], 1) AS bounds FROM pg_stats WHERE tablename = 'stats_probe' AND attname = 'reference'`
      expect(histogram!.bounds).toBeGreaterThan(1)
      expect(histogram!.bounds).toBeLessThanOrEqual(11)
      const settings = yield* Effect.forEach([1, 2, 3], () =>
        sql<{ untouched: boolean }>`SELECT setting = reset_val AS untouched FROM pg_settings WHERE name = 'default_statistics_target'`)
      for (const [s] of settings) expect(s!.untouched).toBe(true)

      const plan = yield* sql<Record<string, string>>`EXPLAIN SELECT p.reference FROM stats_probe p
        JOIN unnest(ARRAY['ten_1','ten_1']::text[], ARRAY['test','test']::text[], ARRAY['ref-7','ref-4000']::text[]) AS k(tenant_id, mode, reference)
          ON p.tenant_id = k.tenant_id AND p.mode = k.mode AND p.reference = k.reference`
      const text = plan.map((r) => Object.values(r)[0]).join("\n")
      expect(text).toContain("stats_probe_tenant_id_mode_reference_key")
      expect(text).not.toContain("stats_probe_list_idx")

      // Nothing changed since: nothing to do for it.
      expect((yield* keepTableStatsOnce).find((d) => d.table === "stats_probe")).toBeUndefined()
    }))

  it.effect("vacuums a table full of dead rows when autovacuum is off, and leaves that to autovacuum when it is on", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE stats_dead (id bigserial PRIMARY KEY, v int NOT NULL)`
      yield* sql.withTransaction(sql`INSERT INTO stats_dead (v) SELECT g FROM generate_series(1, 2000) g`.pipe(Effect.zipRight(sql`SELECT pg_stat_force_next_flush()`)))
      yield* statsShow("stats_dead", (s) => s.modified >= 2000)
      yield* keepTableStatsOnce
      yield* sql.withTransaction(sql`DELETE FROM stats_dead WHERE id % 2 = 0`.pipe(Effect.zipRight(sql`SELECT pg_stat_force_next_flush()`)))
      yield* statsShow("stats_dead", (s) => s.dead >= 1000)
      const [setting] = yield* sql<{ on: boolean }>`SELECT current_setting('autovacuum') = 'on' AS on`
      const done = yield* keepTableStatsOnce
      expect(done.find((d) => d.table === "stats_dead")?.upkeep).toBe(setting!.on ? "analyze" : "vacuum-analyze")
      if (!setting!.on) {
        const [dead] = yield* sql<{ n: number }>`SELECT n_dead_tup::bigint AS n FROM pg_stat_user_tables WHERE relname = 'stats_dead'`
        expect(dead!.n).toBeLessThan(1000)
      }
    }))
})
