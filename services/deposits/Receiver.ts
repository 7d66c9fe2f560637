import { SqlClient } from "@effect/sql"
import { Chunk, Clock, Effect, Either, Exit, FiberId, Queue, Schema } from "effect"
import { DepositBus } from "../../streams/DepositBus.js"
import { AppConfigTag } from "../../src/Config.js"
import { currentTraceparent, tracingOn, withBatchSpan } from "../../src/TraceContext.js"
import { BadRequest, NotFound, Unauthorized } from "../../src/contract/Problems.js"
import { type ProviderCredentials, Tenants } from "../access/Tenants.js"
import { TransferOutcomes } from "../transfers/Outcomes.js"
import { isTransferOutcomeEvent, TRANSFER_OUTCOME_EVENTS, TransferOutcomeEvent } from "../transfers/TransferEvent.js"
import { Inbox } from "./Inbox.js"
import { decodeSandboxEventFast, INFLOW_EVENT, REVERSAL_EVENT, SandboxEvent, verifySandboxSignature } from "./SandboxEvent.js"

export type ReceiverResult = "processed" | "duplicate" | "ignored" | "unmatched"

/** What the receiver answers a provider: 200 with this body, or one of the failures below as a problem document. */
export type ReceiverAnswer = { readonly result: ReceiverResult; readonly reference: string | null }
export type ReceiverFailure = NotFound | BadRequest | Unauthorized

const badSignature = () =>
  new Unauthorized({ code: "invalid_signature", message: "Missing or invalid X-Sandbox-Signature for this merchant." })

/** The answer for an event that passed the checks (the reference is its session id). */
type Accepted = { readonly result: ReceiverResult; readonly reference: string }

/** An event waiting for the inbox commit that will hold it; `answer` is called once, after that commit (or on stop). */
interface Arrival {
  readonly creds: ProviderCredentials
  readonly event: SandboxEvent
  readonly answer: (exit: Exit.Exit<Accepted>) => void
  /** The accepting span's trace context (tracing on only): it travels with the deposit's message. */
  readonly traceparent?: string | undefined
}

/** The most events one inbox batch takes. */
const ACCEPT_BATCH = 128
/**
 * Webhooks waiting for the next inbox commit, at most. Each waits for an answer, so the provider's own concurrency
 * bounds this in practice; past it (Postgres far behind) a webhook is answered 503 at once, and the provider sends it
 * again, rather than queueing without limit.
 */
export const ARRIVALS_MAX = 10_000
const CREDENTIALS_TTL_MS = 10_000
const CREDENTIALS_KEPT = 10_000

const decodeWithSchema = Schema.decodeUnknownEither(SandboxEvent)
/** The hand-written check first (same checks, same output), the Schema when it declines. */
const decodeEvent = (record: Record<string, unknown>) => {
  const fast = decodeSandboxEventFast(record)
  return fast === undefined ? decodeWithSchema(record) : Either.right(fast)
}

/** The checks before the signature: a known provider, a JSON object body with a merchant id. */
const parseWebhook = (provider: string, rawBody: string): Either.Either<Record<string, unknown> & { readonly merchantId: string }, ReceiverFailure> => {
  if (provider !== "sandbox") return Either.left(new NotFound({ code: "unknown_provider", message: `No bank provider named ${JSON.stringify(provider)}.` }))
  let body: unknown
  try {
    body = JSON.parse(rawBody)
  } catch {
    return Either.left(new BadRequest({ code: "malformed_request", message: "The webhook body is not valid JSON." }))
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return Either.left(badSignature())
  const record = body as Record<string, unknown>
  if (typeof record.merchantId !== "string") return Either.left(badSignature())
  return Either.right(record as Record<string, unknown> & { readonly merchantId: string })
}

const signedBy = (creds: ProviderCredentials | undefined, provider: string, record: Record<string, unknown>, signature: string | undefined): creds is ProviderCredentials =>
  creds !== undefined && creds.provider === provider && verifySandboxSignature(creds.webhookSecret, record, signature)

/** The sandbox serves live mode only under SANDBOX_LIVE_MODE=1: otherwise a live merchant id is refused, signed or not. */
const sandboxLiveRefused = () =>
  new Unauthorized({ code: "sandbox_not_live", message: "The sandbox bank does not serve live mode (SANDBOX_LIVE_MODE is off): live-mode money comes only from a connected bank provider." })

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
    const outcomes = yield* TransferOutcomes
    const traced = yield* tracingOn

    /**
     * Group commit: the events that arrive together share ONE inbox statement (which also tells which NUBANs are
     * known), so one commit, then one publish round (the published marks are written later, together: see Inbox).
     * Each caller is answered as soon as the commit holding its event is done, before the publish round: the 200
     * rests on the inbox row alone, and a publish that never happens (a failure, a stop in between) only delays the
     * deposit until the sweeper re-feeds the row. With little traffic a batch is a single event and nothing waits for
     * company.
     */
    const acceptBatch = (batch: ReadonlyArray<Arrival>) =>
      traced ? withBatchSpan("Receiver.commit", batch.map((a) => a.traceparent))(commitBatch(batch)) : commitBatch(batch)
    const commitBatch = (batch: ReadonlyArray<Arrival>) => {
      let answered = false
      const answerAll = (exit: Exit.Exit<ReadonlyArray<Accepted>>) => {
        if (answered) return
        answered = true
        batch.forEach((a, i) => a.answer(Exit.map(exit, (answers) => answers[i]!)))
      }
      return inbox.insertMany(batch.map(({ creds, event }) => ({
        tenantId: creds.tenantId,
        mode: creds.mode,
        provider: creds.provider,
        providerReference: event.sessionId,
        kind: event.event === INFLOW_EVENT ? ("inflow" as const) : ("reversal" as const),
        accountNumber: event.accountNumber,
        payload: event
      }))).pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          answerAll(Exit.map(exit, (inserted) => inserted.map((r, i): Accepted => {
            const reference = batch[i]!.event.sessionId
            if (!r) return { result: "duplicate", reference }
            return { result: r.known ? "processed" : "unmatched", reference }
          })))
          const fresh = Exit.isSuccess(exit) ? exit.value.flatMap((r) => (r === undefined ? [] : [r.envelope])) : []
          if (fresh.length === 0) return Effect.void
          // Each message carries its own webhook's trace context (tracing on only).
          const traces = traced && Exit.isSuccess(exit) ? exit.value.flatMap((r, i) => (r === undefined ? [] : [batch[i]!.traceparent])) : undefined
          return bus.publish(fresh, traces).pipe(
            Effect.zipRight(inbox.notePublished(fresh.map((e) => e.inboxId))),
            Effect.catchAll((e) => Effect.logWarning(`${fresh.length} deposits are in the inbox; publishing deferred to the sweeper: ${e.message}`))
          )
        }),
        // A stop before the commit is done still answers its callers (503: send again; the inbox makes that safe).
        Effect.onInterrupt((ids) => Effect.sync(() => answerAll(Exit.interrupt(FiberId.combineAll(ids)))))
      )
    }

    const arrivals = yield* Queue.bounded<Arrival>(ARRIVALS_MAX)
    yield* Effect.addFinalizer(() =>
      Queue.takeAll(arrivals).pipe(
        Effect.flatMap((left) => Effect.sync(() => Chunk.forEach(left, (a) => a.answer(Exit.interrupt(FiberId.none))))),
        Effect.zipRight(Queue.shutdown(arrivals))
      )
    )
    // Committers side by side (RECEIVER_COMMITTERS): fewer make bigger batches, so fewer statements and commits.
    const config = yield* AppConfigTag
    const committers = config.receiverCommitters
    for (let i = 0; i < committers; i++) {
      yield* Queue.takeBetween(arrivals, 1, ACCEPT_BATCH).pipe(
        Effect.flatMap((batch) => acceptBatch(Chunk.toReadonlyArray(batch))),
        Effect.forever,
        Effect.forkScoped
      )
    }

    /**
     * A verified event's way in: answered at once when it is neither an inflow nor a reversal, otherwise queued for
     * the next inbox commit (or answered interrupted when the service is stopping).
     */
    const submit = (creds: ProviderCredentials, event: SandboxEvent, answer: (exit: Exit.Exit<Accepted>) => void, traceparent?: string) => {
      if (event.event !== INFLOW_EVENT && event.event !== REVERSAL_EVENT) answer(Exit.succeed({ result: "ignored", reference: event.sessionId }))
      else if (!Queue.unsafeOffer(arrivals, { creds, event, answer, traceparent })) answer(Exit.interrupt(FiberId.none))
    }

    /** Shared by the receiver and the simulator: nothing downstream can tell them apart. */
    const accept = Effect.fn("Receiver.accept")(function* (creds: ProviderCredentials, event: SandboxEvent) {
      const traceparent = traced ? yield* currentTraceparent : undefined
      return yield* Effect.async<Accepted, never, never>((resume) => submit(creds, event, resume, traceparent))
    })

    /**
     * Provider credentials by merchant id, kept for a few seconds: every webhook needs them (a query and a decryption),
     * and they change only when a tenant is created. Unknown merchant ids are not kept.
     */
    const credentials = new Map<string, { readonly creds: ProviderCredentials; readonly until: number }>()
    const cachedCredentials = (merchantId: string, now: number) => {
      const kept = credentials.get(merchantId)
      return kept && kept.until > now ? kept.creds : undefined
    }
    const credentialsFor = (merchantId: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const kept = cachedCredentials(merchantId, now)
        if (kept) return kept
        const creds = yield* tenants.byMerchantId(merchantId)
        if (creds) {
          if (credentials.size >= CREDENTIALS_KEPT) credentials.clear()
          credentials.set(merchantId, { creds, until: now + CREDENTIALS_TTL_MS })
        }
        return creds
      })

    const poison = (provider: string, reason: string, rawBody: string) =>
      sql`INSERT INTO poison_messages ${sql.insert({ source: "receiver", subject: provider, streamSeq: null, reason, payload: rawBody.slice(0, 8000) })}`.pipe(Effect.orDie)

    /**
     * The provider's report on a transfer we sent (outbound): applied at once, in one transaction, before the answer
     * (TransferOutcomes); `duplicate` when that outcome was already applied, `ignored` for a reference we never sent.
     */
    const transferOutcome = (creds: ProviderCredentials, record: Record<string, unknown>, rawBody: string) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(TransferOutcomeEvent)(record)
        if (Either.isLeft(decoded)) {
          yield* poison(creds.provider, "signed transfer outcome failed validation", rawBody)
          yield* Effect.logError(`signed ${creds.provider} transfer outcome ${String(record.sessionId)} failed validation; recorded in poison_messages`)
          return { result: "ignored" as const, reference: typeof record.sessionId === "string" ? record.sessionId : null }
        }
        const e = decoded.right
        const result = yield* outcomes.apply({ tenantId: creds.tenantId, mode: creds.mode }, e.reference, TRANSFER_OUTCOME_EVENTS[e.event]!, e.sessionId, e.reason, {
          amountKobo: e.amountKobo, accountNumber: e.accountNumber
        })
        return { result, reference: e.sessionId }
      })

    const receive = Effect.fn("Receiver.receive")(function* (provider: string, rawBody: string, signature: string | undefined) {
      const record = yield* parseWebhook(provider, rawBody)
      const creds = yield* credentialsFor(record.merchantId)
      if (!signedBy(creds, provider, record, signature)) return yield* badSignature()
      if (creds.mode === "live" && !config.sandboxLiveMode) return yield* sandboxLiveRefused()
      if (isTransferOutcomeEvent(record.event)) return yield* transferOutcome(creds, record, rawBody)
      const decoded = decodeEvent(record)
      if (decoded._tag === "Left") {
        yield* poison(provider, "signed event failed validation", rawBody)
        yield* Effect.logError(`signed ${provider} event ${String(record.sessionId)} failed validation; recorded in poison_messages`)
        return { result: "ignored" as const, reference: typeof record.sessionId === "string" ? record.sessionId : null }
      }
      return yield* accept(creds, decoded.right)
    })

    /**
     * `receive` without a fiber per request, for the server's fast path: the same checks and answers, done at once,
     * with the event queued for the next inbox commit and `done` called after it. Returns false, having done nothing,
     * when the full `receive` must run instead: a merchant id not in the credentials cache, or a signed event that
     * failed validation (it is recorded as poison). The fiber, spans and Deferred of `receive` showed in the
     * service's profile (docs/performance.md, "Receiver fast path").
     */
    const receiveNow = (provider: string, rawBody: string, signature: string | undefined, done: (exit: Exit.Exit<ReceiverAnswer, ReceiverFailure>) => void): boolean => {
      const parsed = parseWebhook(provider, rawBody)
      if (parsed._tag === "Left") {
        done(Exit.fail(parsed.left))
        return true
      }
      const record = parsed.right
      // Outcomes of our own transfers take the full path: they are rare and apply in a transaction of their own.
      if (isTransferOutcomeEvent(record.event)) return false
      const creds = cachedCredentials(record.merchantId, Date.now())
      if (creds === undefined) return false
      if (!signedBy(creds, provider, record, signature)) {
        done(Exit.fail(badSignature()))
        return true
      }
      if (creds.mode === "live" && !config.sandboxLiveMode) {
        done(Exit.fail(sandboxLiveRefused()))
        return true
      }
      const decoded = decodeEvent(record)
      if (decoded._tag === "Left") return false
      submit(creds, decoded.right, done)
      return true
    }

    return { accept, receive, receiveNow } as const
  })
}) {}
