import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { PositiveKobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, CaseInsensitiveLiteral, OpenList, OpenObject, Reference, TakeParams } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)
const base = "/api/v1/billing/schedules"

export class BillingApi extends HttpApiGroup.make("billing")
  .add(HttpApiEndpoint.get("list", base).setUrlParams(TakeParams).addSuccess(OpenList))
  .add(
    HttpApiEndpoint.post("create", base)
      .setPayload(Body({
        accountRef: Reference("accountRef", 64),
        interval: CaseInsensitiveLiteral("interval", ["Weekly", "Monthly", "Quarterly", "Yearly"]),
        amountKobo: PositiveKobo,
        dueOffsetDays: Schema.optional(Schema.Int.pipe(Schema.between(0, 365))),
        description: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
        reference: Reference("reference", 64)
      }))
      .addSuccess(OpenObject, { status: 201 })
  )
  .add(HttpApiEndpoint.get("get")`/api/v1/billing/schedules/${id}`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.put("setNextAmount")`/api/v1/billing/schedules/${id}/next-amount`.setPayload(Body({ amountKobo: PositiveKobo })).addSuccess(OpenObject))
  .add(HttpApiEndpoint.post("pause")`/api/v1/billing/schedules/${id}/pause`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.post("resume")`/api/v1/billing/schedules/${id}/resume`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.post("cancel")`/api/v1/billing/schedules/${id}/cancel`.addSuccess(OpenObject))
  .add(HttpApiEndpoint.get("periods")`/api/v1/billing/schedules/${id}/periods`.setUrlParams(TakeParams).addSuccess(OpenList))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
