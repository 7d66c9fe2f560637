import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Kobo } from "../../domain/Money.js"
import { Authentication } from "../Security.js"
import { NotImplemented } from "../../contract/Problems.js"
import { Body, OpenObject } from "../../contract/Schemas.js"

export const SplitLegRequest = Schema.Struct({
  subMerchantRef: Schema.optional(Schema.String),
  accountNumber: Schema.optional(Schema.String),
  bankCode: Schema.optional(Schema.String),
  bps: Schema.optional(Schema.Int.pipe(Schema.between(0, 10_000))),
  flatKobo: Schema.optional(Kobo),
  priority: Schema.optional(Schema.Int)
}).annotations({ identifier: "SplitLegRequest" })

export class SettingsApi extends HttpApiGroup.make("settings")
  .add(HttpApiEndpoint.get("getSettlement", "/api/v1/settings/settlement").addSuccess(OpenObject))
  .add(
    HttpApiEndpoint.put("putSettlement", "/api/v1/settings/settlement")
      .setPayload(Body({
        settlementAccountNumber: Schema.optional(Schema.String),
        settlementBankCode: Schema.optional(Schema.String),
        settlementAccountName: Schema.optional(Schema.String),
        autoSettle: Schema.optional(Schema.Boolean),
        minPayoutKobo: Schema.optional(Kobo)
      }))
      .addSuccess(OpenObject)
  )
  .add(HttpApiEndpoint.get("getSplits", "/api/v1/settings/splits").addSuccess(OpenObject))
  .add(HttpApiEndpoint.put("putSplits", "/api/v1/settings/splits").setPayload(Body({ splits: Schema.Array(SplitLegRequest) })).addSuccess(OpenObject))
  .addError(NotImplemented)
  .middleware(Authentication)
{}
