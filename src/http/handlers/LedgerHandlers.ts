import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { LedgerReads } from "../../../services/ledger/LedgerReads.js"
import { statementCsv } from "../../domain/Statement.js"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../Security.js"

/** Whether the caller asks for CSV before JSON (`Accept: text/csv`). */
const wantsCsv = (accept: string | undefined) => {
  if (accept === undefined) return false
  const csv = accept.indexOf("text/csv")
  const json = accept.indexOf("application/json")
  return csv >= 0 && (json < 0 || csv < json)
}

// Reads of either plane, any role, in the caller's tenant and mode (as the transactions list).
export const LedgerHandlers = HttpApiBuilder.group(Api, "ledger", (h) =>
  Effect.gen(function* () {
    const reads = yield* LedgerReads
    return h
      .handle("entries", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => reads.entries(p, urlParams)))
      .handle("statement", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const p = yield* CurrentPrincipal
          const statement = yield* reads.statement(p, path.accountRef, urlParams)
          const req = yield* HttpServerRequest.HttpServerRequest
          if (!wantsCsv(req.headers["accept"])) return statement
          return HttpServerResponse.text(statementCsv(statement), {
            contentType: "text/csv; charset=utf-8",
            headers: { "content-disposition": `attachment; filename="statement-${statement.accountRef}.csv"` }
          })
        }))
  })
)
