import { Effect, Layer, Option, Redacted, Ref } from "effect"
import { Conflict } from "../../src/contract/Problems.js"
import type { Scope } from "../../src/domain/Mode.js"
import { AppConfigTag } from "../../src/Config.js"
import { Tenants } from "../access/Tenants.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import { BankProvider, type BankProviderShape, type ProviderBank } from "./BankProvider.js"
import { type Connection, Connections, type NewConnection } from "./Connections.js"
import type { ConnectedProvider } from "./ConnectedProvider.js"
import { makeMonnifyAdapter } from "./MonnifyAdapter.js"
import { makePaystackAdapter } from "./PaystackAdapter.js"
import { ProviderCircuits } from "./ProviderHttp.js"

/** A tenant's provider for one mode, as every money path calls it. */
export interface ScopedProvider extends BankProviderShape {
  /** The sandbox merchant id of the scope (the sandbox adapter's key); empty for a real provider, which ignores it. */
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
 * Which provider serves a tenant's mode, chosen at call time: its connection's adapter (Paystack, Monnify), else the built-in
 * sandbox in test mode, and in live mode only under SANDBOX_LIVE_MODE=1; otherwise 409 provider_not_connected. No
 * live-mode path reaches the sandbox without that switch.
 */
export class Providers extends Effect.Service<Providers>()("services/providers/Providers", {
  effect: Effect.gen(function* () {
    const sandbox = yield* BankProvider
    const connections = yield* Connections
    const tenants = yield* Tenants
    const config = yield* AppConfigTag
    const circuits = yield* ProviderCircuits
    if (config.sandboxLiveMode) {
      yield* Effect.logWarning("SANDBOX_LIVE_MODE is on: the built-in sandbox bank serves live mode for tenants with no provider connection (development and demos only: no real money moves)")
    }
    type BankCache = Ref.Ref<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>
    /** The bank list of each provider and mode, shared by its connections (Paystack's is the same for every key). */
    const bankLists: Record<string, BankCache> = {}
    for (const p of ["paystack", "monnify"]) for (const m of ["test", "live"]) bankLists[`${p}|${m}`] = yield* Ref.make<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>(undefined)
    /** Adapters by connection (a new key or bank makes a new one). */
    const adapters = new Map<string, ConnectedProvider>()

    /** Monnify's host: MONNIFY_BASE_URL, else its sandbox for test connections and its live host for live ones (B1). */
    const monnifyBase = (mode: Scope["mode"]) =>
      Option.getOrElse(config.monnifyBaseUrl, () => (mode === "test" ? "https://sandbox.monnify.com" : "https://api.monnify.com"))

    /** The adapter for credentials (the timings are read at build time). */
    const build = (mode: Scope["mode"], c: NewConnection) =>
      Effect.gen(function* () {
        const settings = yield* MoneyOutSettings
        const timings = { timeoutMs: settings.providerTimeoutMs, bankListTtlMs: settings.bankListTtlMs }
        const banks = bankLists[`${c.provider}|${mode}`]!
        const made: ConnectedProvider = c.provider === "paystack"
          ? yield* makePaystackAdapter({ secretKey: Redacted.make(c.secretKey), preferredBank: c.preferredBank }, { baseUrl: config.paystackBaseUrl, ...timings }, banks as never)
          : yield* makeMonnifyAdapter({
            apiKey: Redacted.make(c.apiKey), secretKey: Redacted.make(c.secretKey), contractCode: c.contractCode,
            walletAccountNumber: c.walletAccountNumber, preferredBanks: c.preferredBanks
          }, { baseUrl: monnifyBase(mode), ...timings }, banks)
        return made
      }).pipe(Effect.provideService(ProviderCircuits, circuits))

    const specOf = (c: Connection): NewConnection =>
      c.provider === "paystack"
        ? { provider: "paystack", secretKey: Redacted.value(c.secretKey), preferredBank: c.preferredBank }
        : { provider: "monnify", apiKey: Redacted.value(c.apiKey), secretKey: Redacted.value(c.secretKey), contractCode: c.contractCode, walletAccountNumber: c.walletAccountNumber, preferredBanks: c.preferredBanks }

    /** The adapter for a connection (made once per connection version). */
    const adapterFor = (c: Connection) =>
      Effect.gen(function* () {
        const key = `${c.tenantId}|${c.mode}|${c.connectedAt.getTime()}`
        const kept = adapters.get(key)
        if (kept) return kept
        const made = yield* build(c.mode, specOf(c))
        if (adapters.size > 10_000) adapters.clear()
        adapters.set(key, made)
        return made
      })

    /** An adapter for credentials not saved yet (PUT /dashboard/provider proves them first). */
    const candidate = (mode: Scope["mode"], c: NewConnection) => build(mode, c)

    const resolve = Effect.fn("Providers.resolve")(function* (scope: Scope) {
      const connection = yield* connections.find(scope)
      // Real adapters ignore the sandbox merchant id: no read (and no decryption) of the tenant's sandbox credentials.
      if (connection) return { ...(yield* adapterFor(connection)), merchantId: "", connection } satisfies ScopedProvider
      if (scope.mode === "live" && !config.sandboxLiveMode) return yield* notConnected()
      const { merchantId } = yield* tenants.providerFor(scope.tenantId, scope.mode).pipe(Effect.orDie)
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
