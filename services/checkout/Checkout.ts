import { SqlClient } from "@effect/sql"
import { Clock, Context, Duration, Effect, Option, Queue, Ref, Schedule, Stream } from "effect"
import * as crypto from "node:crypto"
import { BadRequest, notFound, NotFound, TooManyRequests } from "../../src/contract/Problems.js"
import {
  CHECKOUT_TTL_DEFAULT_SECONDS, CHECKOUT_TTL_MAX_SECONDS, CHECKOUT_TTL_MIN_SECONDS, type CheckoutSnapshot, snapshotOf, snapshotVersion,
  SSE_HEARTBEAT, sseEvent
} from "../../src/domain/Checkout.js"
import type { Scope } from "../../src/domain/Mode.js"
import { integerFromEnv } from "../../src/EnvInteger.js"
import { Subscribe } from "../../streams/Subscribe.js"
import { makeSwappableClock } from "../Passes.js"
import { Metrics } from "../../src/Metrics.js"

export interface CheckoutSettingsShape {
  /** A comment line on every open stream this often, so proxies keep it open and a lost payment event is caught up. */
  readonly heartbeatMs: number
  /** Streams one process serves at once; more get 429 too_many_streams (each costs about 300 KB of heap: docs/performance.md). */
  readonly maxStreams: number
  /** Streams one token may hold open at once (a payer's tabs); more get 429. */
  readonly maxStreamsPerToken: number
}

export class CheckoutSettings extends Context.Reference<CheckoutSettings>()("services/checkout/CheckoutSettings", {
  defaultValue: (): CheckoutSettingsShape => ({
    heartbeatMs: integerFromEnv("CHECKOUT_HEARTBEAT_MS", 15_000, 1),
    maxStreams: integerFromEnv("CHECKOUT_MAX_STREAMS", 2_000, 1),
    maxStreamsPerToken: integerFromEnv("CHECKOUT_MAX_STREAMS_PER_TOKEN", 5, 1)
  })
}) {}

/**
 * The clock checkout sessions live by: when they expire, when a stream says `expired` and closes. The wall clock;
 * a test swaps in a TestClock (`use`) to expire sessions without waiting.
 */
export class CheckoutClock extends Effect.Service<CheckoutClock>()("services/checkout/CheckoutClock", {
  effect: makeSwappableClock
}) {}

interface Session {
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly virtualAccountId: string
  readonly accountRef: string
  readonly expiresAt: Date
}

const hashOf = (token: string) => crypto.createHash("sha256").update(token).digest("hex")

const sessionNotFound = () =>
  new NotFound({ code: "checkout_session_not_found", message: "No checkout session has this token, or it has expired." })

/**
 * Live checkout: sessions (an opaque token per account, stored hashed), the payer's snapshot (payment state only), and
 * the Server-Sent Events stream that follows the account's changes through the `subscribe` port, so every API process
 * hears every change, whichever process reconciled it.
 */
export class Checkout extends Effect.Service<Checkout>()("services/checkout/Checkout", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const subscribe = yield* Subscribe
    const clock = yield* CheckoutClock
    const open = yield* Ref.make({ total: 0, byToken: new Map<string, number>() })
    const metrics = yield* Metrics

    const now = Effect.flatMap(clock.current, (c) => c.currentTimeMillis)

    const create = Effect.fn("Checkout.create")(function* (scope: Scope, input: { readonly accountRef: string; readonly ttlSeconds?: number | undefined }, actor: string) {
      const ttl = input.ttlSeconds ?? CHECKOUT_TTL_DEFAULT_SECONDS
      if (!Number.isSafeInteger(ttl) || ttl < CHECKOUT_TTL_MIN_SECONDS || ttl > CHECKOUT_TTL_MAX_SECONDS) {
        return yield* new BadRequest({
          code: "validation_failed",
          message: `ttlSeconds must be an integer from ${CHECKOUT_TTL_MIN_SECONDS} to ${CHECKOUT_TTL_MAX_SECONDS} (24 hours); the default is ${CHECKOUT_TTL_DEFAULT_SECONDS}.`,
          errors: [{ path: "ttlSeconds", message: `must be ${CHECKOUT_TTL_MIN_SECONDS} to ${CHECKOUT_TTL_MAX_SECONDS}` }]
        })
      }
      const [va] = yield* sql<{ id: string }>`SELECT id FROM virtual_accounts
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND account_ref = ${input.accountRef} AND status = 'Active'`.pipe(Effect.orDie)
      if (!va) return yield* notFound("virtual account", input.accountRef)
      const token = `chk_${crypto.randomBytes(32).toString("base64url")}`
      const createdAt = new Date(yield* now)
      const expiresAt = new Date(createdAt.getTime() + ttl * 1000)
      yield* sql`INSERT INTO checkout_sessions (token_hash, tenant_id, mode, virtual_account_id, created_by, created_at, expires_at)
        VALUES (${hashOf(token)}, ${scope.tenantId}, ${scope.mode}, ${va.id}, ${actor}, ${createdAt}, ${expiresAt})`.pipe(Effect.orDie)
      return {
        token,
        expiresAt: expiresAt.toISOString(),
        snapshotUrl: `/api/v1/checkout/${token}`,
        streamUrl: `/api/v1/checkout/${token}/stream`,
        hostedUrl: `/checkout/${token}`
      }
    })

    /** The session a token names, unless it expired (on the checkout clock): 404 either way, nothing else said. */
    const resolve = (token: string) =>
      Effect.gen(function* () {
        if (!/^chk_[A-Za-z0-9_-]{43}$/.test(token)) return yield* sessionNotFound()
        const [s] = yield* sql<Session>`SELECT s.tenant_id, s.mode, s.virtual_account_id, va.account_ref, s.expires_at
          FROM checkout_sessions s JOIN virtual_accounts va ON va.id = s.virtual_account_id WHERE s.token_hash = ${hashOf(token)}`.pipe(Effect.orDie)
        if (!s || s.expiresAt.getTime() <= (yield* now)) return yield* sessionNotFound()
        return s
      })

    /**
     * The account's snapshot. `updatedAt` is when the payment state last moved, so it changes only with an event of the
     * stream: a deposit credited (when reconciled, or when approved out of review), a reversal applied, a flagged
     * deposit rejected, a refund sent (or given back when it failed); not a deposit held for review, nor a refund's
     * bank report. (An approval of a flagged deposit, which moves no money, still counts: a known imprecision.)
     */
    const snapshotFor = (s: Session) =>
      Effect.gen(function* () {
        const [a] = yield* sql<{ nuban: string; bankName: string; expectedAmountKobo: number | null; amountPaidKobo: number; updatedAt: Date }>`
          SELECT va.nuban, va.bank_name, va.expected_amount_kobo, va.amount_paid_kobo,
            GREATEST(va.created_at,
              (SELECT max(CASE WHEN t.review_decision IS NULL THEN t.reconciled_at ELSE t.reviewed_at END) FROM transactions t
                WHERE t.virtual_account_id = va.id AND t.applied_kobo > 0),
              (SELECT max(CASE WHEN t.status IN ('Failed', 'Reversed') THEN COALESCE(t.completed_at, t.created_at) ELSE t.created_at END)
                FROM transfers t WHERE t.virtual_account_id = va.id AND t.source = 'refund')) AS updated_at
          FROM virtual_accounts va WHERE va.id = ${s.virtualAccountId}`.pipe(Effect.orDie)
        return snapshotOf(a!, s.expiresAt, a!.updatedAt)
      })

    const snapshot = Effect.fn("Checkout.snapshot")(function* (token: string) {
      return yield* snapshotFor(yield* resolve(token))
    })

    /**
     * What the hosted page shows besides the snapshot: who is being paid (the tenant's business name) and the account
     * name the payer's bank app shows for the NUBAN (the provider's name for it, as its name enquiry answers: the same
     * text anyone holding the NUBAN can see, so the page reveals nothing the bank app would not).
     */
    const hosted = Effect.fn("Checkout.hosted")(function* (token: string) {
      const session = yield* resolve(token)
      const snapshot = yield* snapshotFor(session)
      const [who] = yield* sql<{ businessName: string; accountName: string | null }>`
        SELECT t.name AS business_name, va.account_name FROM virtual_accounts va JOIN tenants t ON t.id = va.tenant_id
        WHERE va.id = ${session.virtualAccountId}`.pipe(Effect.orDie)
      return { snapshot, businessName: who!.businessName, accountName: who!.accountName }
    })

    /** Counts a stream in, within the process's and the token's bounds; the release counts it out. */
    const admit = (token: string) =>
      Effect.gen(function* () {
        const settings = yield* CheckoutSettings
        const admitted = yield* Ref.modify(open, (o) => {
          const mine = o.byToken.get(token) ?? 0
          if (o.total >= settings.maxStreams || mine >= settings.maxStreamsPerToken) return [false, o] as const
          const byToken = new Map(o.byToken)
          byToken.set(token, mine + 1)
          return [true, { total: o.total + 1, byToken }] as const
        })
        if (!admitted) {
          return yield* new TooManyRequests({
            code: "too_many_streams",
            message: `Too many open checkout streams (at most ${settings.maxStreamsPerToken} per token and ${settings.maxStreams} per server); close one, or poll the snapshot.`
          })
        }
        metrics.checkoutStreams.inc()
      })

    const release = (token: string) =>
      Effect.sync(() => metrics.checkoutStreams.dec()).pipe(Effect.zipRight(Ref.update(open, (o) => {
        const byToken = new Map(o.byToken)
        const mine = (byToken.get(token) ?? 1) - 1
        if (mine <= 0) byToken.delete(token)
        else byToken.set(token, mine)
        return { total: Math.max(0, o.total - 1), byToken }
      })))

    /**
     * The stream of a token, as SSE text: the snapshot at once (`event: snapshot`; after a reconnect with
     * `Last-Event-ID`, an `update` only if the state moved since), then an `update` on every change of the account's
     * payment state, a heartbeat comment every `heartbeatMs` (which also re-reads the state, should a change have been
     * missed), and `expired` at the session's expiry, then the end. Changes only mark the state dirty (a sliding queue
     * of one), so a slow client holds at most one pending snapshot, never a backlog.
     */
    const stream = Effect.fn("Checkout.stream")(function* (token: string, lastEventId: string | undefined) {
      const session = yield* resolve(token)
      const settings = yield* CheckoutSettings
      const checkoutClock = yield* clock.current
      yield* admit(token)
      const body = Stream.unwrapScoped(Effect.gen(function* () {
        yield* Effect.addFinalizer(() => release(token))
        const dirty = yield* Queue.sliding<void>(1)
        // Listen before the first read, so no change between the read and the subscription is lost.
        yield* subscribe.subscribe(session.tenantId, session.mode, session.accountRef).pipe(
          Stream.runForEach(() => dirty.offer(undefined)),
          Effect.forkScoped
        )
        const first = yield* snapshotFor(session)
        let last = snapshotVersion(first)
        const opening = lastEventId === undefined
          ? [sseEvent("snapshot", last, first)]
          : lastEventId === last ? [] : [sseEvent("update", last, first)]
        const onChange = (s: CheckoutSnapshot): Option.Option<string> => {
          const v = snapshotVersion(s)
          if (v === last) return Option.none()
          last = v
          return Option.some(sseEvent("update", v, s))
        }
        const changes = Stream.fromQueue(dirty).pipe(Stream.mapEffect(() => snapshotFor(session)), Stream.filterMap(onChange))
        const heartbeats = Stream.repeatEffectWithSchedule(Effect.void, Schedule.spaced(Duration.millis(settings.heartbeatMs))).pipe(
          Stream.drop(1),
          Stream.mapEffect(() => Effect.map(snapshotFor(session), (s) => Option.getOrElse(onChange(s), () => SSE_HEARTBEAT)))
        )
        const untilExpiry = Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sleep(Duration.millis(Math.max(0, session.expiresAt.getTime() - t)))).pipe(
          Effect.withClock(checkoutClock)
        )
        const expired = Stream.fromEffect(Effect.map(snapshotFor(session), (s) => sseEvent("expired", snapshotVersion(s), s)))
        return Stream.make("retry: 3000\n\n", ...opening).pipe(
          Stream.concat(Stream.merge(changes, heartbeats)),
          Stream.interruptWhen(untilExpiry),
          Stream.concat(expired)
        )
      }))
      return Stream.encodeText(body)
    })

    return { create, resolve, snapshot, hosted, stream } as const
  })
}) {}
