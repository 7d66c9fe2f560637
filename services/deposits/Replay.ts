import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Stream } from "effect"
import { envelopeOf, type InboxRow } from "./Inbox.js"
import { Reconciler } from "./Reconciler.js"
import { AppConfigTag } from "../../src/Config.js"
import { decodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { replayFrom, type ReplayStart } from "../../streams/Consume.js"
import { NatsLive } from "../../streams/Nats.js"
import { INTERNAL_PREFIX, type Subscription, WEBHOOKS } from "../outbox/Registry.js"
import { wakeEverywhere } from "../outbox/CrossProcessWakeups.js"
import { streamNames } from "../../streams/Topology.js"

export interface ReplayReport {
  readonly stream: "deposits" | "reconciled"
  readonly source: "jetstream" | "inbox" | "outbox"
  readonly read: number
  readonly reconciled: number
  readonly alreadyDone: number
  readonly skipped: number
  /** The consumer a reconciled replay re-fed. */
  readonly consumer?: string
}

type InboxPointer = Pick<InboxRow, "id" | "tenantId" | "mode" | "provider" | "providerReference" | "accountNumber">

/**
 * Re-feeds the deposit stream from a sequence or a time through the reconciler. Everything downstream is idempotent
 * (unique transaction reference, per-consumer outbox marks), so a replay loses and doubles nothing. Without NATS the
 * embedded default replays from the Postgres inbox, whose ids are its sequence.
 */
export const replayDeposits = (start: ReplayStart) =>
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    const reconciler = yield* Reconciler
    const sql = yield* SqlClient.SqlClient
    let read = 0, reconciled = 0, alreadyDone = 0, skipped = 0
    const apply = (e: ReturnType<typeof decodeEnvelope>) =>
      Effect.gen(function* () {
        read++
        if (!isDecoded(e)) return void skipped++
        const outcome = yield* reconciler.reconcile(e)
        if (outcome === "reconciled") reconciled++
        else if (outcome === "already-reconciled") alreadyDone++
        else skipped++
      })
    if (Option.isSome(config.natsUrl)) {
      yield* replayFrom(streamNames({ prefix: config.natsPrefix }).deposits, start).pipe(
        Stream.runForEach((m) => apply(decodeEnvelope(m.string()))),
        Effect.provide(NatsLive(config.natsUrl.value))
      )
      return { stream: "deposits", source: "jetstream", read, reconciled, alreadyDone, skipped } satisfies ReplayReport
    }
    let cursor = 0
    while (true) {
      const rows: ReadonlyArray<InboxPointer> = yield* sql<InboxPointer>`
        SELECT id, tenant_id, mode, provider, provider_reference, account_number FROM inbound_events
        WHERE id > ${cursor} AND ${"seq" in start ? sql`id >= ${start.seq}` : sql`received_at >= ${start.since}`}
        ORDER BY id LIMIT 500`
      if (rows.length === 0) break
      yield* Effect.forEach(rows, (r) => apply(envelopeOf(r)), { discard: true })
      cursor = rows[rows.length - 1]!.id
    }
    return { stream: "deposits", source: "inbox", read, reconciled, alreadyDone, skipped } satisfies ReplayReport
  })

/**
 * Re-feeds committed events to one consumer (by default the webhook stager): puts them back among its pending rows
 * (fresh: no attempts, and out of its dead letters), so it handles them again. Only events of the types it wants are
 * re-fed. Each consumer is idempotent: deliveries are unique per (event, endpoint), the relay's stream de-duplicates
 * by event id.
 */
export const replayReconciled = (start: ReplayStart, consumer: Subscription = WEBHOOKS) =>
  Effect.gen(function* () {
    const config = yield* AppConfigTag
    const sql = yield* SqlClient.SqlClient
    const wanted = consumer.eventTypes === "all" ? sql`event_type NOT LIKE ${`${INTERNAL_PREFIX}%`}` : sql`event_type IN ${sql.in(consumer.eventTypes)}`
    // Puts the outbox events the condition picks back among the consumer's pending rows; how many it found.
    const restageWhere = (condition: Statement.Fragment) =>
      sql<{ n: number; types: ReadonlyArray<string> | null }>`
        WITH f AS (SELECT id, event_type FROM outbox WHERE ${condition} AND ${wanted}),
          d AS (DELETE FROM consumer_dead_letters WHERE consumer = ${consumer.name} AND outbox_id IN (SELECT id FROM f)),
          q AS (
            INSERT INTO outbox_pending (consumer, outbox_id) SELECT ${consumer.name}, id FROM f
            ON CONFLICT (consumer, outbox_id) DO UPDATE SET attempts = 0, last_error = NULL, next_attempt_at = NULL
          )
        SELECT count(*)::int AS n, array_agg(DISTINCT event_type) AS types FROM f`.pipe(
        // The consumer's runners may be resting (30 s): wake them, here and in the workers.
        Effect.tap((r) => wakeEverywhere(sql, r[0]!.types ?? [])),
        Effect.map((r) => r[0]!.n)
      )
    const restage = (eventIds: ReadonlyArray<string>) => (eventIds.length === 0 ? Effect.succeed(0) : restageWhere(sql`event_id IN ${sql.in(eventIds)}`))
    if (Option.isSome(config.natsUrl)) {
      const ids: Array<string> = []
      yield* replayFrom(streamNames({ prefix: config.natsPrefix }).reconciled, start).pipe(
        Stream.runForEach((m) =>
          Effect.sync(() => {
            try {
              const id = (JSON.parse(m.string()) as { id?: unknown }).id
              if (typeof id === "string") ids.push(id)
            } catch {
              // Not one of ours; nothing to re-feed.
            }
          })
        ),
        Effect.provide(NatsLive(config.natsUrl.value))
      )
      const found = yield* restage(ids)
      return {
        stream: "reconciled", source: "jetstream", read: ids.length, reconciled: 0, alreadyDone: found, skipped: ids.length - found, consumer: consumer.name
      } satisfies ReplayReport
    }
    const n = yield* restageWhere("seq" in start ? sql`id >= ${start.seq}` : sql`created_at >= ${start.since}`)
    return { stream: "reconciled", source: "outbox", read: n, reconciled: 0, alreadyDone: n, skipped: 0, consumer: consumer.name } satisfies ReplayReport
  })
