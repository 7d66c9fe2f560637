import { HttpApiBuilder } from "@effect/platform"
import { Api } from "../Api.js"
import { notYet } from "./Respond.js"

export const TransactionsHandlers = HttpApiBuilder.group(Api, "transactions", (h) =>
  h.handle("list", notYet("Transactions")).handle("summary", notYet("Transactions")).handle("get", notYet("Transactions"))
    .handle("refund", notYet("Refunds")).handle("review", notYet("Reviews")))
export const SandboxHandlers = HttpApiBuilder.group(Api, "sandbox", (h) => h.handle("simulateDeposit", notYet("The simulator")))
export const ReceiverHandlers = HttpApiBuilder.group(Api, "receiver", (h) =>
  h.handle("receive", notYet("The receiver")).handle("receiveV1", notYet("The receiver")))
export const WebhookEndpointsHandlers = HttpApiBuilder.group(Api, "webhookEndpoints", (h) =>
  h.handle("list", notYet("Webhook endpoints")).handle("create", notYet("Webhook endpoints")).handle("deliveries", notYet("Webhook deliveries"))
    .handle("replay", notYet("Webhook deliveries")).handle("delete", notYet("Webhook endpoints")))
