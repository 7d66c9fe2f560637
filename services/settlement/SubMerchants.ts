import { Effect } from "effect"
import { BadRequest, Conflict, NotFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import type { SubMerchant } from "../../src/contract/Settlement.js"
import { newId } from "../../src/domain/Ids.js"
import { LedgerAccount } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Tenants } from "../access/Tenants.js"
import { BankDirectory, namesMatch, type Recipient } from "../transfers/BankDirectory.js"
import { makeSubMerchantStore } from "./SubMerchantStore.js"

export interface SubMerchantRow {
  readonly id: string
  readonly mode: Scope["mode"]
  readonly reference: string
  readonly name: string
  readonly payoutBankName: string | null
  readonly payoutBankCode: string | null
  readonly payoutAccountNumber: string | null
  readonly payoutAccountName: string | null
  readonly payoutVerifiedAt: Date | null
  readonly platformFeeBps: number
  readonly createdAt: Date
}

export const toSubMerchant = (r: SubMerchantRow): SubMerchant => ({
  id: r.id,
  name: r.name,
  reference: r.reference,
  payoutAccount: r.payoutAccountNumber === null ? null : {
    bankName: r.payoutBankName!, bankCode: r.payoutBankCode!, accountNumber: r.payoutAccountNumber, accountName: r.payoutAccountName!,
    verifiedAt: r.payoutVerifiedAt!.toISOString()
  },
  platformFeeBps: r.platformFeeBps,
  createdAt: r.createdAt.toISOString(),
  mode: r.mode
})

/** The verified payout account of a sub-merchant, as a transfer's recipient; undefined until one is verified. */
export const payoutRecipientOf = (r: SubMerchantRow): Recipient | undefined =>
  r.payoutAccountNumber === null
    ? undefined
    : { accountNumber: r.payoutAccountNumber, bankCode: r.payoutBankCode!, bankName: r.payoutBankName!, accountName: r.payoutAccountName! }

const notFoundSubMerchant = (id: string) =>
  new NotFound({ code: "sub_merchant_not_found", message: `No sub-merchant ${JSON.stringify(id)} in this tenant and mode.` })

/**
 * Verifies a payout account the way every settlement destination is: the NUBAN check and name enquiry at the provider,
 * and the name it answers matched (the name matcher) against `expectedName`. Anything short of that is 400
 * `payout_account_unverified`; a provider that does not answer is 502 (nothing saved; try again).
 */
export const verifyPayoutAccount = (directory: BankDirectory, scope: Scope, accountNumber: string, bankCode: string, expectedName: string, whose: string) =>
  Effect.gen(function* () {
    const unverified = (why: string) =>
      new BadRequest({ code: "payout_account_unverified", message: `The payout account could not be verified: ${why}. Nothing was saved.` })
    const recipient = yield* directory.lookup(scope, accountNumber, bankCode).pipe(
      Effect.catchTags({
        BadRequest: (e) => Effect.fail(unverified(e.message.replace(/\.$/, ""))),
        NotFound: (e) => Effect.fail(unverified(e.message.replace(/\.$/, "")))
      })
    )
    if (!namesMatch(expectedName, recipient.accountName)) {
      return yield* unverified(`the bank names account ${accountNumber} "${recipient.accountName}", which does not match ${whose} ${JSON.stringify(expectedName)}`)
    }
    return recipient
  })

/**
 * Sub-merchants: internal records a tenant routes collections to (never created at the provider). A virtual account
 * naming one is settled to the sub-merchant's verified payout account, less the platform fee the tenant keeps.
 */
export class SubMerchants extends Effect.Service<SubMerchants>()("services/settlement/SubMerchants", {
  effect: Effect.gen(function* () {
    const store = yield* makeSubMerchantStore
    const { find, findByReference } = store
    const directory = yield* BankDirectory
    const tenants = yield* Tenants

    const findOrFail = (scope: Scope, id: string) =>
      Effect.flatMap(find(scope, id), (r) => (r ? Effect.succeed(r) : Effect.fail(notFoundSubMerchant(id))))

    const list = Effect.fn("SubMerchants.list")(function* (scope: Scope, page: PageRequest) {
      const after = yield* cursorId(page, "id", (id) => store.idOf(scope, id))
      const limit = limitOf(page)
      const rows = yield* store.list(scope, after, limit)
      return pageOf(rows.map(toSubMerchant), limit - 1)
    })

    /** A new sub-merchant; its reference is unique per tenant and mode, and a repeat is always 409. */
    const create = Effect.fn("SubMerchants.create")(function* (scope: Scope, input: { readonly name: string; readonly reference: string }, actor: string) {
      const id = newId("sm")
      if (!(yield* store.insert(scope, id, input, actor))) {
        return yield* new Conflict({ code: "duplicate_reference", message: `A sub-merchant with reference ${JSON.stringify(input.reference)} already exists in this tenant and mode.` })
      }
      const row = (yield* find(scope, id))!
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "sub_merchant.created", subject: id, details: toSubMerchant(row) })
      return toSubMerchant(row)
    })

    /**
     * Sets the payout account (verified: NUBAN check, name enquiry, the name matched against the sub-merchant's name)
     * and the platform fee (left out: unchanged). The bank's name is the bank code's, whatever `bankName` says.
     */
    const setPayout = Effect.fn("SubMerchants.setPayout")(function* (
      scope: Scope,
      id: string,
      input: { readonly bankCode: string; readonly accountNumber: string; readonly platformFeeBps?: number | undefined },
      actor: string
    ) {
      const current = yield* findOrFail(scope, id)
      const recipient = yield* verifyPayoutAccount(directory, scope, input.accountNumber, input.bankCode, current.name, "the sub-merchant's name")
      yield* store.setPayout(id, recipient, input.platformFeeBps ?? current.platformFeeBps)
      const row = (yield* find(scope, id))!
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "sub_merchant.payout_set", subject: id, details: toSubMerchant(row) })
      return toSubMerchant(row)
    })

    /**
     * The balance, each figure from the ledger: collected = what settlements routed to `sub_merchant:<id>` (the
     * allocation journals `stl:set_*`), pending = that account's balance, settled = collected - pending (in transit:
     * the part still unconfirmed); unswept = the free money of its virtual accounts.
     */
    const balance = Effect.fn("SubMerchants.balance")(function* (scope: Scope, id: string) {
      const row = yield* findOrFail(scope, id)
      const account = LedgerAccount.subMerchant(id)
      const f = yield* store.balanceFigures(scope, account, row.reference)
      return {
        id, reference: row.reference, collectedKobo: f.collected, settledKobo: f.collected - f.pending, pendingKobo: f.pending,
        inTransitKobo: f.inTransit, unsweptKobo: f.unswept, mode: scope.mode
      }
    })

    return { list, create, setPayout, balance, find, findByReference } as const
  })
}) {}
