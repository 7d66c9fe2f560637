import { Clock, Effect, Ref } from "effect"
import { BadGateway, BadRequest, NotFound, Unprocessable } from "../../src/contract/Problems.js"
import { findBankByCode, NIGERIAN_BANKS, SANDBOX_BANK } from "../../src/domain/Banks.js"
import { matchNames } from "../../src/domain/NameMatch.js"
import type { ProviderBank } from "../providers/BankProvider.js"
import { Providers, type ScopedProvider } from "../providers/Providers.js"
import type { Scope } from "../../src/domain/Mode.js"
import { MoneyOutSettings, withProviderTimeout } from "./Settings.js"

export interface Recipient {
  readonly accountNumber: string
  readonly bankCode: string
  readonly bankName: string
  readonly accountName: string
}

const providerUnavailable = (what: string) =>
  new BadGateway({ code: "provider_unavailable", message: `The bank provider did not answer the ${what}. Nothing was sent; retry shortly (with the same reference, it is safe).` })

/** The fallback bank list: the real Nigerian institutions, without the sandbox bank (only the sandbox provider has it). */
const BUILT_IN_BANKS: ReadonlyArray<ProviderBank> = NIGERIAN_BANKS.filter((b) => b.code !== SANDBOX_BANK.code).map((b) => ({ name: b.name, code: b.code }))

/** A name matches when the matcher finds it at least a partial match (initials, order and honorifics aside). */
export const namesMatch = (given: string, resolved: string) => matchNames(given, resolved).band !== "WEAK"

/**
 * Who is at the other end of a transfer: the bank list (the provider's, cached, with a built-in fallback) and name
 * enquiry, which every payout and refund runs on its destination before any money moves.
 */
export class BankDirectory extends Effect.Service<BankDirectory>()("services/transfers/BankDirectory", {
  effect: Effect.gen(function* () {
    const providers = yield* Providers
    /** The last bank list of each provider and mode (Paystack's list is the same for every connection of a mode). */
    const bankCaches = new Map<string, Ref.Ref<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>>()
    const cacheOf = (key: string) =>
      Effect.gen(function* () {
        const kept = bankCaches.get(key)
        if (kept) return kept
        const made = yield* Ref.make<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>(undefined)
        bankCaches.set(key, made)
        return made
      })

    /**
     * The provider's bank list, kept for `bankListTtlMs`; when the provider fails, the last list it gave, or else the
     * built-in Nigerian list. Never an error.
     */
    const banks = Effect.fn("BankDirectory.banks")(function* (scope: Scope) {
      const resolved = yield* Effect.either(providers.resolve(scope))
      // No provider serves the mode (live, none connected): the built-in list, as when the provider fails.
      if (resolved._tag === "Left") return { banks: BUILT_IN_BANKS, source: "built-in" as const }
      return yield* banksOf(resolved.right, scope.mode)
    })

    /** The bank list of a provider already resolved for the scope. */
    const banksOf = (provider: ScopedProvider, mode: Scope["mode"]) =>
      Effect.gen(function* () {
      const bankCache = yield* cacheOf(`${provider.name}|${mode}`)
      const now = yield* Clock.currentTimeMillis
      const cached = yield* Ref.get(bankCache)
      if (cached && cached.until > now) return { banks: cached.banks, source: "provider" as const }
      const settings = yield* MoneyOutSettings
      return yield* withProviderTimeout(provider.name, "bank list", provider.listBanks()).pipe(
        Effect.tap((list) => Ref.set(bankCache, { until: now + settings.bankListTtlMs, banks: list })),
        Effect.map((list) => ({ banks: list, source: "provider" as const })),
        Effect.catchAll((e) =>
          Effect.logWarning(`bank list: the provider failed (${e.reason}); answering ${cached ? "its last list" : "the built-in list"}`).pipe(
            Effect.as(cached
              ? { banks: cached.banks, source: "cache" as const }
              : { banks: BUILT_IN_BANKS, source: "built-in" as const })
          ))
      )
      })

    const bankNameOf = (provider: ScopedProvider, mode: Scope["mode"], code: string) =>
      Effect.map(banksOf(provider, mode), (b) => b.banks.find((x) => x.code === code)?.name ?? findBankByCode(code)?.name ?? code)

    /** Name enquiry at the scope's provider, as `POST /transfers/bank/lookup` answers it. */
    const lookup = Effect.fn("BankDirectory.lookup")(function* (scope: Scope, accountNumber: string, bankCode: string) {
      const provider = yield* providers.resolve(scope)
      const found = yield* withProviderTimeout(provider.name, "name enquiry", provider.nameEnquiry(accountNumber, bankCode)).pipe(
        Effect.catchTags({
          InvalidBankAccount: (e) => Effect.fail(new BadRequest({ code: "invalid_bank_account", message: `Not a valid bank account: ${e.reason}.` })),
          AccountNotFound: () => Effect.fail(new NotFound({ code: "bank_account_not_found", message: `Bank ${bankCode} has no account ${accountNumber}.` })),
          ProviderError: () => Effect.fail(providerUnavailable("name enquiry"))
        })
      )
      return { accountNumber, bankCode, bankName: yield* bankNameOf(provider, scope.mode, bankCode), accountName: found.accountName } satisfies Recipient
    })

    /** Name enquiry before money moves: the destination must exist, and match the name the caller expects if it gave one. */
    const resolveRecipient = Effect.fn("BankDirectory.resolveRecipient")(function* (scope: Scope, accountNumber: string, bankCode: string, expectedName: string | undefined) {
      const recipient = yield* lookup(scope, accountNumber, bankCode).pipe(
        Effect.catchTag("NotFound", (e) => Effect.fail(new Unprocessable({ code: "recipient_not_found", message: e.message })))
      )
      if (expectedName !== undefined && !namesMatch(expectedName, recipient.accountName)) {
        return yield* new Unprocessable({
          code: "account_name_mismatch",
          message: `The bank names account ${accountNumber} "${recipient.accountName}", which does not match ${JSON.stringify(expectedName)}. Nothing was sent.`
        })
      }
      return recipient
    })

    return { banks, lookup, resolveRecipient } as const
  })
}) {}
