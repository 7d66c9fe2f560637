import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ReceiverResult } from "./SandboxApi.js"

export const ReceiverResponse = Schema.Struct({ result: ReceiverResult, reference: Schema.NullOr(Schema.String) })
const provider = HttpApiSchema.param("provider", Schema.String)

/** Called by the bank provider; authenticated by the provider's signature, not by a bearer token. */
export class ReceiverApi extends HttpApiGroup.make("receiver")
  .add(HttpApiEndpoint.post("receive")`/webhooks/${provider}`.addSuccess(ReceiverResponse))
  .add(HttpApiEndpoint.post("receiveV1")`/api/v1/webhooks/${provider}`.addSuccess(ReceiverResponse))
{}
