import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import type { Mode } from "../../src/domain/Mode.js"
import { newId } from "../../src/domain/Ids.js"
import type { WebhookEndpoint } from "../../src/contract/Webhooks.js"
import { BadRequest, notFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { SecretBox } from "../access/Keys.js"
import { checkRegistration } from "./SafeTarget.js"
import { newSigningSecret } from "./Signature.js"
import { TargetResolver } from "./TargetResolver.js"

const INSECURE_HINT = " Only public https URLs are accepted; for local development the service can be started with " +
  "WEBHOOK_ALLOW_INSECURE_TARGETS=1, which also allows http and private or loopback hosts."

interface EndpointRow {
  readonly id: string
  readonly url: string
  readonly active: boolean
  readonly createdAt: Date
}

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({ id: r.id, url: r.url, active: r.active, createdAt: r.createdAt.toISOString() })

/** A tenant's outbound webhook endpoints. The signing secret leaves this service once: in `create`'s answer. */
export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("services/webhooks/WebhookEndpoints", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const config = yield* AppConfigTag
    const resolve = yield* TargetResolver

    const insecureWouldAllow = (rawUrl: string) => checkRegistration(rawUrl, { allowInsecure: true, resolve })

    /** Only public https targets (every resolved address checked), unless insecure targets are allowed. */
    const create = Effect.fn("WebhookEndpoints.create")(function* (tenantId: string, mode: Mode, rawUrl: string) {
      const url = yield* checkRegistration(rawUrl, { allowInsecure: config.webhookAllowInsecureTargets, resolve }).pipe(
        Effect.catchAll((e) =>
          // A refusal the development switch would lift (http, a local or private host) names the switch.
          Effect.flatMap(Effect.either(insecureWouldAllow(rawUrl)), (lifted) =>
            Effect.fail(new BadRequest({
              code: "invalid_webhook_url",
              message: `The webhook URL is not allowed: ${e.reason}.${lifted._tag === "Right" && !config.webhookAllowInsecureTargets ? INSECURE_HINT : ""}`
            }))
          )
        )
      )
      const secret = newSigningSecret()
      const rows = yield* sql<EndpointRow>`
        INSERT INTO webhook_endpoints ${sql.insert({ id: newId("whe"), tenantId, mode, url: url.href, secretSealed: box.seal(secret) })}
        RETURNING id, url, active, created_at`.pipe(Effect.orDie)
      return { ...toEndpoint(rows[0]!), secret }
    })

    /** Active endpoints, newest first; never their secrets. */
    const list = Effect.fn("WebhookEndpoints.list")(function* (tenantId: string, mode: Mode, page: PageRequest = {}) {
      const after = yield* cursorId(page, "id", (id) => sql<{ id: string }>`
        SELECT id FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND mode = ${mode} AND active AND id = ${id}`)
      const limit = limitOf(page)
      const rows = yield* sql<EndpointRow>`
        SELECT id, url, active, created_at FROM webhook_endpoints
        WHERE tenant_id = ${tenantId} AND mode = ${mode} AND active
          ${after !== undefined ? sql`AND (created_at, id) < (SELECT created_at, id FROM webhook_endpoints WHERE id = ${after})` : sql``}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)
      return pageOf(rows.map(toEndpoint), limit - 1)
    })

    /**
     * Deactivates the endpoint; its unfinished deliveries are dead-lettered in the same transaction, so nothing
     * waits forever for an endpoint that will never be called again.
     */
    const deactivate = Effect.fn("WebhookEndpoints.deactivate")(function* (tenantId: string, mode: Mode, id: string) {
      const done = yield* sql.withTransaction(
        Effect.gen(function* () {
          const rows = yield* sql<{ id: string }>`
            UPDATE webhook_endpoints SET active = false, deactivated_at = now()
            WHERE id = ${id} AND tenant_id = ${tenantId} AND mode = ${mode} AND active RETURNING id`
          if (rows.length === 0) return false
          yield* sql`
            UPDATE webhook_deliveries SET status = 'DeadLettered', next_attempt_at = NULL, last_error = 'endpoint deactivated', updated_at = now()
            WHERE endpoint_id = ${id} AND status IN ('Pending', 'Failed')`
          return true
        })
      ).pipe(Effect.orDie)
      if (!done) return yield* notFound("webhook endpoint", id)
    })

    return { create, list, deactivate } as const
  })
}) {}
