import { Clock, Effect, Redacted, Schema } from "effect"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import { keyHint, type RealProvider } from "../../src/domain/ProviderRefs.js"
import { SecretBox } from "../access/Keys.js"
import { type ConnectionRow, makeConnectionStore } from "./ConnectionStore.js"

/** Each provider's secrets, as sealed, and its settings (not secret), as stored. */
const Sealed = Schema.Union(
  Schema.Struct({ provider: Schema.Literal("paystack"), secretKey: Schema.String }),
  Schema.Struct({ provider: Schema.Literal("monnify"), apiKey: Schema.String, secretKey: Schema.String })
)
const PaystackSettings = Schema.Struct({ preferredBank: Schema.String })
const MonnifySettings = Schema.Struct({ contractCode: Schema.String, walletAccountNumber: Schema.String, preferredBanks: Schema.Array(Schema.String) })

interface ConnectionBase {
  readonly tenantId: string
  readonly mode: Mode
  /** The last 4 characters of the key (Paystack's secret key, Monnify's API key). */
  readonly keyHint: string
  readonly connectedAt: Date
  /** The key that signs the provider's webhooks (Paystack's secret key, Monnify's client secret). */
  readonly secretKey: Redacted.Redacted<string>
}
export interface PaystackConnection extends ConnectionBase {
  readonly provider: "paystack"
  readonly preferredBank: string
}
export interface MonnifyConnection extends ConnectionBase {
  readonly provider: "monnify"
  readonly apiKey: Redacted.Redacted<string>
  readonly contractCode: string
  readonly walletAccountNumber: string
  readonly preferredBanks: ReadonlyArray<string>
}
export type Connection = PaystackConnection | MonnifyConnection

/** What PUT /dashboard/provider saves (in clear, sealed here). */
export type NewConnection =
  | { readonly provider: "paystack"; readonly secretKey: string; readonly preferredBank: string }
  | { readonly provider: "monnify"; readonly apiKey: string; readonly secretKey: string; readonly contractCode: string; readonly walletAccountNumber: string; readonly preferredBanks: ReadonlyArray<string> }

/** How long a connection read stays in memory: a key rolled in one process reaches the others within this. */
const KEPT_MS = 5_000

/**
 * Tenants' connections to real providers (one per tenant and mode), their secrets sealed with AES-256-GCM under
 * DATA_ENCRYPTION_KEY (SecretBox). A connection's secret lives in memory as Redacted only: it never prints.
 */
export class Connections extends Effect.Service<Connections>()("services/providers/Connections", {
  effect: Effect.gen(function* () {
    const store = yield* makeConnectionStore
    const box = yield* SecretBox
    const kept = new Map<string, { readonly until: number; readonly connection: Connection | undefined }>()
    const keyOf = (scope: Scope) => `${scope.tenantId}|${scope.mode}`

    const open = (r: ConnectionRow): Connection => {
      const sealed = Schema.decodeUnknownSync(Sealed)(JSON.parse(box.open(r.credentialsSealed)))
      const base = { tenantId: r.tenantId, mode: r.mode, keyHint: r.keyHint, connectedAt: r.connectedAt, secretKey: Redacted.make(sealed.secretKey) }
      if (sealed.provider === "paystack") {
        return { ...base, provider: "paystack", preferredBank: Schema.decodeUnknownSync(PaystackSettings)(r.settings).preferredBank }
      }
      const settings = Schema.decodeUnknownSync(MonnifySettings)(r.settings)
      return { ...base, provider: "monnify", apiKey: Redacted.make(sealed.apiKey), ...settings }
    }

    /** The scope's connection, or undefined (the sandbox serves it, or nothing does). */
    const find = Effect.fn("Connections.find")(function* (scope: Scope) {
      const now = yield* Clock.currentTimeMillis
      const hit = kept.get(keyOf(scope))
      if (hit && hit.until > now) return hit.connection
      const rows = yield* store.find(scope)
      const connection = rows[0] ? open(rows[0]) : undefined
      if (kept.size > 10_000) kept.clear()
      kept.set(keyOf(scope), { until: now + KEPT_MS, connection })
      return connection
    }, Effect.orDie)

    /** Every connection to the provider in the mode: the receiver's last resort for a webhook it cannot route. */
    const allOf = Effect.fn("Connections.allOf")(function* (provider: RealProvider, mode: Mode) {
      const rows = yield* store.allOf(provider, mode)
      return rows.map(open)
    }, Effect.orDie)

    /** Saves (or replaces) the scope's connection. */
    const save = Effect.fn("Connections.save")(function* (scope: Scope, c: NewConnection, actor: string) {
      const [secrets, settings, key] = c.provider === "paystack"
        ? [{ provider: c.provider, secretKey: c.secretKey }, { preferredBank: c.preferredBank }, c.secretKey] as const
        : [{ provider: c.provider, apiKey: c.apiKey, secretKey: c.secretKey },
          { contractCode: c.contractCode, walletAccountNumber: c.walletAccountNumber, preferredBanks: c.preferredBanks }, c.apiKey] as const
      yield* store.upsert({
        tenantId: scope.tenantId, mode: scope.mode, provider: c.provider, credentialsSealed: box.seal(JSON.stringify(secrets)),
        keyHint: keyHint(key), settings: JSON.stringify(settings), connectedBy: actor
      })
      kept.delete(keyOf(scope))
    }, Effect.orDie)

    /** Back to the sandbox (or to nothing, in live mode). */
    const remove = Effect.fn("Connections.remove")(function* (scope: Scope) {
      yield* store.remove(scope)
      kept.delete(keyOf(scope))
    }, Effect.orDie)

    /** Every connection, for the sync job (without their secrets opened until used). */
    const scopes = Effect.fn("Connections.scopes")(function* () {
      return yield* store.scopes()
    }, Effect.orDie)

    /** What keeps the scope on its current provider: virtual accounts there, transfers still open there. */
    const inUse = Effect.fn("Connections.inUse")(function* (scope: Scope, provider: string) {
      const [row] = yield* store.inUse(scope, provider)
      return row!
    }, Effect.orDie)

    return { find, allOf, save, remove, scopes, inUse } as const
  })
}) {}
