import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, BadGateway, Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { Authentication } from "../Security.js"
import { PageParams, listOf } from "../../contract/Schemas.js"
import { CreateVirtualAccount, UpdateVirtualAccount, VirtualAccount } from "../../contract/Accounts.js"


const accountRef = HttpApiSchema.param("accountRef", Schema.String)

export class VirtualAccountsApi extends HttpApiGroup.make("virtualAccounts")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/virtual-accounts")
      .setUrlParams(Schema.Struct({ subMerchantRef: Schema.optional(Schema.String), ...PageParams }))
      .addSuccess(listOf(VirtualAccount))
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/virtual-accounts")
      .setPayload(CreateVirtualAccount)
      .addSuccess(VirtualAccount, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(BadGateway)
  )
  .add(HttpApiEndpoint.get("get")`/api/v1/virtual-accounts/${accountRef}`.addSuccess(VirtualAccount).addError(NotFound))
  .add(
    HttpApiEndpoint.patch("update")`/api/v1/virtual-accounts/${accountRef}`
      .setPayload(UpdateVirtualAccount)
      .addSuccess(VirtualAccount)
      .addError(Forbidden)
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.del("delete")`/api/v1/virtual-accounts/${accountRef}`.addSuccess(HttpApiSchema.NoContent).addError(NotFound).addError(Conflict))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Virtual accounts")
  .annotate(OpenApi.Description, "Dedicated NUBANs, one per customer or invoice, with the amount expected and what has been paid.")
{}
