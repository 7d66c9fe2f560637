import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { pgClientLayer } from "../../src/db/Database.js"
import { waitFor } from "./Wait.js"

// What the tests that stop a service process in the middle of a step share: a client aimed at the process, a lock
// held from a connection of the test's own (to stop the service at a chosen statement), and a wait for it to block.

/** The test's HttpClient and SqlClient, aimed at a service process and its database. */
export const atProcess = (baseUrl: string, dbUrl: string) =>
  Layer.merge(
    Layer.effect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl)))).pipe(
      Layer.provide(NodeHttpClient.layerWithoutAgent),
      Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false }))
    ),
    pgClientLayer(Redacted.make(dbUrl), 2)
  )

/** A connection of the test's own that ran `statement` in an open transaction (so keeps its locks) until `release`. */
export const holdLock = (dbUrl: string, statement: string) =>
  Effect.promise(async () => {
    const c = new pg.Client({ connectionString: dbUrl })
    await c.connect()
    await c.query("BEGIN")
    await c.query(statement)
    return { release: Effect.promise(() => c.query("COMMIT").then(() => c.end())) }
  })

/** Waits until `n` of the database's sessions wait on a lock in a statement like `pattern` (bounded: 20 s). */
export const lockWaiters = (name: string, pattern: string, n: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    waitFor(
      `${n} sessions waiting on a lock in ${pattern}`,
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name} AND wait_event_type = 'Lock'
        AND query ILIKE ${pattern}`.pipe(Effect.map((r) => r[0]!.n)),
      { until: (waiting) => waiting === n, timeoutMs: 20_000, intervalMs: 50 }
    ))
