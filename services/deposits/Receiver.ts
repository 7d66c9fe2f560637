import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DepositBus } from "../../streams/DepositBus.js"
import { BadRequest, NotFound, Unauthorized } from "../../src/http/Problem.js"
import { type ProviderCredentials, Tenants } from "../Tenants.js"
import { Inbox } from "./Inbox.js"
import { INFLOW_EVENT, REVERSAL_EVENT, SandboxEvent, verifySandboxSignature } from "./SandboxEvent.js"

export type ReceiverResult = "processed" | "duplicate" | "ignored" | "unmatched"

const badSignature = () =>
  new Unauthorized({ code: "invalid_signature", message: "Missing or invalid X-Sandbox-Signature for this merchant." })

/**
 * The inbound half of the pipeline: verify, make durable in the inbox, then publish to the deposit stream.
 * A valid signature always gets 200 with what happened, so the provider stops retrying.
 */
export class Receiver extends Effect.Service<Receiver>()("services/deposits/Receiver", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tenants = yield* Tenants
    const inbox = yield* Inbox
    const bus = yield* DepositBus

    /** Shared by the receiver and the simulator: nothing downstream can tell them apart. */
    const accept = Effect.fn("Receiver.accept")(function* (creds: ProviderCredentials, event: SandboxEvent) {
      if (event.event !== INFLOW_EVENT && event.event !== REVERSAL_EVENT) return { result: "ignored" as const, reference: event.sessionId }
      const known = yield* sql<{ id: string }>`
        SELECT id FROM virtual_accounts WHERE tenant_id = ${creds.tenantId} AND mode = ${creds.mode} AND nuban = ${event.accountNumber} LIMIT 1`.pipe(Effect.orDie)
      const envelope = yield* inbox.insert({
        tenantId: creds.tenantId,
        mode: creds.mode,
        provider: creds.provider,
        providerReference: event.sessionId,
        kind: event.event === INFLOW_EVENT ? "inflow" : "reversal",
        accountNumber: event.accountNumber,
        payload: event
      })
      if (!envelope) return { result: "duplicate" as const, reference: event.sessionId }
      // The inbox row is the durable record; a failed publish only delays the deposit until the sweeper re-feeds it.
      yield* bus.publish([envelope]).pipe(
        Effect.zipRight(inbox.markPublished([envelope.inboxId])),
        Effect.catchAll((e) => Effect.logWarning(`deposit ${event.sessionId} is in the inbox; publishing deferred to the sweeper: ${e.message}`))
      )
      return { result: known.length > 0 ? ("processed" as const) : ("unmatched" as const), reference: event.sessionId }
    })

    const receive = Effect.fn("Receiver.receive")(function* (provider: string, rawBody: string, signature: string | undefined) {
      if (provider !== "sandbox") return yield* new NotFound({ code: "unknown_provider", message: `No bank provider named ${JSON.stringify(provider)}.` })
      let body: unknown
      try {
        body = JSON.parse(rawBody)
      } catch {
        return yield* new BadRequest({ code: "malformed_request", message: "The webhook body is not valid JSON." })
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) return yield* badSignature()
      const record = body as Record<string, unknown>
      if (typeof record.merchantId !== "string") return yield* badSignature()
      const creds = yield* tenants.byMerchantId(record.merchantId)
      if (!creds || creds.provider !== provider || !verifySandboxSignature(creds.webhookSecret, record, signature)) return yield* badSignature()
      const decoded = Schema.decodeUnknownEither(SandboxEvent)(record)
      if (decoded._tag === "Left") {
        yield* sql`INSERT INTO poison_messages ${sql.insert({ source: "receiver", subject: provider, streamSeq: null, reason: "signed event failed validation", payload: rawBody.slice(0, 8000) })}`.pipe(Effect.orDie)
        yield* Effect.logError(`signed ${provider} event ${String(record.sessionId)} failed validation; recorded in poison_messages`)
        return { result: "ignored" as const, reference: typeof record.sessionId === "string" ? record.sessionId : null }
      }
      return yield* accept(creds, decoded.right)
    })

    return { accept, receive } as const
  })
}) {}
