import { Effect, Either } from "effect"
import { BadGateway, BadRequest, Conflict } from "../../src/contract/Problems.js"
import type { Scope } from "../../src/domain/Mode.js"
import { paystackKeyMode } from "../../src/domain/ProviderRefs.js"
import { Tenants } from "../Tenants.js"
import { Connections } from "./Connections.js"
import { Providers } from "./Providers.js"
import { AppConfigTag } from "../../src/Config.js"

export interface ConnectRequest {
  readonly provider: "paystack" | "sandbox"
  readonly secretKey?: string | undefined
  readonly preferredBank?: string | undefined
}

/** The connection as an answer shows it: never a provider secret (the sandbox's own webhook secret is the tenant's). */
export interface ProviderView {
  readonly mode: Scope["mode"]
  /** `sandbox`, `paystack`, or `none` (live mode with no connection and SANDBOX_LIVE_MODE off). */
  readonly provider: string
  readonly connectedAt: string | null
  readonly keyHint: string | null
  readonly preferredBank: string | null
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
export class ProviderSetup extends Effect.Service<ProviderSetup>()("services/provider/ProviderSetup", {
  effect: Effect.gen(function* () {
    const connections = yield* Connections
    const providers = yield* Providers
    const tenants = yield* Tenants
    const config = yield* AppConfigTag

    const view = Effect.fn("ProviderSetup.view")(function* (scope: Scope, origin: string) {
      const base = config.publicUrl._tag === "Some" ? config.publicUrl.value : origin
      const c = yield* connections.find(scope)
      if (c) {
        return shown({
          mode: scope.mode, provider: c.provider, connectedAt: c.connectedAt.toISOString(), keyHint: c.keyHint, preferredBank: c.preferredBank,
          webhookUrl: `${base}/webhooks/${c.provider}`, receiverPath: `/webhooks/${c.provider}`, signatureHeader: "x-paystack-signature"
        })
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
        if (input.secretKey !== undefined || input.preferredBank !== undefined) {
          return yield* new BadRequest({ code: "validation_failed", message: "The sandbox takes no credentials: send { \"provider\": \"sandbox\" } alone." })
        }
        yield* connections.remove(scope)
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "provider.disconnected", subject: null })
        return yield* view(scope, origin)
      }
      if (input.secretKey === undefined) {
        return yield* new BadRequest({ code: "validation_failed", message: "secretKey is required for paystack (sk_test_… in test mode, sk_live_… in live mode)." })
      }
      const keyMode = paystackKeyMode(input.secretKey)
      if (keyMode === undefined) {
        return yield* new BadRequest({ code: "provider_credentials_invalid", message: "secretKey is not a Paystack secret key: it starts sk_test_ or sk_live_ (a public key, pk_…, cannot be used). Nothing was saved." })
      }
      if (keyMode !== scope.mode) {
        return yield* new BadRequest({
          code: "provider_mode_mismatch",
          message: `This is a ${keyMode}-mode key (sk_${keyMode}_…) and the token acts in ${scope.mode} mode: connect ${scope.mode} mode with an sk_${scope.mode}_… key. Nothing was saved.`
        })
      }
      const preferredBank = input.preferredBank ?? defaultBank(scope.mode)
      const adapter = yield* providers.candidate(scope.mode, { secretKey: input.secretKey, preferredBank })
      const proved = yield* Effect.either(adapter.verifyCredentials())
      if (Either.isLeft(proved)) {
        if (proved.left._tag === "CredentialsRejected") {
          return yield* new BadRequest({ code: "provider_credentials_invalid", message: "Paystack refused this secret key (401 Invalid key). Nothing was saved." })
        }
        yield* Effect.logWarning(`provider connection of tenant ${scope.tenantId} (${scope.mode}): Paystack did not answer the credentials check (${proved.left.reason})`)
        return yield* new BadGateway({ code: "provider_unavailable", message: "Paystack did not answer the credentials check; nothing was saved. Try again shortly." })
      }
      yield* connections.save(scope, { provider: "paystack", secretKey: input.secretKey, preferredBank }, actor)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "provider.connected", subject: "paystack", details: { preferredBank } })
      return yield* view(scope, origin)
    })

    return { view, connect } as const
  })
}) {}
