import { HttpApiBuilder } from "@effect/platform"
import { Api } from "../Api.js"
import { notYet } from "./Respond.js"

export const WebhookEndpointsHandlers = HttpApiBuilder.group(Api, "webhookEndpoints", (h) =>
  h.handle("list", notYet("Webhook endpoints")).handle("create", notYet("Webhook endpoints")).handle("deliveries", notYet("Webhook deliveries"))
    .handle("replay", notYet("Webhook deliveries")).handle("delete", notYet("Webhook endpoints")))
