import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound } from "../../contract/Problems.js"
import { PositiveKobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { Body, NonEmpty, Reference } from "../../contract/Schemas.js"
import { AdvanceSandboxClock, SandboxClock } from "../../contract/Billing.js"

export const ReceiverResult = Schema.Literal("processed", "duplicate", "ignored", "unmatched")

export const SimulateDeposit = Body({
  accountRef: Reference("accountRef", 64),
  amountKobo: PositiveKobo,
  senderName: Schema.optional(NonEmpty("senderName", 120)),
  senderAccountNumber: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{10}$/, { message: () => "senderAccountNumber must be 10 digits" }))),
  senderBankCode: Schema.optional(Schema.String.pipe(Schema.pattern(/^\d{3,6}$/, { message: () => "senderBankCode must be 3 to 6 digits" }))),
  narration: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  reversal: Schema.optional(Schema.Boolean)
})

export class SandboxApi extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("simulateDeposit", "/api/v1/sandbox/simulate/deposit")
      .setPayload(SimulateDeposit)
      .addSuccess(Schema.Struct({ reference: Schema.String, result: ReceiverResult }))
      .addError(Forbidden)
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.get("clock", "/api/v1/sandbox/clock").addSuccess(SandboxClock).addError(Forbidden))
  .add(HttpApiEndpoint.post("advanceClock", "/api/v1/sandbox/clock/advance").setPayload(AdvanceSandboxClock).addSuccess(SandboxClock).addError(Forbidden))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(OpenApi.Description, "Test-mode tools: simulate a deposit, read and advance the sandbox clock.")
{}
