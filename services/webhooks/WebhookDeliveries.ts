import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import type { DeliveryStatus, WebhookDelivery } from "../../src/contract/Webhooks.js"
import { Conflict, notFound } from "../../src/contract/Problems.js"
import { clampTake, pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { wakeEverywhere } from "../outbox/CrossProcessWakeups.js"
import { DELIVERIES_DUE } from "../outbox/Wakeups.js"

export interface DeliveryRow {
  readonly id: string
  readonly tenantId: string
  readonly mode: Mode
  readonly endpointId: string
  readonly endpointUrl: string
  readonly eventId: string
  readonly eventType: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly nextAttemptAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly deliveredAt: Date | null
}

/** A delivery as tenants and operators see it (never the payload's signature or the endpoint's secret). */
export interface DeliveryView extends WebhookDelivery {
  readonly tenantId: string
  readonly mode: Mode
}

export const toDelivery = (r: DeliveryRow): DeliveryView => ({
  id: r.id,
  tenantId: r.tenantId,
  mode: r.mode,
  endpointId: r.endpointId,
  endpointUrl: r.endpointUrl,
  eventId: r.eventId,
  eventType: r.eventType,
  status: r.status,
  attempts: r.attempts,
  lastStatusCode: r.lastStatusCode,
  lastError: r.lastError,
  nextAttemptAt: r.nextAttemptAt?.toISOString() ?? null,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
  deliveredAt: r.deliveredAt?.toISOString() ?? null
})

/** The tenant's scope, or none for operator (CLI) calls, which see every tenant. */
export interface DeliveryScope {
  readonly tenantId: string
  readonly mode: Mode
}

export interface ListDeadLettersOptions {
  readonly tenantId?: string
  readonly mode?: Mode
  readonly take?: number
}

const COLUMNS = "d.id, d.tenant_id, d.mode, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.last_status_code, d.last_error, d.next_attempt_at, d.created_at, d.updated_at, d.delivered_at, e.url AS endpoint_url"

/** Listing and replaying webhook deliveries, for tenants (HTTP) and operators (CLI `dead-letters`). */
export class WebhookDeliveries extends Effect.Service<WebhookDeliveries>()("services/webhooks/WebhookDeliveries", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    const select = (where: ReadonlyArray<ReturnType<typeof sql.and>>, take: number | undefined, clamp = true) =>
      sql<DeliveryRow>`SELECT ${columns} FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE ${sql.and(where)}
        ORDER BY d.created_at DESC, d.seq DESC LIMIT ${clamp ? clampTake(take) : take!}`.pipe(
        Effect.map((rows) => rows.map(toDelivery)),
        Effect.orDie
      )

    /** Newest first; `take` defaults to 50 and is clamped to 500. */
    const list = Effect.fn("WebhookDeliveries.list")(function* (
      scope: DeliveryScope,
      opts: PageRequest & { readonly status?: DeliveryStatus | undefined }
    ) {
      const after = yield* cursorId(opts, "id", (id) => sql<{ id: string }>`
        SELECT id FROM webhook_deliveries WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`)
      const where = [sql`d.tenant_id = ${scope.tenantId}`, sql`d.mode = ${scope.mode}`]
      if (opts.status !== undefined) where.push(sql`d.status = ${opts.status}`)
      if (after !== undefined) where.push(sql`(d.created_at, d.seq) < (SELECT created_at, seq FROM webhook_deliveries WHERE id = ${after})`)
      const limit = limitOf(opts)
      return pageOf(yield* select(where, limit, false), limit - 1)
    })

    /** Operator view: dead letters of every tenant (or one tenant / mode), newest first. */
    const listDeadLetters = Effect.fn("WebhookDeliveries.listDeadLetters")(function* (opts: ListDeadLettersOptions = {}) {
      const where = [sql`d.status = 'DeadLettered'`]
      if (opts.tenantId !== undefined) where.push(sql`d.tenant_id = ${opts.tenantId}`)
      if (opts.mode !== undefined) where.push(sql`d.mode = ${opts.mode}`)
      return yield* select(where, opts.take)
    })

    /**
     * Requeues a Failed, DeadLettered or Pending delivery for an immediate attempt with a fresh round of retries;
     * `attempts` keeps counting. A Succeeded delivery is never sent again (409). Unknown, another tenant's or
     * mode's id, or an endpoint since deleted: 404.
     */
    const requeue = (id: string, scope: DeliveryScope | undefined) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const scoped = scope === undefined ? sql`true` : sql`d.tenant_id = ${scope.tenantId} AND d.mode = ${scope.mode}`
          const found = yield* sql<{ status: DeliveryStatus; endpointId: string; endpointActive: boolean }>`
            SELECT d.status, d.endpoint_id, e.active AS endpoint_active
            FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.id = ${id} AND ${scoped} FOR UPDATE OF d`.pipe(Effect.orDie)
          const row = found[0]
          if (row === undefined) return yield* notFound("webhook delivery", id)
          if (!row.endpointActive) return yield* notFound("webhook endpoint", row.endpointId)
          if (row.status === "Succeeded") {
            return yield* new Conflict({
              code: "webhook_delivery_succeeded",
              message: `Webhook delivery ${JSON.stringify(id)} already succeeded; a succeeded delivery is never sent again.`
            })
          }
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* sql<DeliveryRow>`
            UPDATE webhook_deliveries d SET status = 'Pending', round_failures = 0, next_attempt_at = ${now}, updated_at = now()
            FROM webhook_endpoints e WHERE d.id = ${id} AND e.id = d.endpoint_id RETURNING ${columns}`.pipe(Effect.orDie)
          return toDelivery(rows[0]!)
        })
      ).pipe(
        // The dispatcher may be asleep until its next due delivery: wake it, here and in the workers.
        Effect.tap(() => wakeEverywhere(sql, [DELIVERIES_DUE])),
        Effect.catchTag("SqlError", Effect.die)
      )

    const replay = Effect.fn("WebhookDeliveries.replay")(function* (scope: DeliveryScope, id: string) {
      return yield* requeue(id, scope)
    })

    /** Operator replay (CLI `dead-letters replay <id>`): any tenant's delivery. */
    const replayDelivery = Effect.fn("WebhookDeliveries.replayDelivery")(function* (id: string) {
      return yield* requeue(id, undefined)
    })

    return { list, replay, listDeadLetters, replayDelivery } as const
  })
}) {}
