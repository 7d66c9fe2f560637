import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { NOT_COUNTED_YET } from "../../services/insights/InsightsCursor.js"
import { AppConfigTag } from "../Config.js"
import { Metrics, type MetricsShape } from "../Metrics.js"
import { problemResponse } from "./Problem.js"

/** The most rows one scrape counts per table: the gauges read from Postgres stay cheap however large a backlog grows. */
export const GAUGE_ROW_CAP = 1_000_000
/** How long a scrape waits for the Postgres gauges before it answers without them. */
const GAUGE_READ_TIMEOUT = "2 seconds"

/** Constant time whatever the lengths: both sides hashed first, then compared with timingSafeEqual. */
const sameSecret = (given: string, expected: string) =>
  crypto.timingSafeEqual(crypto.createHash("sha256").update(given).digest(), crypto.createHash("sha256").update(expected).digest())

const bearerOf = (req: HttpServerRequest.HttpServerRequest) => {
  const h = req.headers["authorization"]
  const m = h === undefined ? null : /^Bearer\s+(.+)$/i.exec(h.trim())
  return m === null ? undefined : m[1]!
}

/**
 * The gauges that live in Postgres, in ONE statement bounded per table (GAUGE_ROW_CAP rows) and in time: each
 * consumer's pending events (its lag) and dead letters, and the outbox's backlog (every consumer's pending rows). The
 * insights consumer's lag adds the transactions past its cursor (services/insights/InsightsCursor.ts: deposits and
 * reviews stage no pending row for it); the backlog counts outbox rows only.
 * A scrape that cannot read them (Postgres away) leaves them out and says so (`collections_metrics_database_read_ok 0`).
 */
const readDatabaseGauges = (sql: SqlClient.SqlClient, m: MetricsShape) =>
  sql<{ kind: string; consumer: string; n: number }>`
    SELECT 'pending' AS kind, consumer, count(*)::int AS n FROM (SELECT consumer FROM outbox_pending LIMIT ${GAUGE_ROW_CAP}) p GROUP BY consumer
    UNION ALL
    SELECT 'dead' AS kind, consumer, count(*)::int AS n FROM (SELECT consumer FROM consumer_dead_letters LIMIT ${GAUGE_ROW_CAP}) d GROUP BY consumer
    UNION ALL
    SELECT 'cursor' AS kind, 'insights' AS consumer, count(*)::int AS n FROM (
      SELECT 1 FROM transactions t WHERE ${sql.literal(NOT_COUNTED_YET)} LIMIT ${GAUGE_ROW_CAP}) c`.pipe(
    Effect.timeout(GAUGE_READ_TIMEOUT),
    Effect.map((rows) => {
      m.consumerPending.reset()
      m.consumerDeadLetters.reset()
      let backlog = 0
      const pending = new Map<string, number>()
      for (const r of rows) {
        if (r.kind === "dead") m.consumerDeadLetters.set({ consumer: r.consumer }, Number(r.n))
        else pending.set(r.consumer, (pending.get(r.consumer) ?? 0) + Number(r.n))
        if (r.kind === "pending") backlog += Number(r.n)
      }
      for (const [consumer, n] of pending) m.consumerPending.set({ consumer }, n)
      m.outboxBacklog.set(backlog)
      m.gaugesRead.set(1)
    }),
    Effect.catchAllCause(() =>
      Effect.sync(() => {
        m.consumerPending.reset()
        m.consumerDeadLetters.reset()
        m.outboxBacklog.reset()
        m.gaugesRead.set(0)
      })
    )
  )

/**
 * `GET /metrics`: Prometheus text (version 0.0.4), outside the HttpApi (not JSON, not in the OpenAPI document; routed as
 * the dashboard and `/` are). Unauthenticated unless METRICS_TOKEN is set; then only with `Authorization: Bearer
 * <METRICS_TOKEN>`, compared in constant time; without it, or with another, 401 problem+json.
 */
export const MetricsRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    const sql = yield* SqlClient.SqlClient
    const metrics = yield* Metrics
    const token = config.metricsToken ?? Option.none()
    yield* router.get(
      "/metrics",
      Effect.gen(function* () {
        const req = yield* HttpServerRequest.HttpServerRequest
        if (Option.isSome(token)) {
          const given = bearerOf(req)
          if (given === undefined || !sameSecret(given, Redacted.value(token.value))) {
            return problemResponse(req, 401, { code: "unauthorized", message: "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>." }, { "www-authenticate": "Bearer" })
          }
        }
        yield* readDatabaseGauges(sql, metrics)
        const text = yield* Effect.promise(() => metrics.render())
        return HttpServerResponse.text(text, { contentType: metrics.contentType, headers: { "cache-control": "no-store" } })
      })
    )
  })
)
