import { Clock, Effect, Either, Option, Redacted, Ref, Schema, SynchronizedRef } from "effect"
import { koboToNaira } from "../../src/domain/Naira.js"
import { monnifyAccountReference, providerTransferReference } from "../../src/domain/ProviderRefs.js"
import {
  AccountNotFound, CredentialsRejected, InvalidBankAccount, ProviderError, type ProviderBank, type ProviderTransfer, type ProvisionRequest,
  TransferRejected, type TransferLookup, type TransferRequest
} from "./BankProvider.js"
import type { ConnectedProvider } from "./ConnectedProvider.js"
import type { ListedCredit } from "./InboundCredit.js"
import {
  Bank, creditOfStatus, Disbursement, disbursementStatusOf, Envelope, Login, monnifyMessage, refusalReason, ReservedAccount, SearchPage,
  TransactionStatus, Validated
} from "./MonnifyWire.js"
import { makeProviderHttp, type ProviderAnswer, type ProviderCall } from "./ProviderHttp.js"

export interface MonnifyCredentials {
  readonly apiKey: Redacted.Redacted<string>
  readonly secretKey: Redacted.Redacted<string>
  readonly contractCode: string
  readonly walletAccountNumber: string
  /** CBN codes of the partner banks for new reserved accounts (B2: default 50515, Moniepoint). */
  readonly preferredBanks: ReadonlyArray<string>
}

export interface MonnifySettings {
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly bankListTtlMs: number
}

const PROVIDER = "monnify"
const SEARCH_PAGE = 100
const MAX_SEARCH_PAGES = 100

const unexpected = (what: string, answer: ProviderAnswer) =>
  new ProviderError({ provider: PROVIDER, reason: `monnify ${what}: unexpected answer ${answer.status} (${monnifyMessage(answer.json)})` })

/** Decodes a 2xx envelope's `responseBody`, or fails as an unexpected answer. */
const bodyOf = <A, I>(what: string, schema: Schema.Schema<A, I>, answer: ProviderAnswer) => {
  if (answer.status < 200 || answer.status >= 300) return Effect.fail(unexpected(what, answer))
  const decoded = Schema.decodeUnknownEither(Envelope(schema))(answer.json)
  return Either.isRight(decoded) ? Effect.succeed(decoded.right.responseBody) : Effect.fail(unexpected(what, answer))
}

/**
 * Monnify's access token for one connection (B1): `POST /api/v1/auth/login` with Basic auth, kept until shortly before
 * `expiresIn` (a tenth of it, at most a minute, as the official MCP server does), one login in flight at a time (the
 * SynchronizedRef runs it while others wait and then take its token), and dropped when a call answers 401 so the next
 * call logs in again (once).
 */
const makeTokens = (credentials: MonnifyCredentials, send: (call: ProviderCall) => Effect.Effect<ProviderAnswer, ProviderError>) =>
  Effect.gen(function* () {
    const state = yield* SynchronizedRef.make<{ readonly token: Redacted.Redacted<string>; readonly until: number } | undefined>(undefined)
    const basic = Redacted.make(`Basic ${Buffer.from(`${Redacted.value(credentials.apiKey)}:${Redacted.value(credentials.secretKey)}`).toString("base64")}`)

    const login = Effect.gen(function* () {
      const answer = yield* send({ method: "POST", path: "/api/v1/auth/login", body: {}, idempotent: true, what: "login", authorization: basic })
      if (answer.status === 401) return yield* new CredentialsRejected({ provider: PROVIDER, reason: monnifyMessage(answer.json) })
      const body = yield* bodyOf("login", Login, answer)
      const now = yield* Clock.currentTimeMillis
      const lifetimeMs = Math.max(0, body.expiresIn * 1000)
      return { token: Redacted.make(`Bearer ${body.accessToken}`), until: now + lifetimeMs - Math.min(60_000, lifetimeMs / 10) }
    })

    const valid = (s: { readonly until: number } | undefined, now: number) => s !== undefined && s.until > now

    /** The current token, logging in first when there is none (or it is about to expire). */
    const get = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const held = yield* SynchronizedRef.get(state)
      if (held && valid(held, now)) return held.token
      return yield* SynchronizedRef.modifyEffect(state, (s) =>
        Effect.flatMap(Clock.currentTimeMillis, (t) => (s && valid(s, t) ? Effect.succeed([s.token, s] as const) : Effect.map(login, (fresh) => [fresh.token, fresh] as const))))
    })

    /** Drops `token` (a call answered 401 with it); a newer token someone else fetched meanwhile stays. */
    const invalidate = (token: Redacted.Redacted<string>) => SynchronizedRef.update(state, (s) => (s && s.token === token ? undefined : s))

    return { get, invalidate, login } as const
  })

/**
 * The Monnify adapter for one connection (B1-B7): reserved accounts, the bank list, account validation,
 * disbursements from the wallet, and the credit list for the sync. Every call but the login carries the cached token;
 * a 401 drops it and the call is made once more with a fresh one.
 */
export const makeMonnifyAdapter = (
  credentials: MonnifyCredentials,
  settings: MonnifySettings,
  bankCache: Ref.Ref<{ readonly until: number; readonly banks: ReadonlyArray<ProviderBank> } | undefined>
) =>
  Effect.gen(function* () {
    const http = yield* makeProviderHttp({
      provider: PROVIDER, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs,
      authorization: Effect.fail(new ProviderError({ provider: PROVIDER, reason: "monnify: a call without a token" }))
    })
    const tokens = yield* makeTokens(credentials, http.send)

    /** A call with the token; after a 401, once more with a fresh token. */
    const authed = (call: Omit<ProviderCall, "authorization">) =>
      Effect.gen(function* () {
        const token = yield* tokens.get
        const answer = yield* http.send({ ...call, authorization: token })
        if (answer.status !== 401) return answer
        yield* tokens.invalidate(token)
        const again = yield* http.send({ ...call, authorization: yield* tokens.get })
        if (again.status === 401) {
          return yield* new ProviderError({ provider: PROVIDER, reason: `monnify ${call.what}: Monnify refused a fresh token (401); check the connection's keys` })
        }
        return again
      }).pipe(Effect.catchTag("CredentialsRejected", (e) =>
        Effect.fail(new ProviderError({ provider: PROVIDER, reason: `monnify ${call.what}: Monnify refused the connection's API key and secret (${e.reason}); connect again with PUT /api/v1/dashboard/provider` }))))

    const get = (what: string, path: string, query: Record<string, string | number | undefined> = {}) => authed({ method: "GET", path, query, idempotent: true, what })
    const post = (what: string, path: string, body: unknown, idempotent: boolean) => authed({ method: "POST", path, body, idempotent, what })

    const verifyCredentials = () => Effect.asVoid(tokens.login)

    const listBanks = () =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const cached = yield* Ref.get(bankCache)
        if (cached && cached.until > now) return cached.banks
        const banks = (yield* bodyOf("bank list", Schema.Array(Bank), yield* get("bank list", "/api/v1/banks"))).map((b) => ({ name: b.name, code: b.code }))
        yield* Ref.set(bankCache, { until: now + settings.bankListTtlMs, banks })
        return banks as ReadonlyArray<ProviderBank>
      })

    const nameEnquiry = (accountNumber: string, bankCode: string) =>
      Effect.gen(function* () {
        const answer = yield* get("name enquiry", "/api/v1/disbursements/account/validate", { accountNumber, bankCode })
        // B5: 404 when the bank has no such account; Q12: a wrong bank code may be 400 or 404.
        if (answer.status === 404) return yield* new AccountNotFound({ accountNumber, bankCode })
        if (answer.status === 400 || answer.status === 422) return yield* new InvalidBankAccount({ accountNumber, bankCode, reason: monnifyMessage(answer.json) })
        const body = yield* bodyOf("name enquiry", Validated, answer)
        return { accountNumber, bankCode, accountName: body.accountName }
      })

    const reservedAccount = (accountReference: string) =>
      Effect.gen(function* () {
        const answer = yield* get("reserved account lookup", `/api/v2/bank-transfer/reserved-accounts/${encodeURIComponent(accountReference)}`)
        if (answer.status === 404) return undefined
        return yield* bodyOf("reserved account lookup", ReservedAccount, answer)
      })

    const provisioned = (r: typeof ReservedAccount.Type) =>
      Effect.gen(function* () {
        const first = r.accounts[0]
        if (!first) return yield* new ProviderError({ provider: PROVIDER, reason: "monnify provisioning: the reserved account came with no bank account" })
        return { nuban: first.accountNumber, bankCode: first.bankCode, bankName: first.bankName, accountName: first.accountName, providerCustomerCode: r.accountReference }
      })

    /**
     * Provisioning (B2): one reserved account per (tenant, mode, accountRef), its `accountReference` derived from them
     * (DESIGN.md), so a retry after a lost answer, or after Monnify refused the reference as taken, finds the account
     * by GET instead of making a second one. The first of `accounts[]` is the NUBAN.
     */
    const createVirtualAccount = (req: ProvisionRequest) =>
      Effect.gen(function* () {
        const accountReference = monnifyAccountReference(req.tenantId, req.mode, req.accountRef)
        const existing = yield* reservedAccount(accountReference)
        if (existing) return yield* provisioned(existing)
        const created = yield* post("reserved account creation", "/api/v2/bank-transfer/reserved-accounts", {
          accountReference, accountName: req.customerName.slice(0, 100), currencyCode: "NGN", contractCode: credentials.contractCode,
          customerEmail: req.email, customerName: req.customerName.slice(0, 100),
          getAllAvailableBanks: false, preferredBanks: credentials.preferredBanks
          // Assumption (PROVIDERS.md Q10): no bvn or nin; Monnify's docs show requests without one and we hold neither.
        }, false).pipe(Effect.catchTag("ProviderError", (lost) =>
          Effect.flatMap(reservedAccount(accountReference), (made) => (made ? Effect.succeed({ status: 200, json: { requestSuccessful: true, responseCode: "0", responseBody: made } } satisfies ProviderAnswer) : Effect.fail(lost)))))
        if (created.status >= 400) {
          // A duplicate reference (Q10: wording unknown) means an earlier attempt made it: take that one.
          const made = yield* reservedAccount(accountReference)
          if (made) return yield* provisioned(made)
          return yield* new ProviderError({ provider: PROVIDER, reason: `monnify refused the reserved account: ${monnifyMessage(created.json)}` })
        }
        return yield* provisioned(yield* bodyOf("reserved account creation", ReservedAccount, created))
      }).pipe(Effect.withSpan("MonnifyAdapter.createVirtualAccount"))

    const toProviderTransfer = (reference: string, d: typeof Disbursement.Type): ProviderTransfer => ({
      providerReference: reference, ...disbursementStatusOf(d.status, d.comment ?? d.transactionDescription)
    })

    const summary = (reference: string) =>
      Effect.gen(function* () {
        const answer = yield* get("transfer status", "/api/v2/disbursements/single/summary", { reference })
        if (answer.status === 404) return Option.none<ProviderTransfer>()
        return Option.some(toProviderTransfer(reference, yield* bodyOf("transfer status", Disbursement, answer)))
      })

    /**
     * A payout or refund (B6): `POST /api/v2/disbursements/single` from the wallet, naira as a number (exact: kobo/100
     * has a two-place decimal text), our derived reference. Never re-sent blind: after a lost answer the completer asks
     * `/single/summary` first. `PENDING_AUTHORIZATION` (OTP on) fails the transfer with what to do; a 200 `FAILED`
     * (insufficient wallet balance) fails it; D07 and D06 are refusals explained in words.
     */
    const transfer = (req: TransferRequest) =>
      Effect.gen(function* () {
        const reference = providerTransferReference(PROVIDER, req.tenantId, req.mode, req.reference)!
        const answer = yield* post("transfer", "/api/v2/disbursements/single", {
          amount: koboToNaira(req.amountKobo), reference, narration: (req.narration ?? `Transfer ${req.reference}`).slice(0, 100),
          destinationBankCode: req.bankCode, destinationAccountNumber: req.accountNumber, destinationAccountName: req.accountName,
          currency: "NGN", sourceAccountNumber: credentials.walletAccountNumber, async: false
        }, false)
        if (answer.status >= 400 && answer.status < 500) {
          const message = monnifyMessage(answer.json)
          // Q13: a reused reference's answer is unknown: the reference's own state answers when Monnify has it.
          const known = yield* summary(reference)
          if (Option.isSome(known)) return known.value
          return yield* new TransferRejected({ reason: refusalReason(message) })
        }
        return toProviderTransfer(reference, yield* bodyOf("transfer", Disbursement, answer))
      }).pipe(Effect.withSpan("MonnifyAdapter.transfer"))

    const transferStatus = (lookup: TransferLookup) => summary(providerTransferReference(PROVIDER, lookup.tenantId, lookup.mode, lookup.reference)!)

    /**
     * The sync's list (B4): `GET /api/v1/transactions/search` over the window, 0-based pages, paid only; each credit's
     * details (payer, session id, which reserved account) from the requery, fetched only for what the inbox lacks.
     */
    const listCredits = (from: Date, to: Date) =>
      Effect.gen(function* () {
        const listed: Array<ListedCredit> = []
        for (let page = 0; page < MAX_SEARCH_PAGES; page++) {
          const answer = yield* get("transaction search", "/api/v1/transactions/search", {
            page, size: SEARCH_PAGE, paymentStatus: "PAID", from: from.toISOString(), to: to.toISOString()
          })
          const body = yield* bodyOf("transaction search", SearchPage, answer)
          for (const item of body.content) {
            if (item.paymentStatus !== undefined && item.paymentStatus !== "PAID") continue
            listed.push({ reference: item.transactionReference, detail: detail(item.transactionReference) })
          }
          if (body.last !== false || body.content.length === 0) break
        }
        return listed as ReadonlyArray<ListedCredit>
      })

    const detail = (transactionReference: string) =>
      Effect.gen(function* () {
        const answer = yield* get("transaction requery", `/api/v2/transactions/${encodeURIComponent(transactionReference)}`)
        if (answer.status === 404) return undefined
        const status = yield* bodyOf("transaction requery", TransactionStatus, answer)
        const credit = creditOfStatus(status, new Date(yield* Clock.currentTimeMillis))
        if (Either.isLeft(credit)) {
          yield* Effect.logWarning(`monnify sync: ${transactionReference} left out: ${credit.left}`)
          return undefined
        }
        return credit.right
      })

    return {
      name: PROVIDER, createVirtualAccount, listBanks, nameEnquiry, transfer, transferStatus, verifyCredentials, listCredits,
      /** For tests and operators: the token cache. */
      tokens
    } satisfies ConnectedProvider & { readonly tokens: unknown }
  })
