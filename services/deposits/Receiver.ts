import { SqlClient } from "@effect/sql"
import { Chunk, Clock, Deferred, Effect, Exit, Queue, Schema } from "effect"
import { DepositBus, type DepositEnvelope } from "../../streams/DepositBus.js"
import { AppConfigTag } from "../../src/Config.js"
import { BadRequest, NotFound, Unauthorized } from "../../src/http/Problem.js"
import { type ProviderCredentials, Tenants } from "../Tenants.js"
import { Inbox } from "./Inbox.js"
import { INFLOW_EVENT, REVERSAL_EVENT, SandboxEvent, verifySandboxSignature } from "./SandboxEvent.js"

export type ReceiverResult = "processed" | "duplicate" | "ignored" | "unmatched"

const badSignature = () =>
  new Unauthorized({ code: "invalid_signature", message: "Missing or invalid X-Sandbox-Signature for this merchant." })

type Accepted = { readonly result: "processed" | "duplicate" | "unmatched"; readonly reference: string }

/** An event waiting for the inbox commit that will hold it. */
interface Arrival {
  readonly creds: ProviderCredentials
  readonly event: SandboxEvent
  readonly answer: Deferred.Deferred<Accepted>
}

/** The most events one inbox batch takes. */
const ACCEPT_BATCH = 128
const CREDENTIALS_TTL_MS = 10_000
const CREDENTIALS_KEPT = 10_000

/**
 * The inbound half of the pipeline: verify, make durable in the inbox, then publish to the deposit stream.
 * A valid signature always gets 200 with what happened, so the provider stops retrying.
 */
export class Receiver extends Effect.Service<Receiver>()("services/deposits/Receiver", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tenants = yield* Tenants
    const inbox = yield* Inbox
    const bus = yield* DepositBus

    /**
     * Group commit: the events that arrive together share ONE inbox statement, so one commit (then one known-account
     * lookup, one publish round and one published mark). Each caller is answered only after the commit holding its
     * event. With little traffic a batch is a single event and nothing waits for company.
     */
    const acceptBatch = (batch: ReadonlyArray<Arrival>) =>
      Effect.gen(function* () {
        const envelopes = yield* inbox.insertMany(batch.map(({ creds, event }) => ({
          tenantId: creds.tenantId,
          mode: creds.mode,
          provider: creds.provider,
          providerReference: event.sessionId,
          kind: event.event === INFLOW_EVENT ? ("inflow" as const) : ("reversal" as const),
          accountNumber: event.accountNumber,
          payload: event
        })))
        const fresh = envelopes.filter((e): e is DepositEnvelope => e !== undefined)
        const known = new Set<string>()
        if (fresh.length > 0) {
          const rows = yield* sql<{ tenantId: string; mode: string; nuban: string }>`
            SELECT va.tenant_id, va.mode, va.nuban FROM virtual_accounts va
            JOIN unnest(${fresh.map((e) => e.tenantId)}::text[], ${fresh.map((e) => e.mode)}::text[], ${fresh.map((e) => e.accountNumber)}::text[])
              AS k(tenant_id, mode, nuban) ON va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.nuban = k.nuban`.pipe(Effect.orDie)
          for (const r of rows) known.add(`${r.tenantId}|${r.mode}|${r.nuban}`)
          // The inbox rows are the durable record; a failed publish only delays the deposits until the sweeper re-feeds them.
          yield* bus.publish(fresh).pipe(
            Effect.zipRight(inbox.markPublished(fresh.map((e) => e.inboxId))),
            Effect.catchAll((e) => Effect.logWarning(`${fresh.length} deposits are in the inbox; publishing deferred to the sweeper: ${e.message}`))
          )
        }
        return envelopes.map((e, i): Accepted => {
          const reference = batch[i]!.event.sessionId
          if (!e) return { result: "duplicate", reference }
          return { result: known.has(`${e.tenantId}|${e.mode}|${e.accountNumber}`) ? "processed" : "unmatched", reference }
        })
      }).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Effect.forEach(batch, (a, i) => Deferred.done(a.answer, Exit.map(exit, (answers) => answers[i]!)), { discard: true }))
      )

    const arrivals = yield* Queue.unbounded<Arrival>()
    yield* Effect.addFinalizer(() => Queue.shutdown(arrivals))
    // Committers side by side (RECEIVER_COMMITTERS): fewer make bigger batches, so fewer statements and commits.
    const committers = (yield* AppConfigTag).receiverCommitters
    for (let i = 0; i < committers; i++) {
      yield* Queue.takeBetween(arrivals, 1, ACCEPT_BATCH).pipe(
        Effect.flatMap((batch) => acceptBatch(Chunk.toReadonlyArray(batch))),
        Effect.forever,
        Effect.forkScoped
      )
    }

    /** Shared by the receiver and the simulator: nothing downstream can tell them apart. */
    const accept = Effect.fn("Receiver.accept")(function* (creds: ProviderCredentials, event: SandboxEvent) {
      if (event.event !== INFLOW_EVENT && event.event !== REVERSAL_EVENT) return { result: "ignored" as const, reference: event.sessionId }
      const answer = yield* Deferred.make<Accepted>()
      yield* Queue.offer(arrivals, { creds, event, answer })
      return yield* Deferred.await(answer)
    })

    /**
     * Provider credentials by merchant id, kept for a few seconds: every webhook needs them (a query and a decryption),
     * and they change only when a tenant is created. Unknown merchant ids are not kept.
     */
    const credentials = new Map<string, { readonly creds: ProviderCredentials; readonly until: number }>()
    const credentialsFor = (merchantId: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const kept = credentials.get(merchantId)
        if (kept && kept.until > now) return kept.creds
        const creds = yield* tenants.byMerchantId(merchantId)
        if (creds) {
          if (credentials.size >= CREDENTIALS_KEPT) credentials.clear()
          credentials.set(merchantId, { creds, until: now + CREDENTIALS_TTL_MS })
        }
        return creds
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
      const creds = yield* credentialsFor(record.merchantId)
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
