import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Runs `body` in one transaction and counts the rows of `table` it updated, and how many of those updates were HOT.
 * Postgres's per-transaction counters hold the connection's not yet reported counts (earlier transactions' too), so
 * the figure is the difference across `body`.
 */
export const updatesIn = <A, E, R>(sql: SqlClient.SqlClient, table: string, body: Effect.Effect<A, E, R>) => {
  const counts = sql<{ updated: number; hot: number }>`
    SELECT pg_stat_get_xact_tuples_updated(${table}::regclass)::int AS updated,
      pg_stat_get_xact_tuples_hot_updated(${table}::regclass)::int AS hot`.pipe(Effect.map((r) => r[0]!))
  return sql.withTransaction(Effect.gen(function* () {
    const before = yield* counts
    const result = yield* body
    const after = yield* counts
    return { result, updated: after.updated - before.updated, hot: after.hot - before.hot }
  }))
}
