import { SqlClient } from "@effect/sql"
import { TransactionConnection } from "@effect/sql/SqlClient"
import { Context, Effect } from "effect"

/** Runs `self` on a connection of its own, outside the caller's transaction (if any). */
export const elsewhere = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.mapInputContext(self, (c) => Context.omit(TransactionConnection)(c))

/**
 * Whether a row is locked by another transaction right now: another connection (outside the caller's transaction, if
 * any) tries `FOR UPDATE NOWAIT` on it. "held" when Postgres refuses (lock_not_available), "free" when it locks (the
 * row exists, or not yet for others to see) and lets go at once. `table` and `column` are the test's own constants.
 */
export const rowLock = (table: string, column: string, value: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM ${sql(table)} WHERE ${sql(column)} = ${value} FOR UPDATE NOWAIT`.pipe(
      sql.withTransaction,
      Effect.as("free" as const),
      Effect.catchAll((e) => ((e.cause as { code?: string } | undefined)?.code === "55P03" ? Effect.succeed("held" as const) : Effect.die(e))),
      elsewhere
    ))
