import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CreateVirtualAccount } from "../../src/contract/Accounts.js"
import { newId } from "../../src/domain/Ids.js"
import type { Mode } from "../../src/domain/Mode.js"
import { textArray } from "../../src/db/PgArray.js"
import type { ProvisionedAccount } from "../providers/BankProvider.js"
import type { VirtualAccountRow } from "./VirtualAccounts.js"

/** A provisioning attempt older than this with no result is taken over by a retry (the first caller crashed). */
const PROVISIONING_LEASE_SECONDS = 30

/** The SQL of virtual accounts and their customers: one function per statement, run in the caller's transaction. */
export const makeVirtualAccountStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const selectRows = (where: SqlClientFragment) => sql<VirtualAccountRow>`
      SELECT va.id, va.tenant_id, va.mode, va.account_ref, va.customer_id, va.request_fingerprint, va.status,
        va.provisioning_started_at < now() - make_interval(secs => ${PROVISIONING_LEASE_SECONDS}) AS lease_expired,
        va.nuban, va.bank_code, va.bank_name, va.account_name, c.name, c.email, c.phone, va.expected_amount_kobo,
        va.expiry_date_utc, va.sub_merchant_ref, va.amount_paid_kobo, va.first_activity_at, va.created_at
      FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
      WHERE ${where}`
  type SqlClientFragment = ReturnType<typeof sql.and>

  /** By the tenant's reference; `lock` takes the row for this transaction. */
  const findByRef = (tenantId: string, mode: Mode, accountRef: string, lock = false) =>
    sql<VirtualAccountRow>`${selectRows(sql.and([sql`va.tenant_id = ${tenantId}`, sql`va.mode = ${mode}`, sql`va.account_ref = ${accountRef}`]))}
        ${lock ? sql`FOR UPDATE OF va` : sql``}`.pipe(Effect.map((rows) => rows[0]))

  /** A crashed attempt's claim taken over: its lease starts again. */
  const retakeProvisioning = (id: string) => sql`UPDATE virtual_accounts SET provisioning_started_at = now() WHERE id = ${id}`

  /** Releases a claim whose provisioning failed, so the caller's retry provisions at once. */
  const releaseProvisioning = (id: string) =>
    sql`UPDATE virtual_accounts SET provisioning_started_at = 'epoch' WHERE id = ${id}`.pipe(Effect.orDie)

  const subMerchantExists = (tenantId: string, mode: Mode, reference: string) =>
    sql`SELECT 1 FROM sub_merchants WHERE tenant_id = ${tenantId} AND mode = ${mode} AND reference = ${reference}`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  /** The customer of a new account: one per e-mail in the tenant and mode (its name and phone updated), else a new one. */
  const upsertCustomer = (tenantId: string, mode: Mode, input: Pick<CreateVirtualAccount, "name" | "email" | "phone">) =>
    Effect.gen(function* () {
      const row = { id: newId("cus"), tenantId, mode, name: input.name, email: input.email ?? null, phone: input.phone ?? null }
      const rows = input.email
        ? yield* sql<{ id: string }>`INSERT INTO customers ${sql.insert(row)}
              ON CONFLICT (tenant_id, mode, lower(email)) WHERE email IS NOT NULL
              DO UPDATE SET name = EXCLUDED.name, phone = COALESCE(EXCLUDED.phone, customers.phone) RETURNING id`
        : yield* sql<{ id: string }>`INSERT INTO customers ${sql.insert(row)} RETURNING id`
      return rows[0]!.id
    })

  /** Inserts the Provisioning row; false when a concurrent request inserted the accountRef first. */
  const insertProvisioning = (row: {
    readonly id: string
    readonly tenantId: string
    readonly mode: Mode
    readonly input: CreateVirtualAccount
    readonly customerId: string
    readonly requestFingerprint: string
    readonly provider: string
  }) =>
    Effect.map(
      sql`
            INSERT INTO virtual_accounts ${sql.insert({
              id: row.id, tenantId: row.tenantId, mode: row.mode, accountRef: row.input.accountRef, customerId: row.customerId,
              requestFingerprint: row.requestFingerprint, status: "Provisioning", provider: row.provider,
              expectedAmountKobo: row.input.expectedAmountKobo ?? null,
              expiryDateUtc: row.input.expiryDateUtc ? new Date(row.input.expiryDateUtc) : null,
              subMerchantRef: row.input.subMerchantRef ?? null
            })}
            ON CONFLICT (tenant_id, mode, account_ref) DO NOTHING RETURNING id`,
      (inserted) => inserted.length > 0
    )

  /** Whether an earlier account of the tenant and mode (than `accountId`) has a customer with this e-mail. */
  const earlierWithEmail = (tenantId: string, mode: Mode, email: string, accountId: string) =>
    sql<{ id: string }>`SELECT va.id FROM virtual_accounts va JOIN customers c ON c.id = va.customer_id
          WHERE va.tenant_id = ${tenantId} AND va.mode = ${mode} AND lower(c.email) = lower(${email}) AND va.id <> ${accountId}
            AND (va.created_at, va.id) < (SELECT created_at, id FROM virtual_accounts WHERE id = ${accountId}) LIMIT 1`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.length > 0)
    )

  const activate = (id: string, provisioned: ProvisionedAccount) =>
    sql`
          UPDATE virtual_accounts SET status = 'Active', nuban = ${provisioned.nuban}, bank_code = ${provisioned.bankCode},
            bank_name = ${provisioned.bankName}, account_name = ${provisioned.accountName},
            provider_customer_code = ${provisioned.providerCustomerCode ?? null}
          WHERE id = ${id}`

  /** The id of an active account by its reference (a list's `startingAfter`). */
  const activeIdOf = (tenantId: string, mode: Mode, accountRef: string) =>
    sql<{ id: string }>`
        SELECT id FROM virtual_accounts WHERE tenant_id = ${tenantId} AND mode = ${mode} AND status = 'Active' AND account_ref = ${accountRef}`

  /** Active accounts, newest first, after the account `after` (a row id), optionally of one sub-merchant. */
  const listActive = (tenantId: string, mode: Mode, subMerchantRef: string | undefined, after: string | undefined, limit: number) =>
    sql<VirtualAccountRow>`${selectRows(sql.and([
        sql`va.tenant_id = ${tenantId}`,
        sql`va.mode = ${mode}`,
        sql`va.status = 'Active'`,
        ...(subMerchantRef !== undefined ? [sql`va.sub_merchant_ref = ${subMerchantRef}`] : []),
        ...(after !== undefined ? [sql`(va.created_at, va.id) < (SELECT created_at, id FROM virtual_accounts WHERE id = ${after})`] : [])
      ]))} ORDER BY va.created_at DESC, va.id DESC LIMIT ${limit}`.pipe(Effect.orDie)

  /**
   * Only records that moved no money can point at an account without activity (a reversal with nothing to reverse,
   * waiting for review): they keep their accountRef and lose the link.
   */
  const unlinkTransactions = (accountId: string) => sql`UPDATE transactions SET virtual_account_id = NULL WHERE virtual_account_id = ${accountId}`

  const deleteAccount = (accountId: string) => sql`DELETE FROM virtual_accounts WHERE id = ${accountId}`

  /** A customer's details in place (its e-mail only in case: the caller moves an account to another e-mail's customer). */
  const updateCustomer = (customerId: string, c: { readonly name: string; readonly email: string | null; readonly phone: string | null }) =>
    sql`UPDATE customers SET name = ${c.name}, email = ${c.email}, phone = ${c.phone} WHERE id = ${customerId}`

  /** An account's terms and customer (never its NUBAN). */
  const updateTerms = (id: string, t: { readonly expectedAmountKobo: number | null; readonly expiryDateUtc: Date | null; readonly customerId: string }) =>
    sql`UPDATE virtual_accounts SET expected_amount_kobo = ${t.expectedAmountKobo}, expiry_date_utc = ${t.expiryDateUtc}, customer_id = ${t.customerId}
        WHERE id = ${id}`

  /** The accountRefs of accounts by internal id, within a tenant and mode. */
  const refsOf = (tenantId: string, mode: Mode, ids: ReadonlyArray<string>) =>
    sql<{ id: string; accountRef: string }>`SELECT id, account_ref FROM virtual_accounts
        WHERE tenant_id = ${tenantId} AND mode = ${mode} AND id = ANY(${textArray(ids)}::text[])`.pipe(Effect.orDie)

  /** Deletes the customer once no account of its is left. */
  const deleteCustomerIfUnused = (customerId: string) =>
    sql`DELETE FROM customers c WHERE c.id = ${customerId}
            AND NOT EXISTS (SELECT 1 FROM virtual_accounts v WHERE v.customer_id = c.id)`

  return {
    findByRef, retakeProvisioning, releaseProvisioning, subMerchantExists, upsertCustomer, insertProvisioning, earlierWithEmail,
    activate, activeIdOf, listActive, unlinkTransactions, deleteAccount, deleteCustomerIfUnused, updateCustomer, updateTerms, refsOf
  } as const
})
