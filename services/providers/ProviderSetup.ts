import { Effect, Either } from "effect"
import { BadGateway, BadRequest, Conflict } from "../../src/contract/Problems.js"
import type { Scope } from "../../src/domain/Mode.js"
import { monnifyKeyMode, paystackKeyMode } from "../../src/domain/ProviderRefs.js"
import { Tenants } from "../access/Tenants.js"
import { Connections, type NewConnection } from "./Connections.js"
import { Providers } from "./Providers.js"
import { AppConfigTag } from "../../src/Config.js"

export interface ConnectRequest {
  readonly provider: "paystack" | "monnify" | "sandbox"
  readonly secretKey?: string | undefined
  readonly preferredBank?: string | undefined
  readonly apiKey?: string | undefined
  readonly contractCode?: string | undefined
  readonly walletAccountNumber?: string | undefined
  readonly preferredBanks?: ReadonlyArray<string> | undefined
}

/** The connection as an answer shows it: never a provider secret (the sandbox's own webhook secret is the tenant's). */
export interface ProviderView {
  readonly mode: Scope["mode"]
  /** `sandbox`, `paystack`, or `none` (live mode with no connection and SANDBOX_LIVE_MODE off). */
  readonly provider: string
  readonly connectedAt: string | null
  readonly keyHint: string | null
  readonly preferredBank: string | null
  /** Monnify: the contract code, the wallet that pays out, and the partner banks of new accounts. */
  readonly contractCode?: string
  readonly walletAccountNumber?: string
  readonly preferredBanks?: ReadonlyArray<string>
  /** Where the provider must send its webhooks (to paste into its dashboard). */
  readonly webhookUrl: string
  readonly receiverPath: string
  readonly signatureHeader: string
  readonly merchantId?: string
  readonly webhookSecret?: string
  readonly canonicalString?: string
}

const shown = (v: ProviderView): ProviderView => v

/** Paystack's partner bank for new accounts when the tenant names none: Paystack's test bank in test mode (A1). */
const defaultBank = (mode: Scope["mode"]) => (mode === "test" ? "test-bank" : "wema-bank")

/**
 * `GET` and `PUT /api/v1/dashboard/provider` (DESIGN.md, "Real bank providers"): the connection of the token's mode,
 * proved with one harmless call before it is saved (Paystack `GET /bank?perPage=1`).
 */
export class ProviderSetup extends Effect.Service<ProviderSetup>()("services/providers/ProviderSetup", {
  effect: Effect.gen(function* () {
    const connections = yield* Connections
    const providers = yield* Providers
    const tenants = yield* Tenants
    const config = yield* AppConfigTag

    const view = Effect.fn("ProviderSetup.view")(function* (scope: Scope, origin: string) {
      const base = config.publicUrl._tag === "Some" ? config.publicUrl.value : origin
      const c = yield* connections.find(scope)
      if (c) {
        const common = { mode: scope.mode, provider: c.provider, connectedAt: c.connectedAt.toISOString(), keyHint: c.keyHint, webhookUrl: `${base}/webhooks/${c.provider}`, receiverPath: `/webhooks/${c.provider}` }
        return c.provider === "paystack"
          ? shown({ ...common, preferredBank: c.preferredBank, signatureHeader: "x-paystack-signature" })
          : shown({ ...common, preferredBank: null, contractCode: c.contractCode, walletAccountNumber: c.walletAccountNumber, preferredBanks: c.preferredBanks, signatureHeader: "monnify-signature" })
      }
      if (scope.mode === "live" && !config.sandboxLiveMode) {
        return shown({
          mode: scope.mode, provider: "none", connectedAt: null, keyHint: null, preferredBank: null,
          webhookUrl: `${base}/webhooks/paystack`, receiverPath: "/webhooks/paystack", signatureHeader: "x-paystack-signature"
        })
      }
      const s = yield* tenants.providerFor(scope.tenantId, scope.mode).pipe(Effect.orDie)
      return shown({
        mode: scope.mode, provider: "sandbox", connectedAt: null, keyHint: null, preferredBank: null,
        webhookUrl: `${base}/webhooks/sandbox`, receiverPath: "/webhooks/sandbox", signatureHeader: "X-Sandbox-Signature",
        merchantId: s.merchantId, webhookSecret: s.webhookSecret, canonicalString: "event|merchantId|sessionId|accountNumber|amountKobo|paidAt"
      })
    })

    const connect = Effect.fn("ProviderSetup.connect")(function* (scope: Scope, input: ConnectRequest, actor: string, origin: string) {
      const target = input.provider
      const use = yield* connections.inUse(scope, target)
      if (use.accounts > 0 || use.transfers > 0) {
        const current = (yield* connections.find(scope))?.provider ?? "sandbox"
        if (current !== target) {
          return yield* new Conflict({
            code: "provider_in_use",
            message: `This tenant's ${scope.mode} mode has ${use.accounts} virtual account(s) and ${use.transfers} open transfer(s) at ${current}; ` +
              `their NUBANs and money stay there, so the mode cannot move to ${target}. Nothing was changed.`
          })
        }
      }
      if (target === "sandbox") {
        if ([input.secretKey, input.preferredBank, input.apiKey, input.contractCode, input.walletAccountNumber, input.preferredBanks].some((v) => v !== undefined)) {
          return yield* new BadRequest({ code: "validation_failed", message: "The sandbox takes no credentials: send { \"provider\": \"sandbox\" } alone." })
        }
        yield* connections.remove(scope)
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "provider.disconnected", subject: null })
        return yield* view(scope, origin)
      }
      const spec = yield* specOf(scope, input)
      const adapter = yield* providers.candidate(scope.mode, spec)
      const name = spec.provider === "paystack" ? "Paystack" : "Monnify"
      const proved = yield* Effect.either(adapter.verifyCredentials())
      if (Either.isLeft(proved)) {
        if (proved.left._tag === "CredentialsRejected") {
          return yield* new BadRequest({ code: "provider_credentials_invalid", message: `${name} refused these credentials (401). Nothing was saved.` })
        }
        yield* Effect.logWarning(`provider connection of tenant ${scope.tenantId} (${scope.mode}): ${name} did not answer the credentials check (${proved.left.reason})`)
        return yield* new BadGateway({ code: "provider_unavailable", message: `${name} did not answer the credentials check; nothing was saved. Try again shortly.` })
      }
      yield* connections.save(scope, spec, actor)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "provider.connected", subject: spec.provider })
      return yield* view(scope, origin)
    })

    /** The request as credentials to prove, or a 400 that says what is missing or of the wrong mode. */
    const specOf = (scope: Scope, input: ConnectRequest) =>
      Effect.gen(function* () {
        const missing = (fields: ReadonlyArray<string>, what: string) =>
          new BadRequest({ code: "validation_failed", message: `${fields.join(", ")} ${fields.length > 1 ? "are" : "is"} required for ${what}. Nothing was saved.` })
        const mismatch = (keyMode: string, prefix: string) =>
          new BadRequest({
            code: "provider_mode_mismatch",
            message: `This is a ${keyMode}-mode key (${prefix}…) and the token acts in ${scope.mode} mode: connect ${scope.mode} mode with its own keys. Nothing was saved.`
          })
        if (input.provider === "paystack") {
          if (input.apiKey !== undefined || input.contractCode !== undefined || input.walletAccountNumber !== undefined || input.preferredBanks !== undefined) {
            return yield* new BadRequest({ code: "validation_failed", message: "apiKey, contractCode, walletAccountNumber and preferredBanks are Monnify's; Paystack takes secretKey and preferredBank." })
          }
          if (input.secretKey === undefined) return yield* missing(["secretKey"], "paystack (sk_test_… in test mode, sk_live_… in live mode)")
          const keyMode = paystackKeyMode(input.secretKey)
          if (keyMode === undefined) {
            return yield* new BadRequest({ code: "provider_credentials_invalid", message: "secretKey is not a Paystack secret key: it starts sk_test_ or sk_live_ (a public key, pk_…, cannot be used). Nothing was saved." })
          }
          if (keyMode !== scope.mode) return yield* mismatch(keyMode, `sk_${keyMode}_`)
          return { provider: "paystack", secretKey: input.secretKey, preferredBank: input.preferredBank ?? defaultBank(scope.mode) } satisfies NewConnection
        }
        if (input.preferredBank !== undefined) {
          return yield* new BadRequest({ code: "validation_failed", message: "Monnify takes preferredBanks (CBN codes, such as [\"50515\"]), not preferredBank." })
        }
        const absent = (["apiKey", "secretKey", "contractCode", "walletAccountNumber"] as const).filter((f) => input[f] === undefined)
        if (absent.length > 0) return yield* missing(absent, "monnify")
        const keyMode = monnifyKeyMode(input.apiKey!)
        if (keyMode === undefined) {
          return yield* new BadRequest({ code: "provider_credentials_invalid", message: "apiKey is not a Monnify API key: it starts MK_TEST_ or MK_PROD_. Nothing was saved." })
        }
        if (keyMode !== scope.mode) return yield* mismatch(keyMode, keyMode === "test" ? "MK_TEST_" : "MK_PROD_")
        return {
          provider: "monnify", apiKey: input.apiKey!, secretKey: input.secretKey!, contractCode: input.contractCode!,
          walletAccountNumber: input.walletAccountNumber!, preferredBanks: input.preferredBanks ?? ["50515"]
        } satisfies NewConnection
      })

    return { view, connect } as const
  })
}) {}
