import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import type { Recipient } from "../transfers/BankDirectory.js"
import type { SubMerchantRow } from "./SubMerchants.js"

/** The SQL of sub-merchants and the ledger figures of their balance: one function per statement. */
export const makeSubMerchantStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const select = sql`SELECT id, mode, reference, name, payout_bank_name, payout_bank_code, payout_account_number, payout_account_name,
      payout_verified_at, platform_fee_bps, created_at FROM sub_merchants`

  const find = (scope: Scope, id: string) =>
    sql<SubMerchantRow>`${select} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`.pipe(
      Effect.map((r) => r[0]),
      Effect.orDie
    )

  const findByReference = (scope: Scope, reference: string) =>
    sql<SubMerchantRow>`${select} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${reference}`.pipe(
      Effect.map((r) => r[0]),
      Effect.orDie
    )

  /** The row id of a sub-merchant of the scope (a list's `startingAfter`). */
  const idOf = (scope: Scope, id: string) =>
    sql<{ id: string }>`SELECT id FROM sub_merchants WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND id = ${id}`

  /** Newest first, after the sub-merchant `after`. */
  const list = (scope: Scope, after: string | undefined, limit: number) =>
    sql<SubMerchantRow>`${select} WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
        ${after === undefined ? sql`` : sql`AND (created_at, id) < (SELECT created_at, id FROM sub_merchants WHERE id = ${after})`}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`.pipe(Effect.orDie)

  /** Inserts a sub-merchant; false when its reference is taken in the scope. */
  const insert = (scope: Scope, id: string, input: { readonly name: string; readonly reference: string }, actor: string) =>
    sql<{ id: string }>`INSERT INTO sub_merchants (id, tenant_id, mode, reference, name, created_by)
        VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${input.reference}, ${input.name}, ${actor})
        ON CONFLICT (tenant_id, mode, reference) DO NOTHING RETURNING id`.pipe(Effect.orDie, Effect.map((inserted) => inserted.length > 0))

  /** Sets the verified payout account and the platform fee. */
  const setPayout = (id: string, recipient: Recipient, platformFeeBps: number) =>
    sql`UPDATE sub_merchants SET payout_bank_name = ${recipient.bankName}, payout_bank_code = ${recipient.bankCode},
          payout_account_number = ${recipient.accountNumber}, payout_account_name = ${recipient.accountName}, payout_verified_at = now(),
          platform_fee_bps = ${platformFeeBps}, updated_at = now()
        WHERE id = ${id}`.pipe(Effect.orDie)

  /** The ledger figures of a sub-merchant's balance (see SubMerchants.balance). */
  const balanceFigures = (scope: Scope, account: string, reference: string) =>
    sql<{ collected: number; pending: number; inTransit: number; unswept: number }>`
        SELECT
          (SELECT -COALESCE(sum(amount_kobo), 0) FROM ledger_entries WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND account = ${account} AND journal_id LIKE 'stl:set\\_%')::bigint AS collected,
          (SELECT -COALESCE(sum(amount_kobo), 0) FROM ledger_entries WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND account = ${account})::bigint AS pending,
          (SELECT COALESCE(sum(amount_kobo), 0) FROM transfers WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND ledger_source = ${account} AND status IN ('Pending', 'Processing'))::bigint AS in_transit,
          (SELECT -COALESCE(sum(e.amount_kobo), 0) FROM virtual_accounts va JOIN ledger_entries e ON e.tenant_id = va.tenant_id
            AND e.mode = va.mode AND e.account = 'customer_funds:' || va.id
            WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode} AND va.sub_merchant_ref = ${reference})::bigint AS unswept`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]!)
    )

  return { find, findByReference, idOf, list, insert, setPayout, balanceFigures } as const
})
