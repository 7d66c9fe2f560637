import { SqlClient, type Statement } from "@effect/sql"
import { Data, Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { wakeEverywhere } from "./CrossProcessWakeups.js"

/** An event a consumer gave up on after its attempts, as `consumer_dead_letters` keeps it. */
export interface ConsumerDeadLetter {
  readonly id: number
  readonly consumer: string
  readonly outboxId: number
  readonly eventId: string
  readonly eventType: string
  readonly tenantId: string
  readonly mode: Mode
  readonly subjectKey: string
  readonly attempts: number
  readonly lastError: string | null
  readonly deadLetteredAt: Date
}

export class DeadLetterNotFound extends Data.TaggedError("DeadLetterNotFound")<{ readonly id: string }> {
  override get message() {
    return `no consumer dead letter ${this.id}`
  }
}

const MAX_TAKE = 500

/** Lists consumer dead letters and puts them back among their consumer's pending rows, attempts reset. */
export class ConsumerDeadLetters extends Effect.Service<ConsumerDeadLetters>()("services/outbox/ConsumerDeadLetters", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Newest first, at most `take` (default 50, at most 500). */
    const list = Effect.fn("ConsumerDeadLetters.list")(function* (options: { readonly consumer?: string; readonly take?: number } = {}) {
      const take = Math.min(Math.max(1, options.take ?? 50), MAX_TAKE)
      return yield* sql<ConsumerDeadLetter>`
        SELECT d.id, d.consumer, d.outbox_id, o.event_id, o.event_type, o.tenant_id, o.mode, o.subject_key, d.attempts, d.last_error,
          d.dead_lettered_at
        FROM consumer_dead_letters d JOIN outbox o ON o.id = d.outbox_id
        WHERE ${options.consumer === undefined ? sql`TRUE` : sql`d.consumer = ${options.consumer}`}
        ORDER BY d.id DESC LIMIT ${take}`
    }, Effect.orDie)

    /** Moves the dead letters the condition picks back to pending (due now, no attempts); the moved ones. */
    const requeueWhere = (condition: Statement.Fragment) =>
      sql<{ id: number; consumer: string; outboxId: number; eventType: string }>`
        WITH d AS (DELETE FROM consumer_dead_letters WHERE ${condition} RETURNING id, consumer, outbox_id),
          p AS (
            INSERT INTO outbox_pending (consumer, outbox_id) SELECT consumer, outbox_id FROM d
            ON CONFLICT (consumer, outbox_id) DO UPDATE SET attempts = 0, last_error = NULL, next_attempt_at = NULL
          )
        SELECT d.id, d.consumer, d.outbox_id, o.event_type FROM d JOIN outbox o ON o.id = d.outbox_id ORDER BY d.outbox_id`.pipe(
        // The runners may be resting (30 s): wake them, here and in the workers.
        Effect.tap((moved) => wakeEverywhere(sql, [...new Set(moved.map((m) => m.eventType))])),
        Effect.map((moved) => moved.map(({ eventType: _, ...m }) => m))
      )

    /** One dead letter, by its id, back to pending. */
    const replay = Effect.fn("ConsumerDeadLetters.replay")(function* (id: string) {
      if (!/^\d{1,18}$/.test(id)) return yield* new DeadLetterNotFound({ id })
      const [moved] = yield* requeueWhere(sql`id = ${id}::bigint`).pipe(Effect.orDie)
      if (moved === undefined) return yield* new DeadLetterNotFound({ id })
      return moved
    })

    /** Every dead letter of the consumer back to pending; how many. */
    const replayAll = Effect.fn("ConsumerDeadLetters.replayAll")(function* (consumer: string) {
      return (yield* requeueWhere(sql`consumer = ${consumer}`)).length
    }, Effect.orDie)

    return { list, replay, replayAll } as const
  })
}) {}
