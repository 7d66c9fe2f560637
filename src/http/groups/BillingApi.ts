import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { PositiveKobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { CreateSchedule, Period, Schedule } from "../../contract/Billing.js"
import { Conflict, Forbidden, NotFound } from "../../contract/Problems.js"
import { Body, listOf, TakeParams } from "../../contract/Schemas.js"

const id = HttpApiSchema.param("id", Schema.String)
const base = "/api/v1/billing/schedules"

export class BillingApi extends HttpApiGroup.make("billing")
  .add(HttpApiEndpoint.get("list", base).setUrlParams(TakeParams).addSuccess(listOf(Schedule)))
  .add(HttpApiEndpoint.post("create", base).setPayload(CreateSchedule).addSuccess(Schedule, { status: 201 }).addError(NotFound).addError(Conflict).addError(Forbidden))
  .add(HttpApiEndpoint.get("get")`/api/v1/billing/schedules/${id}`.addSuccess(Schedule).addError(NotFound))
  .add(
    HttpApiEndpoint.put("setNextAmount")`/api/v1/billing/schedules/${id}/next-amount`.setPayload(Body({ amountKobo: PositiveKobo })).addSuccess(Schedule)
      .addError(NotFound).addError(Conflict).addError(Forbidden)
  )
  .add(HttpApiEndpoint.post("pause")`/api/v1/billing/schedules/${id}/pause`.addSuccess(Schedule).addError(NotFound).addError(Conflict).addError(Forbidden))
  .add(HttpApiEndpoint.post("resume")`/api/v1/billing/schedules/${id}/resume`.addSuccess(Schedule).addError(NotFound).addError(Conflict).addError(Forbidden))
  .add(HttpApiEndpoint.post("cancel")`/api/v1/billing/schedules/${id}/cancel`.addSuccess(Schedule).addError(NotFound).addError(Forbidden))
  .add(HttpApiEndpoint.get("periods")`/api/v1/billing/schedules/${id}/periods`.setUrlParams(TakeParams).addSuccess(listOf(Period)).addError(NotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Recurring billing")
  .annotate(OpenApi.Description, "Schedules that bill a virtual account every period, with their periods.")
{}
