import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import * as crypto from "node:crypto"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import { newId } from "../../src/domain/Ids.js"
import { deficitKobo, overpaymentKobo, paymentStateOf } from "../../src/domain/Reconciliation.js"
import type { CreateVirtualAccount, UpdateVirtualAccount, VirtualAccount } from "../../src/contract/Accounts.js"
import { BadGateway, BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Providers } from "../providers/Providers.js"
import { placeholderEmail } from "../../src/domain/ProviderRefs.js"
import { Tenants } from "../access/Tenants.js"
import { Outbox } from "../outbox/Outbox.js"
import { INSIGHTS_ACCOUNT, type InsightsAccountData } from "../outbox/Registry.js"
import { makeVirtualAccountStore } from "./VirtualAccountStore.js"

export interface VirtualAccountRow {
  readonly id: string
  readonly tenantId: string
  readonly mode: Mode
  readonly accountRef: string
  readonly customerId: string
  readonly requestFingerprint: string
  readonly status: "Provisioning" | "Active"
  readonly leaseExpired: boolean
  readonly nuban: string | null
  readonly bankCode: string | null
  readonly bankName: string | null
  readonly accountName: string | null
  readonly name: string
  readonly email: string | null
  readonly phone: string | null
  readonly expectedAmountKobo: number | null
  readonly expiryDateUtc: Date | null
  readonly subMerchantRef: string | null
  readonly amountPaidKobo: number
  readonly firstActivityAt: Date | null
  readonly createdAt: Date
}

export const toVirtualAccount = (r: VirtualAccountRow): VirtualAccount => {
  const figures = { expectedAmountKobo: r.expectedAmountKobo, amountPaidKobo: r.amountPaidKobo }
  return {
    accountRef: r.accountRef,
    nuban: r.nuban ?? "",
    bankName: r.bankName ?? "",
    bankCode: r.bankCode ?? "",
    accountName: r.accountName ?? "",
    name: r.name,
    email: r.email,
    phone: r.phone,
    expectedAmountKobo: r.expectedAmountKobo,
    expiryDateUtc: r.expiryDateUtc?.toISOString() ?? null,
    subMerchantRef: r.subMerchantRef,
    amountPaidKobo: r.amountPaidKobo,
    deficit: deficitKobo(figures),
    overpayment: overpaymentKobo(figures),
    paymentState: paymentStateOf(figures),
    mode: r.mode,
    createdAt: r.createdAt.toISOString()
  }
}

/** Everything that defines the account: the same accountRef with other values is a different request. */
const fingerprintOf = (input: CreateVirtualAccount) =>
  crypto
    .createHash("sha256")
    .update(JSON.stringify([
      input.name, input.email ?? null, input.phone ?? null, input.expectedAmountKobo ?? null,
      input.expiryDateUtc ? new Date(input.expiryDateUtc).toISOString() : null, input.subMerchantRef ?? null
    ]))
    .digest("hex")

/** The account's details and terms after a PATCH, and which of them it changed. */
const patched = (row: VirtualAccountRow, patch: UpdateVirtualAccount) => {
  const next = {
    name: patch.name ?? row.name,
    email: patch.email === undefined ? row.email : patch.email,
    phone: patch.phone === undefined ? row.phone : patch.phone,
    expectedAmountKobo: patch.expectedAmountKobo ?? row.expectedAmountKobo,
    expiryDateUtc: patch.expiryDateUtc === undefined ? row.expiryDateUtc : patch.expiryDateUtc === null ? null : new Date(patch.expiryDateUtc)
  }
  const changed = (Object.keys(next) as Array<keyof typeof next>).filter((k) =>
    k === "expiryDateUtc" ? next.expiryDateUtc?.getTime() !== row.expiryDateUtc?.getTime() : next[k] !== row[k])
  return { next, changed }
}

class LostInsertRace extends Data.TaggedError("LostInsertRace") {}

const reused = (accountRef: string) =>
  new Conflict({ code: "reference_reused", message: `accountRef ${JSON.stringify(accountRef)} already names a virtual account with different details.` })
const inProgress = (accountRef: string) =>
  new Conflict({ code: "request_in_progress", message: `A request for accountRef ${JSON.stringify(accountRef)} is still in flight; retry shortly.` })

export class VirtualAccounts extends Effect.Service<VirtualAccounts>()("services/VirtualAccounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* makeVirtualAccountStore
    const { findByRef } = store
    const providers = yield* Providers
    const tenants = yield* Tenants
    const outbox = yield* Outbox
    /** Tells the insights consumer the account's receivables may have changed (created, removed). */
    const insightsChanged = (tenantId: string, mode: Mode, accountId: string, accountRef: string) =>
      outbox.stage([{ tenantId, mode, type: INSIGHTS_ACCOUNT, subjectKey: accountRef, data: { accountId } satisfies InsightsAccountData }])

    /** Claims the accountRef: inserts a Provisioning row, or decides what an existing one means. */
    const claim = (tenantId: string, mode: Mode, input: CreateVirtualAccount, fingerprint: string, providerName: string) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const existing = yield* findByRef(tenantId, mode, input.accountRef, true)
          if (existing) {
            if (existing.requestFingerprint !== fingerprint) return yield* reused(input.accountRef)
            if (existing.status === "Active") return { kind: "existing" as const, row: existing }
            if (!existing.leaseExpired) return yield* inProgress(input.accountRef)
            yield* store.retakeProvisioning(existing.id)
            return { kind: "claimed" as const, id: existing.id }
          }
          if (input.subMerchantRef !== undefined) {
            if (!(yield* store.subMerchantExists(tenantId, mode, input.subMerchantRef))) {
              return yield* new BadRequest({
                code: "unknown_sub_merchant",
                message: `subMerchantRef ${JSON.stringify(input.subMerchantRef)} names no sub-merchant in this tenant and mode; create it first (POST /api/v1/sub-merchants).`
              })
            }
          }
          const customerId = yield* store.upsertCustomer(tenantId, mode, input)
          const id = newId("va")
          const inserted = yield* store.insertProvisioning({ id, tenantId, mode, input, customerId, requestFingerprint: fingerprint, provider: providerName })
          if (!inserted) return yield* new LostInsertRace()
          return { kind: "claimed" as const, id }
        })
      )

    /**
     * The e-mail of the account's provider customer: the customer's own when this is the earliest of the tenant's
     * accounts with that e-mail (a Paystack customer has one dedicated account per bank), else a stable placeholder.
     * Deterministic, so a retried provisioning finds the same provider customer.
     */
    const providerEmail = (tenantId: string, mode: Mode, input: CreateVirtualAccount, accountId: string) =>
      Effect.gen(function* () {
        if (!input.email) return placeholderEmail(tenantId, mode, input.accountRef)
        const earlier = yield* store.earlierWithEmail(tenantId, mode, input.email, accountId)
        return earlier ? placeholderEmail(tenantId, mode, input.accountRef) : input.email
      })

    const create = Effect.fn("VirtualAccounts.create")(function* (tenantId: string, mode: Mode, input: CreateVirtualAccount) {
      if (mode === "live") yield* tenants.requireApproved(tenantId, "Provisioning a live virtual account")
      const fingerprint = fingerprintOf(input)
      // The provider first: live mode with none connected is 409 provider_not_connected before anything is written.
      const provider = yield* providers.resolve({ tenantId, mode })
      const claimed = yield* claim(tenantId, mode, input, fingerprint, provider.name).pipe(
        Effect.catchTag("LostInsertRace", () => claim(tenantId, mode, input, fingerprint, provider.name)),
        Effect.catchTag("LostInsertRace", () => Effect.fail(inProgress(input.accountRef))),
        Effect.catchTag("SqlError", Effect.die)
      )
      if (claimed.kind === "existing") return { created: false, account: toVirtualAccount(claimed.row) }

      const email = yield* providerEmail(tenantId, mode, input, claimed.id)
      const provisioned = yield* provider
        .createVirtualAccount({
          tenantId, merchantId: provider.merchantId, mode, accountRef: input.accountRef, customerName: input.name, email, phone: input.phone ?? null
        })
        .pipe(
          Effect.tapError((e) =>
            Effect.logWarning("virtual account provisioning failed at the provider", { accountRef: input.accountRef, reason: e.reason }).pipe(
              // Release the claim so the caller's retry with the same accountRef provisions at once.
              Effect.zipRight(store.releaseProvisioning(claimed.id))
            )
          ),
          Effect.mapError(() => new BadGateway({ code: "provider_unavailable", message: "The bank provider could not provision the account. Retry with the same accountRef; it is safe." }))
        )
      yield* sql.withTransaction(Effect.gen(function* () {
        yield* store.activate(claimed.id, provisioned)
        yield* insightsChanged(tenantId, mode, claimed.id, input.accountRef)
      })).pipe(Effect.orDie)
      const row = yield* findByRef(tenantId, mode, input.accountRef).pipe(Effect.orDie)
      return { created: true, account: toVirtualAccount(row!) }
    })

    const get = Effect.fn("VirtualAccounts.get")(function* (tenantId: string, mode: Mode, accountRef: string) {
      const row = yield* findByRef(tenantId, mode, accountRef).pipe(Effect.orDie)
      if (!row || row.status !== "Active") return yield* notFound("virtual account", accountRef)
      return toVirtualAccount(row)
    })

    const list = Effect.fn("VirtualAccounts.list")(function* (
      tenantId: string,
      mode: Mode,
      params: PageRequest & { subMerchantRef?: string | undefined }
    ) {
      const after = yield* cursorId(params, "accountRef", (ref) => store.activeIdOf(tenantId, mode, ref))
      const limit = limitOf(params)
      const rows = yield* store.listActive(tenantId, mode, params.subMerchantRef, after, limit)
      return pageOf(rows.map(toVirtualAccount), limit - 1)
    })

    const remove = Effect.fn("VirtualAccounts.remove")(function* (tenantId: string, mode: Mode, accountRef: string) {
      yield* sql.withTransaction(
        Effect.gen(function* () {
          const row = yield* findByRef(tenantId, mode, accountRef, true)
          if (!row || row.status !== "Active") return yield* notFound("virtual account", accountRef)
          if (row.firstActivityAt !== null || row.amountPaidKobo !== 0) {
            return yield* new Conflict({ code: "account_has_activity", message: `Virtual account ${JSON.stringify(accountRef)} has payment activity and cannot be deleted.` })
          }
          yield* store.unlinkTransactions(row.id)
          yield* store.deleteAccount(row.id)
          yield* insightsChanged(tenantId, mode, row.id, accountRef)
          yield* store.deleteCustomerIfUnused(row.customerId)
        })
      ).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * Changes an account's customer details and terms in one transaction, its row locked as the deposit path locks it;
     * the NUBAN never changes. Name, e-mail and phone are its customer's (one per e-mail in the tenant and mode, as on
     * creation): a new e-mail moves the account to that e-mail's customer (made when there is none). A change stages
     * `virtual_account.updated` (the checkout stream hears it on the account's subject) and tells the insights.
     */
    const update = Effect.fn("VirtualAccounts.update")(function* (tenantId: string, mode: Mode, accountRef: string, patch: UpdateVirtualAccount) {
      if (Object.keys(patch).length === 0) {
        return yield* new BadRequest({
          code: "validation_failed",
          message: "Send at least one field to change: name, email, phone, expectedAmountKobo or expiryDateUtc.",
          errors: [{ path: "", message: "at least one of name, email, phone, expectedAmountKobo, expiryDateUtc is required" }]
        })
      }
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* findByRef(tenantId, mode, accountRef, true)
        if (!row || row.status !== "Active") return yield* notFound("virtual account", accountRef)
        const { next, changed } = patched(row, patch)
        if (changed.length === 0) return toVirtualAccount(row)
        const sameCustomer = (next.email ?? "").toLowerCase() === (row.email ?? "").toLowerCase()
        const customerId = sameCustomer
          ? yield* Effect.as(store.updateCustomer(row.customerId, next), row.customerId)
          : yield* store.upsertCustomer(tenantId, mode, { name: next.name, email: next.email ?? undefined, phone: next.phone ?? undefined })
        yield* store.updateTerms(row.id, { expectedAmountKobo: next.expectedAmountKobo, expiryDateUtc: next.expiryDateUtc, customerId })
        if (customerId !== row.customerId) yield* store.deleteCustomerIfUnused(row.customerId)
        const account = toVirtualAccount((yield* findByRef(tenantId, mode, accountRef))!)
        yield* outbox.stage([{ tenantId, mode, type: "virtual_account.updated", subjectKey: accountRef, data: { account, changed } }])
        yield* insightsChanged(tenantId, mode, row.id, accountRef)
        return account
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** An active account's internal id (what its ledger accounts are keyed by) and NUBAN; 404 when there is none. */
    const resolve = Effect.fn("VirtualAccounts.resolve")(function* (scope: Scope, accountRef: string) {
      const row = yield* findByRef(scope.tenantId, scope.mode, accountRef).pipe(Effect.orDie)
      if (!row || row.status !== "Active") return yield* notFound("virtual account", accountRef)
      return { id: row.id, accountRef: row.accountRef, nuban: row.nuban ?? "" }
    })

    /** The accountRefs of accounts by internal id (ids of other tenants or modes are left out). */
    const refsOf = (scope: Scope, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(new Map<string, string>())
        : Effect.map(store.refsOf(scope.tenantId, scope.mode, ids), (rows) => new Map(rows.map((r) => [r.id, r.accountRef])))

    return { create, get, list, remove, update, resolve, refsOf } as const
  })
}) {}
