import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import * as crypto from "node:crypto"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import type { RealProvider } from "../../src/domain/ProviderRefs.js"
import { type Connection, Connections } from "./Connections.js"

/**
 * What Paystack's and Monnify's webhooks share (PROVIDERS.md A3, B3): a lower-case hex HMAC-SHA512 of the raw body,
 * keyed with the connection's secret, and the way a webhook finds the connection that must have signed it.
 */
export const signBody = (secretKey: string, rawBody: string) => crypto.createHmac("sha512", secretKey).update(rawBody, "utf8").digest("hex")

/** Constant-time check of a signature header against the secret. */
export const verifyBody = (secretKey: Redacted.Redacted<string>, rawBody: string, signature: string | undefined) => {
  if (!signature || !/^[0-9a-fA-F]{128}$/.test(signature)) return false
  return crypto.timingSafeEqual(Buffer.from(signBody(Redacted.value(secretKey), rawBody), "hex"), Buffer.from(signature.toLowerCase(), "hex"))
}

/** The tenant and mode of one of our accounts at the provider, by its NUBAN, with its provider-side reference. */
export const accountAt = (provider: RealProvider, nuban: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ tenantId: string; mode: Mode; reference: string | null }>`SELECT tenant_id, mode, provider_customer_code AS reference
      FROM virtual_accounts WHERE provider = ${provider} AND nuban = ${nuban} LIMIT 1`).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

/** The tenant and mode of one of our transfers at the provider, by the provider-side reference we derived for it. */
export const transferAt = (provider: RealProvider, providerReference: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ tenantId: string; mode: Mode; merchantTxRef: string }>`SELECT tenant_id, mode, merchant_tx_ref FROM transfers
      WHERE provider = ${provider} AND provider_reference = ${providerReference} LIMIT 1`).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

/**
 * The connection that signed the body: the routed scope's, when the event names something of ours (so another
 * tenant's key is refused); else, the event naming nothing of ours, any of the provider's connections in `modes`.
 */
export const signerOf = (provider: RealProvider, route: Scope | undefined, modes: ReadonlyArray<Mode>, rawBody: string, signature: string | undefined) =>
  Effect.gen(function* () {
    const connections = yield* Connections
    if (route) {
      const c = yield* connections.find(route)
      return c && c.provider === provider && verifyBody(c.secretKey, rawBody, signature) ? c : undefined
    }
    for (const mode of modes) {
      for (const c of yield* connections.allOf(provider, mode)) if (verifyBody(c.secretKey, rawBody, signature)) return c
    }
    return undefined as Connection | undefined
  })
