import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { BusHealth } from "../../../streams/Nats.js"
import { PROBLEM_JSON } from "../../contract/Problems.js"
import { Api } from "../Api.js"
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from "../DatabaseUnavailable.js"
import { problemDocument } from "../Problem.js"

/** How long the database may take to answer `SELECT 1` before /readyz calls it unreachable. */
const DATABASE_PROBE_TIMEOUT = "2 seconds"

const notReady = (url: string, code: string, message: string) =>
  HttpServerResponse.unsafeJson(problemDocument(503, { code, message }, url), {
    status: 503,
    contentType: PROBLEM_JSON,
    headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }
  })

export const HealthHandlers = HttpApiBuilder.group(Api, "health", (h) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const bus = yield* BusHealth
    const databaseProblem = sql`SELECT 1`.pipe(
      Effect.timeout(DATABASE_PROBE_TIMEOUT),
      Effect.as(Option.none<string>()),
      Effect.catchAllCause(() => Effect.succeed(Option.some("The database is unreachable")))
    )
    return h
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      // Raw: a NATS outage has no problem code of its own in the registry; the 503 names what is unreachable.
      .handleRaw("readyz", ({ request }: { request: HttpServerRequest.HttpServerRequest }) =>
        Effect.gen(function* () {
          const [db, nats] = yield* Effect.all([databaseProblem, bus.problem], { concurrency: 2 })
          const problems = [...Option.toArray(db), ...Option.toArray(nats)]
          if (problems.length === 0) return HttpServerResponse.unsafeJson({ status: "ready", database: "ok", bus: bus.kind })
          const message = `Not ready: ${problems.join("; ")}.`
          return Option.isSome(db) ? notReady(request.url, DATABASE_UNAVAILABLE.code, message) : notReady(request.url, "bus_unavailable", message)
        })
      )
  })
)
