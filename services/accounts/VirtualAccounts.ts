import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import * as crypto from "node:crypto"
import type { Mode } from "../../src/domain/Mode.js"
import { newId } from "../../src/domain/Ids.js"
import { deficitKobo, overpaymentKobo, paymentStateOf } from "../../src/domain/Reconciliation.js"
import type { CreateVirtualAccount, VirtualAccount } from "../../src/contract/Accounts.js"
import { BadGateway, BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Providers } from "../providers/Providers.js"
import { placeholderEmail } from "../../src/domain/ProviderRefs.js"
import { Tenants } from "../access/Tenants.js"
import { Outbox } from "../outbox/Outbox.js"
import { INSIGHTS_ACCOUNT, type InsightsAccountData } from "../outbox/Registry.js"

/** A provisioning attempt older than this with no result is taken over by a retry (the first caller crashed). */
const PROVISIONING_LEASE_SECONDS = 30

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

class LostInsertRace extends Data.TaggedError("LostInsertRace") {}

const reused = (accountRef: string) =>
  new Conflict({ code: "reference_reused", message: `accountRef ${JSON.stringify(accountRef)} already names a virtual account with different details.` })
const inProgress = (accountRef: string) =>
  new Conflict({ code: "request_in_progress", message: `A request for accountRef ${JSON.stringify(accountRef)} is still in flight; retry shortly.` })

export class VirtualAccounts extends Effect.Service<VirtualAccounts>()("services/VirtualAccounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const providers = yield* Providers
    const tenants = yield* Tenants
    const outbox = yield* Outbox
    /** Tells the insights consumer the account's receivables may have changed (created, removed). */
    const insightsChanged = (tenantId: string, mode: Mode, accountId: string, accountRef: string) =>
      outbox.stage([{ tenantId, mode, type: INSIGHTS_ACCOUNT, subjectKey: accountRef, data: { accountId } satisfies InsightsAccountData }])

    const selectRows = (where: SqlClientFragment) => sql<VirtualAccountRow>`
      SELECT va.id, va.tenant_id, va.mode, va.account_ref, va.customer_id, va.request_fingerprint, va.status,
        va.provisioning_started_at < now() - make_interval(secs => ${PROVISIONING_LEASE_SECONDS}) AS lease_expired,
        va.nuban, va.bank_code, va.bank_name, va.account_name, c.name, c.email, c.phone, va.expected_amount_kobo,
        va.expiry_date_utc, va.sub_merchant_ref, va.amount_paid_kobo, va.first_activity_at, va.created_at
      FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
      WHERE ${where}`
    type SqlClientFragment = ReturnType<typeof sql.and>

    const findByRef = (tenantId: string, mode: Mode, accountRef: string, lock = false) =>
      sql<VirtualAccountRow>`${selectRows(sql.and([sql`va.tenant_id = ${tenantId}`, sql`va.mode = ${mode}`, sql`va.account_ref = ${accountRef}`]))}
        ${lock ? sql`FOR UPDATE OF va` : sql``}`.pipe(Effect.map((rows) => rows[0]))

    /** Claims the accountRef: inserts a Provisioning row, or decides what an existing one means. */
    const claim = (tenantId: string, mode: Mode, input: CreateVirtualAccount, fingerprint: string, providerName: string) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const existing = yield* findByRef(tenantId, mode, input.accountRef, true)
          if (existing) {
            if (existing.requestFingerprint !== fingerprint) return yield* reused(input.accountRef)
            if (existing.status === "Active") return { kind: "existing" as const, row: existing }
            if (!existing.leaseExpired) return yield* inProgress(input.accountRef)
            yield* sql`UPDATE virtual_accounts SET provisioning_started_at = now() WHERE id = ${existing.id}`
            return { kind: "claimed" as const, id: existing.id }
          }
          if (input.subMerchantRef !== undefined) {
            const [sm] = yield* sql`SELECT 1 FROM sub_merchants WHERE tenant_id = ${tenantId} AND mode = ${mode} AND reference = ${input.subMerchantRef}`
            if (!sm) {
              return yield* new BadRequest({
                code: "unknown_sub_merchant",
                message: `subMerchantRef ${JSON.stringify(input.subMerchantRef)} names no sub-merchant in this tenant and mode; create it first (POST /api/v1/sub-merchants).`
              })
            }
          }
          const customerId = yield* upsertCustomer(tenantId, mode, input)
          const id = newId("va")
          const inserted = yield* sql`
            INSERT INTO virtual_accounts ${sql.insert({
              id, tenantId, mode, accountRef: input.accountRef, customerId, requestFingerprint: fingerprint,
              status: "Provisioning", provider: providerName,
              expectedAmountKobo: input.expectedAmountKobo ?? null,
              expiryDateUtc: input.expiryDateUtc ? new Date(input.expiryDateUtc) : null,
              subMerchantRef: input.subMerchantRef ?? null
            })}
            ON CONFLICT (tenant_id, mode, account_ref) DO NOTHING RETURNING id`
          if (inserted.length === 0) return yield* new LostInsertRace()
          return { kind: "claimed" as const, id }
        })
      )

    const upsertCustomer = (tenantId: string, mode: Mode, input: CreateVirtualAccount) =>
      Effect.gen(function* () {
        const row = { id: newId("cus"), tenantId, mode, name: input.name, email: input.email ?? null, phone: input.phone ?? null }
        const rows = input.email
          ? yield* sql<{ id: string }>`INSERT INTO customers ${sql.insert(row)}
              ON CONFLICT (tenant_id, mode, lower(email)) WHERE email IS NOT NULL
              DO UPDATE SET name = EXCLUDED.name, phone = COALESCE(EXCLUDED.phone, customers.phone) RETURNING id`
          : yield* sql<{ id: string }>`INSERT INTO customers ${sql.insert(row)} RETURNING id`
        return rows[0]!.id
      })

    /**
     * The e-mail of the account's provider customer: the customer's own when this is the earliest of the tenant's
     * accounts with that e-mail (a Paystack customer has one dedicated account per bank), else a stable placeholder.
     * Deterministic, so a retried provisioning finds the same provider customer.
     */
    const providerEmail = (tenantId: string, mode: Mode, input: CreateVirtualAccount, accountId: string) =>
      Effect.gen(function* () {
        if (!input.email) return placeholderEmail(tenantId, mode, input.accountRef)
        const [earlier] = yield* sql<{ id: string }>`SELECT va.id FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
          WHERE va.tenant_id = ${tenantId} AND va.mode = ${mode} AND lower(c.email) = lower(${input.email}) AND va.id <> ${accountId}
            AND (va.created_at, va.id) < (SELECT created_at, id FROM virtual_accounts WHERE id = ${accountId}) LIMIT 1`.pipe(Effect.orDie)
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
              Effect.zipRight(sql`UPDATE virtual_accounts SET provisioning_started_at = 'epoch' WHERE id = ${claimed.id}`.pipe(Effect.orDie))
            )
          ),
          Effect.mapError(() => new BadGateway({ code: "provider_unavailable", message: "The bank provider could not provision the account. Retry with the same accountRef; it is safe." }))
        )
      yield* sql.withTransaction(Effect.gen(function* () {
        yield* sql`
          UPDATE virtual_accounts SET status = 'Active', nuban = ${provisioned.nuban}, bank_code = ${provisioned.bankCode},
            bank_name = ${provisioned.bankName}, account_name = ${provisioned.accountName},
            provider_customer_code = ${provisioned.providerCustomerCode ?? null}
          WHERE id = ${claimed.id}`
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
      const after = yield* cursorId(params, "accountRef", (ref) => sql<{ id: string }>`
        SELECT id FROM virtual_accounts WHERE tenant_id = ${tenantId} AND mode = ${mode} AND status = 'Active' AND account_ref = ${ref}`)
      const limit = limitOf(params)
      const rows = yield* sql<VirtualAccountRow>`${selectRows(sql.and([
        sql`va.tenant_id = ${tenantId}`,
        sql`va.mode = ${mode}`,
        sql`va.status = 'Active'`,
        ...(params.subMerchantRef !== undefined ? [sql`va.sub_merchant_ref = ${params.subMerchantRef}`] : []),
        ...(after !== undefined ? [sql`(va.created_at, va.id) < (SELECT created_at, id FROM virtual_accounts WHERE id = ${after})`] : [])
      ]))} ORDER BY va.created_at DESC, va.id DESC LIMIT ${limit}`.pipe(Effect.orDie)
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
          // Only records that moved no money can point at an account without activity (a reversal with nothing to
          // reverse, waiting for review): they keep their accountRef and lose the link.
          yield* sql`UPDATE transactions SET virtual_account_id = NULL WHERE virtual_account_id = ${row.id}`
          yield* sql`DELETE FROM virtual_accounts WHERE id = ${row.id}`
          yield* insightsChanged(tenantId, mode, row.id, accountRef)
          yield* sql`DELETE FROM customers c WHERE c.id = ${row.customerId}
            AND NOT EXISTS (SELECT 1 FROM virtual_accounts v WHERE v.customer_id = c.id)`
        })
      ).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, get, list, remove } as const
  })
}) {}
