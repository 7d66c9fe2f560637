import { Effect, Layer, Redacted, Ref } from "effect"
import { Conflict } from "../../src/contract/Problems.js"
import type { Scope } from "../../src/domain/Mode.js"
import { AppConfigTag } from "../../src/Config.js"
import { Tenants } from "../Tenants.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import { BankProvider, type BankProviderShape } from "./BankProvider.js"
import { type Connection, Connections } from "./Connections.js"
import { type ConnectedProvider, makePaystackAdapter } from "./PaystackAdapter.js"
import type { PaystackBank } from "./PaystackWire.js"
import { ProviderCircuits } from "./ProviderHttp.js"

/** A tenant's provider for one mode, as every money path calls it. */
export interface ScopedProvider extends BankProviderShape {
  /** The sandbox merchant id of the scope (the sandbox adapter's key; real adapters ignore it). */
  readonly merchantId: string
  /** The real provider's connection, or undefined when the sandbox serves the scope. */
  readonly connection: Connection | undefined
}

export const notConnected = () =>
  new Conflict({
    code: "provider_not_connected",
    message: "Live mode moves real money through a bank provider, and this tenant has none connected for live mode: connect a bank provider with PUT /api/v1/dashboard/provider (Owner or Admin, with a live-mode dashboard token)."
  })

/**
 * Which provider serves a tenant's mode, chosen at call time: its connection's adapter (Paystack), else the built-in
 * sandbox in test mode, and in live mode only under SANDBOX_LIVE_MODE=1; otherwise 409 provider_not_connected. No
 * live-mode path reaches the sandbox without that switch.
 */
export class Providers extends Effect.Service<Providers>()("services/provider/Providers", {
  effect: Effect.gen(function* () {
    const sandbox = yield* BankProvider
    const connections = yield* Connections
    const tenants = yield* Tenants
    const config = yield* AppConfigTag
    const circuits = yield* ProviderCircuits
    if (config.sandboxLiveMode) {
      yield* Effect.logWarning("SANDBOX_LIVE_MODE is on: the built-in sandbox bank serves live mode for tenants with no provider connection (development and demos only: no real money moves)")
    }
    const bankLists = {
      test: yield* Ref.make<{ readonly until: number; readonly banks: ReadonlyArray<PaystackBank> } | undefined>(undefined),
      live: yield* Ref.make<{ readonly until: number; readonly banks: ReadonlyArray<PaystackBank> } | undefined>(undefined)
    }
    /** Adapters by connection (a new key or bank makes a new one). */
    const adapters = new Map<string, ConnectedProvider>()

    /** A Paystack adapter for a key and bank (the timings are read at build time). */
    const build = (mode: Scope["mode"], secretKey: Redacted.Redacted<string>, preferredBank: string) =>
      Effect.flatMap(MoneyOutSettings, (settings) =>
        makePaystackAdapter({ secretKey, preferredBank }, {
          baseUrl: config.paystackBaseUrl, timeoutMs: settings.providerTimeoutMs, bankListTtlMs: settings.bankListTtlMs
        }, bankLists[mode]).pipe(Effect.provideService(ProviderCircuits, circuits)))

    /** The adapter for a connection (made once per connection version). */
    const adapterFor = (c: Connection) =>
      Effect.gen(function* () {
        const key = `${c.tenantId}|${c.mode}|${c.connectedAt.getTime()}`
        const kept = adapters.get(key)
        if (kept) return kept
        const made = yield* build(c.mode, c.secretKey, c.preferredBank)
        if (adapters.size > 10_000) adapters.clear()
        adapters.set(key, made)
        return made
      })

    /** An adapter for credentials not saved yet (PUT /dashboard/provider proves them first). */
    const candidate = (mode: Scope["mode"], c: { readonly secretKey: string; readonly preferredBank: string }) =>
      build(mode, Redacted.make(c.secretKey), c.preferredBank)

    const resolve = Effect.fn("Providers.resolve")(function* (scope: Scope) {
      const connection = yield* connections.find(scope)
      const { merchantId } = yield* tenants.providerFor(scope.tenantId, scope.mode).pipe(Effect.orDie)
      if (connection) return { ...(yield* adapterFor(connection)), merchantId, connection } satisfies ScopedProvider
      if (scope.mode === "live" && !config.sandboxLiveMode) return yield* notConnected()
      return { ...sandbox, merchantId, connection: undefined } satisfies ScopedProvider
    })

    /** The connected adapter of a scope (for the sync), or undefined when the scope has no connection. */
    const connected = Effect.fn("Providers.connected")(function* (scope: Scope) {
      const connection = yield* connections.find(scope)
      return connection ? { connection, adapter: yield* adapterFor(connection) } : undefined
    })

    /** Who a new transfer or account of the scope goes to: the connected provider, else the sandbox (resolve decides if it may). */
    const nameOf = (scope: Scope) => Effect.map(connections.find(scope), (c) => c?.provider ?? sandbox.name)

    return { resolve, connected, candidate, nameOf } as const
  })
}) {}

export const ProvidersLive = Providers.Default.pipe(Layer.provideMerge(Layer.mergeAll(Connections.Default, ProviderCircuits.Default)))
