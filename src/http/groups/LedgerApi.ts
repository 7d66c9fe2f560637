import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { LedgerEntriesParams, LedgerEntry, RangeParams, Statement } from "../../contract/Ledger.js"
import { NotFound } from "../../contract/Problems.js"
import { listOf } from "../../contract/Schemas.js"
import { Authentication } from "../Security.js"

const accountRef = HttpApiSchema.param("accountRef", Schema.String)

/** Reading the ledger: the tenant's entries, and a virtual account's statement (JSON, or CSV with `Accept: text/csv`). */
export class LedgerApi extends HttpApiGroup.make("ledger")
  .add(HttpApiEndpoint.get("entries", "/api/v1/ledger/entries").setUrlParams(LedgerEntriesParams).addSuccess(listOf(LedgerEntry)).addError(NotFound))
  .add(
    HttpApiEndpoint.get("statement")`/api/v1/virtual-accounts/${accountRef}/statement`
      .setUrlParams(Schema.Struct(RangeParams))
      .addSuccess(Statement)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/csv" }))
      .addError(NotFound)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Ledger")
  .annotate(OpenApi.Description, "The double-entry journal in the caller's mode, and a virtual account's statement (JSON, or CSV with Accept: text/csv).")
{}
