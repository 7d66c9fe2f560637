import { Clock, Effect, Either, Option, Redacted, Ref, Schema } from "effect"
import { providerTransferReference, splitName } from "../../src/domain/ProviderRefs.js"
import {
  AccountNotFound, CredentialsRejected, InvalidBankAccount, ProviderError, type ProviderBank, type ProviderTransfer,
  type ProvisionRequest, TransferRejected, type TransferLookup, type TransferRequest
} from "./BankProvider.js"
import type { ConnectedProvider } from "./ConnectedProvider.js"
import type { ListedCredit } from "./InboundCredit.js"
import { makeProviderHttp, type ProviderAnswer } from "./ProviderHttp.js"
import {
  accountsOf, BankPage, Charge, creditOfCharge, Customer, type DedicatedAccount, DedicatedAccount as DedicatedAccountSchema, envelope, errorMessage,
  isDvaCredit, type PaystackBank, Recipient, Resolved, TransferData, transferStatusOf
} from "./PaystackWire.js"

export interface PaystackConnection {
  readonly secretKey: Redacted.Redacted<string>
  /** The partner bank's Paystack slug for new dedicated accounts (`wema-bank`, `titan-paystack`; `test-bank` in test mode). */
  readonly preferredBank: string
}

export interface PaystackSettings {
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly bankListTtlMs: number
}


const PROVIDER = "paystack"
/** Bank list pages: Paystack allows 100 per page (NIGERIA.md §2.1); 20 pages is far more than Nigeria's banks. */
const BANK_PAGE = 100
const MAX_PAGES = 20
/** Transactions per page of the sync's list, and the most pages one pass reads (10,000 credits). */
const TX_PAGE = 100
const MAX_TX_PAGES = 100

const unexpected = (what: string, answer: ProviderAnswer) =>
  new ProviderError({ provider: PROVIDER, reason: `paystack ${what}: unexpected answer ${answer.status} (${errorMessage(answer.json)})` })

/** Decodes a 2xx envelope, or fails as an unexpected answer. */
const dataOf = <A, I>(what: string, schema: Schema.Schema<A, I>, answer: ProviderAnswer) => {
  if (answer.status < 200 || answer.status >= 300) return Effect.fail(unexpected(what, answer))
  const decoded = Schema.decodeUnknownEither(envelope(schema))(answer.json)
  return Either.isRight(decoded) ? Effect.succeed(decoded.right.data) : Effect.fail(unexpected(what, answer))
}

/**
 * The Paystack adapter for one connection (one tenant and mode; the secret key picks Paystack's mode, A1). Calls go
 * through ProviderHttp (timeout, retries only where idempotent, 429 back-off, the provider's circuit). Built per
 * connection by `Providers`; the bank list is shared by every connection of a mode.
 */
export const makePaystackAdapter = (
  connection: PaystackConnection,
  settings: PaystackSettings,
  bankCache: Ref.Ref<{ readonly until: number; readonly banks: ReadonlyArray<PaystackBank> } | undefined>
) =>
  Effect.gen(function* () {
    const http = yield* makeProviderHttp({
      provider: PROVIDER,
      baseUrl: settings.baseUrl,
      authorization: Effect.succeed(Redacted.make(`Bearer ${Redacted.value(connection.secretKey)}`)),
      timeoutMs: settings.timeoutMs
    })
    const get = (what: string, path: string, query: Record<string, string | number | undefined> = {}) =>
      http.send({ method: "GET", path, query, idempotent: true, what })
    const post = (what: string, path: string, body: unknown, idempotent: boolean) => http.send({ method: "POST", path, body, idempotent, what })
    /** A 401 anywhere means the key stopped working (revoked or rolled at Paystack): no call of this connection can succeed. */
    const keyRefused = (what: string) =>
      new ProviderError({ provider: PROVIDER, reason: `paystack ${what}: Paystack refused the connection's secret key (401); connect again with PUT /api/v1/dashboard/provider` })

    const verifyCredentials = () =>
      Effect.gen(function* () {
        const answer = yield* get("credentials check", "/bank", { country: "nigeria", perPage: 1 })
        if (answer.status === 401) return yield* new CredentialsRejected({ provider: PROVIDER, reason: errorMessage(answer.json) })
        yield* dataOf("credentials check", Schema.Array(Schema.Unknown), answer)
      })

    /** Every Nigerian bank, following the cursor (A5); kept `bankListTtlMs`. */
    const paystackBanks = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const cached = yield* Ref.get(bankCache)
      if (cached && cached.until > now) return cached.banks
      const banks: Array<PaystackBank> = []
      let next: string | undefined
      for (let page = 0; page < MAX_PAGES; page++) {
        const answer = yield* get("bank list", "/bank", { country: "nigeria", perPage: BANK_PAGE, use_cursor: "true", next })
        if (answer.status === 401) return yield* keyRefused("bank list")
        const decoded = Schema.decodeUnknownEither(BankPage)(answer.json)
        if (answer.status !== 200 || Either.isLeft(decoded)) return yield* unexpected("bank list", answer)
        banks.push(...decoded.right.data)
        next = decoded.right.meta?.next ?? undefined
        if (!next || decoded.right.data.length === 0) break
      }
      yield* Ref.set(bankCache, { until: now + settings.bankListTtlMs, banks })
      return banks as ReadonlyArray<PaystackBank>
    })

    const listBanks = () => Effect.map(paystackBanks, (banks): ReadonlyArray<ProviderBank> => banks.map((b) => ({ name: b.name, code: b.code })))

    const nameEnquiry = (accountNumber: string, bankCode: string) =>
      Effect.gen(function* () {
        const answer = yield* get("name enquiry", "/bank/resolve", { account_number: accountNumber, bank_code: bankCode })
        // A5: 422 "Could not resolve account name" (a valid bank, no such account); 400 "Unknown bank code".
        if (answer.status === 422) return yield* new AccountNotFound({ accountNumber, bankCode })
        if (answer.status === 400) return yield* new InvalidBankAccount({ accountNumber, bankCode, reason: errorMessage(answer.json) })
        if (answer.status === 401) return yield* keyRefused("name enquiry")
        const data = yield* dataOf("name enquiry", Resolved, answer)
        return { accountNumber, bankCode, accountName: data.account_name }
      })

    /** The customer by e-mail, or undefined (A2: `GET /customer/{email_or_code}`). */
    const findCustomer = (emailOrCode: string) =>
      Effect.gen(function* () {
        const answer = yield* get("customer lookup", `/customer/${encodeURIComponent(emailOrCode)}`)
        if (answer.status === 404) return undefined
        if (answer.status === 401) return yield* keyRefused("customer lookup")
        return yield* dataOf("customer lookup", Customer, answer)
      })

    const accountAt = (c: Customer | undefined, slug: string): DedicatedAccount | undefined =>
      c === undefined ? undefined : accountsOf(c).find((a) => a.bank.slug === slug && a.active !== false)

    const provisioned = (a: DedicatedAccount, customerCode: string) =>
      Effect.gen(function* () {
        const banks = yield* paystackBanks
        const bank = banks.find((b) => b.slug === a.bank.slug)
        if (!bank) return yield* new ProviderError({ provider: PROVIDER, reason: `paystack provisioning: the bank list has no bank with slug ${a.bank.slug}` })
        return { nuban: a.account_number, bankCode: bank.code, bankName: a.bank.name, accountName: a.account_name, providerCustomerCode: customerCode }
      })

    /**
     * Provisioning (A2, multi-step): the customer by e-mail (created when new), then its dedicated account at the
     * preferred bank, made only when the customer has none there. Every step can be retried: a retry after a 5xx or a
     * timeout finds the customer and the account the earlier attempt made, and `POST /dedicated_account` is never sent
     * for a customer that already has one. After a lost answer to that POST, the customer is read again at once.
     */
    const createVirtualAccount = (req: ProvisionRequest) =>
      Effect.gen(function* () {
        const name = splitName(req.customerName)
        let customer = yield* findCustomer(req.email)
        if (customer === undefined) {
          // Assumption (PROVIDERS.md silent): POST /customer with a known e-mail answers that customer, as the fake does;
          // a retry of this step after a lost answer finds it by GET first anyway.
          const answer = yield* post("customer creation", "/customer", {
            email: req.email, first_name: name.first, last_name: name.last, ...(req.phone ? { phone: req.phone } : {}),
            metadata: { accountRef: req.accountRef }
          }, true)
          if (answer.status === 401) return yield* keyRefused("customer creation")
          customer = yield* dataOf("customer creation", Customer, answer)
        }
        const code = customer.customer_code
        const existing = accountAt(customer, connection.preferredBank)
        if (existing) return yield* provisioned(existing, code)
        const created = yield* post("dedicated account creation", "/dedicated_account", {
          customer: code, preferred_bank: connection.preferredBank, first_name: name.first, last_name: name.last, ...(req.phone ? { phone: req.phone } : {})
        }, false).pipe(
          Effect.catchTag("ProviderError", (lost) =>
            // The answer was lost: Paystack may have made the account. Look before anyone tries again.
            Effect.flatMap(findCustomer(code), (again) => {
              const made = accountAt(again, connection.preferredBank)
              return made ? Effect.succeed({ status: 200, json: { status: true, data: made } } satisfies ProviderAnswer) : Effect.fail(lost)
            }))
        )
        if (created.status === 401) return yield* keyRefused("dedicated account creation")
        if (created.status >= 400) {
          // A refusal (A1: "Dedicated NUBAN not available for this business", A2's silent cases): nothing was made.
          return yield* new ProviderError({ provider: PROVIDER, reason: `paystack refused the dedicated account: ${errorMessage(created.json)}` })
        }
        const account = yield* dataOf("dedicated account creation", DedicatedAccountSchema, created)
        return yield* provisioned(account, code)
      }).pipe(Effect.withSpan("PaystackAdapter.createVirtualAccount"))

    const toProviderTransfer = (reference: string, status: string): ProviderTransfer => ({ providerReference: reference, ...transferStatusOf(status) })

    const verifyTransfer = (reference: string) =>
      Effect.gen(function* () {
        const answer = yield* get("transfer status", `/transfer/verify/${encodeURIComponent(reference)}`)
        if (answer.status === 404) return Option.none<ProviderTransfer>()
        if (answer.status === 401) return yield* keyRefused("transfer status")
        const data = yield* dataOf("transfer status", TransferData, answer)
        return Option.some(toProviderTransfer(reference, data.status))
      })

    /**
     * A payout or refund (A6): the recipient (Paystack finds an existing one by account number), then the transfer with
     * the reference derived from ours, so a retry, a crash recovery or a concurrent sender reuses it and Paystack pays
     * at most once ("retry the transaction with the same reference"). Both calls are idempotent and retried after a
     * lost answer. An `otp` answer fails the transfer with the reason (DESIGN.md): nothing further is sent.
     */
    const transfer = (req: TransferRequest) =>
      Effect.gen(function* () {
        const reference = providerTransferReference(PROVIDER, req.tenantId, req.mode, req.reference)!
        const recipientAnswer = yield* post("transfer recipient", "/transferrecipient", {
          type: "nuban", name: req.accountName, account_number: req.accountNumber, bank_code: req.bankCode, currency: "NGN"
        }, true)
        if (recipientAnswer.status === 401) return yield* keyRefused("transfer recipient")
        if (recipientAnswer.status >= 400) return yield* new TransferRejected({ reason: `Paystack refused the recipient: ${errorMessage(recipientAnswer.json)}` })
        const recipient = yield* dataOf("transfer recipient", Recipient, recipientAnswer)
        const answer = yield* post("transfer", "/transfer", {
          source: "balance", amount: req.amountKobo, recipient: recipient.recipient_code, reference, currency: "NGN",
          ...(req.narration ? { reason: req.narration.slice(0, 100) } : {})
          // Not retried here even though Paystack de-duplicates the reference: after a lost answer the completer asks
          // /transfer/verify first, so Paystack is asked to pay at most once per reference.
        }, false)
        if (answer.status === 401) return yield* keyRefused("transfer")
        if (answer.status >= 400) {
          const message = errorMessage(answer.json)
          // Q5: the wording of a reused reference is unverified; whatever it says, the reference's own state answers.
          if (/duplicate|already exists/i.test(message)) {
            const known = yield* verifyTransfer(reference)
            if (Option.isSome(known)) return known.value
          }
          return yield* new TransferRejected({ reason: `Paystack refused the transfer: ${message}` })
        }
        const data = yield* dataOf("transfer", TransferData, answer)
        return toProviderTransfer(reference, data.status)
      }).pipe(Effect.withSpan("PaystackAdapter.transfer"))

    const transferStatus = (lookup: TransferLookup) =>
      verifyTransfer(providerTransferReference(PROVIDER, lookup.tenantId, lookup.mode, lookup.reference)!)

    /** `GET /transaction?channel=dedicated_nuban&status=success&from&to` page by page (A4); items that are not DVA credits are left out. */
    const listCredits = (from: Date, to: Date) =>
      Effect.gen(function* () {
        const credits: Array<ListedCredit> = []
        for (let page = 1; page <= MAX_TX_PAGES; page++) {
          const answer = yield* get("transaction list", "/transaction", {
            channel: "dedicated_nuban", status: "success", from: from.toISOString(), to: to.toISOString(), perPage: TX_PAGE, page
          })
          if (answer.status === 401) return yield* keyRefused("transaction list")
          const items = yield* dataOf("transaction list", Schema.Array(Schema.Unknown), answer)
          for (const item of items) {
            const c = Schema.decodeUnknownEither(Charge)(item)
            if (Either.isRight(c)) {
              if (isDvaCredit(c.right)) credits.push({ reference: c.right.reference, detail: Effect.succeed(creditOfCharge(c.right)) })
            }
            else yield* Effect.logWarning(`paystack transaction list: an item that is not a readable credit was left out (${String((item as { reference?: unknown })?.reference)})`)
          }
          if (items.length < TX_PAGE) break
        }
        return credits as ReadonlyArray<ListedCredit>
      })

    return {
      name: PROVIDER, createVirtualAccount, listBanks, nameEnquiry, transfer, transferStatus, verifyCredentials, listCredits
    } satisfies ConnectedProvider
  })
