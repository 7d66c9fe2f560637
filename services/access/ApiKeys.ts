import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { newId, newSecret } from "../../src/domain/Ids.js"
import { notFound, Unauthorized } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { hashSecret, verifySecret } from "./Passwords.js"
import { Tenants } from "./Tenants.js"
import { Tokens } from "./Tokens.js"

export interface ApiKeyRow {
  readonly id: string
  readonly mode: Mode
  readonly clientId: string
  readonly createdAt: Date
  readonly revokedAt: Date | null
}

const badClient = () => new Unauthorized({ code: "invalid_client", message: "Unknown clientId, wrong clientSecret, or a revoked key." })

/** API keys: a client id and a secret shown once, stored as an Argon2id hash; exchanged for bearer tokens. */
export class ApiKeys extends Effect.Service<ApiKeys>()("services/ApiKeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tenants = yield* Tenants
    const tokens = yield* Tokens

    const create = Effect.fn("ApiKeys.create")(function* (tenantId: string, mode: Mode) {
      if (mode === "live") yield* tenants.requireApproved(tenantId, "Creating a live API key")
      const id = newId("key")
      const clientId = newId(`ck_${mode}`, 10)
      const clientSecret = newSecret(`sk_${mode}`)
      const secretHash = yield* hashSecret(clientSecret)
      yield* sql`INSERT INTO api_keys ${sql.insert({ id, tenantId, mode, clientId, secretHash })}`.pipe(Effect.orDie)
      return { id, mode, clientId, clientSecret }
    })

    const list = Effect.fn("ApiKeys.list")(function* (tenantId: string, page: PageRequest = {}) {
      const after = yield* cursorId(page, "id", (id) => sql<{ id: string }>`SELECT id FROM api_keys WHERE tenant_id = ${tenantId} AND id = ${id}`)
      const limit = limitOf(page)
      const rows = yield* sql<ApiKeyRow>`
        SELECT id, mode, client_id, created_at, revoked_at FROM api_keys WHERE tenant_id = ${tenantId}
          ${after !== undefined ? sql`AND (created_at, id) < (SELECT created_at, id FROM api_keys WHERE id = ${after})` : sql``}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)
      return pageOf(rows, limit - 1)
    })

    const revoke = Effect.fn("ApiKeys.revoke")(function* (tenantId: string, keyId: string) {
      const rows = yield* sql<{ id: string }>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ${keyId} AND tenant_id = ${tenantId} RETURNING id`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* notFound("api key", keyId)
    })

    const exchange = Effect.fn("ApiKeys.exchange")(function* (clientId: string, clientSecret: string) {
      const rows = yield* sql<{ id: string; tenantId: string; mode: Mode; secretHash: string; revokedAt: Date | null }>`
        SELECT id, tenant_id, mode, secret_hash, revoked_at FROM api_keys WHERE client_id = ${clientId}`.pipe(Effect.orDie)
      const key = rows[0]
      if (!key || key.revokedAt !== null) return yield* badClient()
      if (!(yield* verifySecret(key.secretHash, clientSecret))) return yield* badClient()
      if (key.mode === "live") yield* tenants.requireApproved(key.tenantId, "A live API key")
      return yield* tokens.mint({ tenantId: key.tenantId, mode: key.mode, plane: "api", subjectId: key.id })
    })

    /** Is the key still usable? Checked on every request so a revocation takes effect at once. */
    const isActive = Effect.fn("ApiKeys.isActive")(function* (tenantId: string, keyId: string) {
      const rows = yield* sql<{ revokedAt: Date | null }>`SELECT revoked_at FROM api_keys WHERE id = ${keyId} AND tenant_id = ${tenantId}`
      return rows.length === 1 && rows[0]!.revokedAt === null
    }, Effect.orDie)

    return { create, list, revoke, exchange, isActive } as const
  })
}) {}
