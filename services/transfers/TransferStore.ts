import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { keyList } from "../../src/db/KeyProbe.js"
import type { Transfer } from "../../src/contract/Transfers.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { TransferSource, TransferStatus } from "../../src/domain/MoneyOut.js"
import { providerTransferReference } from "../../src/domain/ProviderRefs.js"

export interface TransferRow {
  readonly id: string
  readonly tenantId: string
  readonly mode: Scope["mode"]
  readonly merchantTxRef: string
  readonly source: TransferSource
  readonly requestFingerprint: string
  readonly amountKobo: number
  readonly accountNumber: string
  readonly bankCode: string
  readonly bankName: string
  readonly accountName: string
  readonly narration: string | null
  readonly status: TransferStatus
  readonly failureReason: string | null
  readonly provider: string
  readonly providerReference: string | null
  readonly depositReference: string | null
  readonly virtualAccountId: string | null
  readonly accountRef: string | null
  readonly capDay: string | null
  /** A settlement leg's source: the ledger account it draws on and a failure gives back to (null for the rest). */
  readonly ledgerSource: string | null
  /** The claim's lease (or, once sent, the next status check) has run out. */
  readonly leaseExpired: boolean
  readonly attempts: number
  readonly createdAt: Date
  readonly completedAt: Date | null
}

export const toTransfer = (r: TransferRow): Transfer => ({
  merchantTxRef: r.merchantTxRef,
  amountKobo: r.amountKobo,
  accountNumber: r.accountNumber,
  bankCode: r.bankCode,
  bankName: r.bankName,
  accountName: r.accountName,
  narration: r.narration,
  status: r.status,
  failureReason: r.failureReason,
  providerReference: r.providerReference,
  source: r.source,
  createdAt: r.createdAt.toISOString(),
  completedAt: r.completedAt?.toISOString() ?? null,
  mode: r.mode
})

/** What a claim inserts: the transfer's own fields, and who made it. */
export type NewTransfer = Pick<TransferRow,
  | "id" | "merchantTxRef" | "source" | "requestFingerprint" | "amountKobo" | "accountNumber" | "bankCode" | "bankName" | "accountName"
  | "narration" | "provider" | "depositReference" | "virtualAccountId" | "capDay"
> & { readonly createdBy: string; readonly ledgerSource?: string | null }

/** What every read of a transfer selects: `${select} WHERE ...`. */
const TRANSFER_SELECT = `SELECT t.id, t.tenant_id, t.mode, t.merchant_tx_ref, t.source, t.request_fingerprint, t.amount_kobo, t.account_number,
        t.bank_code, t.bank_name, t.account_name, t.narration, t.status, t.failure_reason, t.provider, t.provider_reference,
        t.deposit_reference, t.virtual_account_id, va.account_ref, t.cap_day::text AS cap_day, t.ledger_source, t.lease_until < now() AS lease_expired,
        t.attempts, t.created_at, t.completed_at
      FROM transfers t LEFT JOIN virtual_accounts va ON va.id = t.virtual_account_id`

/**
 * The refunds of several deposits, newest first: one probe of the deposit index per deposit (src/db/KeyProbe.ts),
 * however many transfers the tenant has.
 */
export const refundsOfDeposits = (sql: SqlClient.SqlClient, scope: Scope, depositReferences: ReadonlyArray<string>) =>
  sql<TransferRow>`SELECT r.* FROM ${keyList(sql, depositReferences)} CROSS JOIN LATERAL (
      ${sql.literal(TRANSFER_SELECT)} WHERE t.tenant_id = ${scope.tenantId} AND t.mode = ${scope.mode} AND t.deposit_reference = k.key AND t.source = 'refund' OFFSET 0) r
    ORDER BY r.created_at DESC, r.id DESC`

/** The SQL of the transfers table: one function per statement. */
export class TransferStore extends Effect.Service<TransferStore>()("services/transfers/TransferStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const select = sql.literal(TRANSFER_SELECT)

    /** By the caller's reference; `lock` takes the row for this transaction. */
    const find = (scope: Scope, merchantTxRef: string, lock = false) =>
      sql<TransferRow>`${select} WHERE t.tenant_id = ${scope.tenantId} AND t.mode = ${scope.mode} AND t.merchant_tx_ref = ${merchantTxRef}
        ${lock ? sql`FOR UPDATE OF t` : sql``}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** The first lock of every money-out step that touches an account (the lock order: account row, then the rest). */
    const lockAccount = (virtualAccountId: string) =>
      sql`SELECT 1 FROM virtual_accounts WHERE id = ${virtualAccountId} FOR UPDATE`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Inserts a Pending transfer with a fresh lease; undefined when the reference is already taken. A real provider's
     * reference is derived and stored now, before the call, so its outcome webhook finds the transfer even when it
     * overtakes our finalising commit.
     */
    const insert = (scope: Scope, t: NewTransfer, leaseMs: number) =>
      sql<{ id: string }>`INSERT INTO transfers (id, tenant_id, mode, merchant_tx_ref, source, request_fingerprint, amount_kobo, account_number,
          bank_code, bank_name, account_name, narration, status, provider, provider_reference, deposit_reference, virtual_account_id, cap_day, ledger_source, created_by, lease_until)
        VALUES (${t.id}, ${scope.tenantId}, ${scope.mode}, ${t.merchantTxRef}, ${t.source}, ${t.requestFingerprint}, ${t.amountKobo},
          ${t.accountNumber}, ${t.bankCode}, ${t.bankName}, ${t.accountName}, ${t.narration}, 'Pending', ${t.provider},
          ${providerTransferReference(t.provider, scope.tenantId, scope.mode, t.merchantTxRef)}, ${t.depositReference},
          ${t.virtualAccountId}, ${t.capDay}::date, ${t.ledgerSource ?? null}, ${t.createdBy}, now() + make_interval(secs => ${leaseMs / 1000}))
        ON CONFLICT (merchant_tx_ref, tenant_id, mode) DO NOTHING RETURNING id`.pipe(Effect.map((rows) => rows[0]?.id), Effect.orDie)

    /** Takes a transfer whose lease ran out (a crash left it, or its status check is due) for `leaseMs`; false if another did. */
    const takeOver = (id: string, status: TransferStatus, leaseMs: number) =>
      sql<{ id: string }>`UPDATE transfers SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = attempts + 1
        WHERE id = ${id} AND status = ${status} AND lease_until < now() RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /**
     * Renews the lease of a Pending transfer only while it is still held (not run out): the fence before a provider call,
     * so a claimer that was too slow never calls after the completer or a retry took the transfer over.
     */
    const renewLease = (id: string, leaseMs: number) =>
      sql<{ id: string }>`UPDATE transfers SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = attempts + 1
        WHERE id = ${id} AND status = 'Pending' AND lease_until > now() RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** Pending -> Processing: the provider accepted it. The lease becomes the time of the first status check. */
    const markSent = (id: string, providerReference: string, statusCheckAfterMs: number) =>
      sql<{ id: string }>`UPDATE transfers SET status = 'Processing', provider_reference = ${providerReference}, sent_at = now(),
          lease_until = now() + make_interval(secs => ${statusCheckAfterMs / 1000})
        WHERE id = ${id} AND status = 'Pending' RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const markOutcome = (id: string, status: TransferStatus, providerReference: string | null, reason: string | null, final: boolean) =>
      sql`UPDATE transfers SET status = ${status}, provider_reference = COALESCE(provider_reference, ${providerReference}),
          failure_reason = COALESCE(${reason}, failure_reason), sent_at = COALESCE(sent_at, now()),
          completed_at = ${final ? sql`COALESCE(completed_at, now())` : sql`completed_at`}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /** Open transfers whose lease ran out, oldest first: the completer's work. */
    const due = (limit: number) =>
      sql<{ tenantId: string; mode: Scope["mode"]; merchantTxRef: string }>`SELECT tenant_id, mode, merchant_tx_ref FROM transfers
        WHERE status IN ('Pending', 'Processing') AND lease_until < now() ORDER BY lease_until LIMIT ${limit}`.pipe(Effect.orDie)

    /** A deposit's refund transfers, latest first. */
    /** The refunds of several deposits, newest first. */
    const refundsOfMany = (scope: Scope, depositReferences: ReadonlyArray<string>) => refundsOfDeposits(sql, scope, depositReferences).pipe(Effect.orDie)

    const refundsOf = (scope: Scope, depositReference: string) => refundsOfMany(scope, [depositReference])

    const list = (scope: Scope, limit: number, afterId: string | undefined) =>
      sql<TransferRow>`${select} WHERE t.tenant_id = ${scope.tenantId} AND t.mode = ${scope.mode}
        ${afterId === undefined ? sql`` : sql`AND (t.created_at, t.id) < (SELECT created_at, id FROM transfers WHERE id = ${afterId})`}
        ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit}`.pipe(Effect.orDie)

    const idOf = (scope: Scope, merchantTxRef: string) =>
      sql<{ id: string }>`SELECT id FROM transfers WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND merchant_tx_ref = ${merchantTxRef}`

    return { find, lockAccount, insert, takeOver, renewLease, markSent, markOutcome, due, refundsOf, refundsOfMany, list, idOf } as const
  })
}) {}
