import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest } from "../../src/contract/Problems.js"
import type { PutSettlementSettings, SettlementSettings, SplitPlan } from "../../src/contract/Settlement.js"
import type { Scope } from "../../src/domain/Mode.js"
import { planProblems, type SplitLeg } from "../../src/domain/Settlement.js"
import { Tenants } from "../access/Tenants.js"
import { BankDirectory, type Recipient } from "../transfers/BankDirectory.js"
import { SubMerchants, verifyPayoutAccount } from "./SubMerchants.js"

export interface SettlementConfigRow {
  readonly accountNumber: string | null
  readonly bankCode: string | null
  readonly bankName: string | null
  readonly accountName: string | null
  readonly verifiedAt: Date | null
  readonly autoSettle: boolean
  readonly minPayoutKobo: number
  readonly splits: ReadonlyArray<SplitLeg>
  readonly splitsUpdatedAt: Date | null
  readonly lastRunAt: Date | null
}

const EMPTY: SettlementConfigRow = {
  accountNumber: null, bankCode: null, bankName: null, accountName: null, verifiedAt: null, autoSettle: false, minPayoutKobo: 0, splits: [],
  splitsUpdatedAt: null, lastRunAt: null
}

/** The tenant's own settlement account as a transfer's recipient; undefined until one is set (verified). */
export const settlementRecipientOf = (c: SettlementConfigRow): Recipient | undefined =>
  c.accountNumber === null ? undefined : { accountNumber: c.accountNumber, bankCode: c.bankCode!, bankName: c.bankName!, accountName: c.accountName! }

const toSettings = (c: SettlementConfigRow, mode: Scope["mode"]): SettlementSettings => ({
  settlementAccountNumber: c.accountNumber,
  settlementBankCode: c.bankCode,
  settlementBankName: c.bankName,
  settlementAccountName: c.accountName,
  verifiedAt: c.verifiedAt?.toISOString() ?? null,
  autoSettle: c.autoSettle,
  minPayoutKobo: c.minPayoutKobo,
  active: c.autoSettle && c.accountNumber !== null && c.bankCode !== null,
  lastRunAt: c.lastRunAt?.toISOString() ?? null,
  mode
})

/**
 * Settlement settings and the split plan, one row per tenant and mode. The settlement account is verified before it
 * is saved (NUBAN check, name enquiry, `settlementAccountName` matched); a plan is checked whole (legs, shares,
 * priorities, and every sub-merchant it names exists with a verified payout account).
 */
export class SettlementConfig extends Effect.Service<SettlementConfig>()("services/settlement/SettlementConfig", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const directory = yield* BankDirectory
    const subMerchants = yield* SubMerchants
    const tenants = yield* Tenants

    /** The configuration (defaults when never set); `lock` takes the row for the caller's transaction. */
    const read = (scope: Scope) =>
      sql<SettlementConfigRow>`SELECT account_number, bank_code, bank_name, account_name, verified_at, auto_settle, min_payout_kobo, splits,
          splits_updated_at, last_run_at
        FROM settlement_settings WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(
        Effect.map((r) => r[0] ?? EMPTY),
        Effect.orDie
      )

    const get = Effect.fn("SettlementConfig.get")(function* (scope: Scope) {
      return toSettings(yield* read(scope), scope.mode)
    })

    const put = Effect.fn("SettlementConfig.put")(function* (scope: Scope, input: PutSettlementSettings, actor: string) {
      const current = yield* read(scope)
      const given = [input.settlementAccountNumber, input.settlementBankCode, input.settlementAccountName]
      let account: { readonly recipient: Recipient | null } | undefined
      if (given.some((v) => v !== undefined)) {
        if (given.every((v) => v === null)) account = { recipient: null }
        else if (!given.every((v) => typeof v === "string")) {
          return yield* new BadRequest({
            code: "validation_failed",
            message: "settlementAccountNumber, settlementBankCode and settlementAccountName go together: give all three (the account is verified against the name), or all three null to clear it."
          })
        } else {
          account = {
            recipient: yield* verifyPayoutAccount(directory, scope, input.settlementAccountNumber!, input.settlementBankCode!, input.settlementAccountName!, "settlementAccountName")
          }
        }
      }
      const r = account === undefined ? settlementRecipientOf(current) ?? null : account.recipient
      const autoSettle = input.autoSettle ?? current.autoSettle
      const minPayoutKobo = input.minPayoutKobo ?? current.minPayoutKobo
      const verifiedAt = account === undefined ? current.verifiedAt : r === null ? null : new Date()
      yield* sql`INSERT INTO settlement_settings (tenant_id, mode, account_number, bank_code, bank_name, account_name, verified_at, auto_settle, min_payout_kobo)
        VALUES (${scope.tenantId}, ${scope.mode}, ${r?.accountNumber ?? null}, ${r?.bankCode ?? null}, ${r?.bankName ?? null}, ${r?.accountName ?? null},
          ${verifiedAt}, ${autoSettle}, ${minPayoutKobo})
        ON CONFLICT (tenant_id, mode) DO UPDATE SET account_number = EXCLUDED.account_number, bank_code = EXCLUDED.bank_code,
          bank_name = EXCLUDED.bank_name, account_name = EXCLUDED.account_name, verified_at = EXCLUDED.verified_at,
          auto_settle = EXCLUDED.auto_settle, min_payout_kobo = EXCLUDED.min_payout_kobo, updated_at = now()`.pipe(Effect.orDie)
      const after = toSettings(yield* read(scope), scope.mode)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "settlement_settings.updated", subject: scope.tenantId, details: after })
      return after
    })

    const toPlan = (c: SettlementConfigRow, mode: Scope["mode"]): SplitPlan => ({
      splits: c.splits, updatedAt: c.splitsUpdatedAt?.toISOString() ?? null, mode
    })

    const getSplits = Effect.fn("SettlementConfig.getSplits")(function* (scope: Scope) {
      return toPlan(yield* read(scope), scope.mode)
    })

    /** Replaces the plan; an empty array clears it (a single sweep to the settlement account). */
    const putSplits = Effect.fn("SettlementConfig.putSplits")(function* (
      scope: Scope,
      legs: ReadonlyArray<{ readonly subMerchantRef?: string | null | undefined; readonly bps?: number | null | undefined; readonly flatKobo?: number | null | undefined; readonly priority: number }>,
      actor: string
    ) {
      const plan: ReadonlyArray<SplitLeg> = legs.map((l) => ({
        subMerchantRef: l.subMerchantRef ?? null, bps: l.bps ?? null, flatKobo: l.flatKobo ?? null, priority: l.priority
      }))
      const problems = planProblems(plan)
      if (problems.length > 0) {
        return yield* new BadRequest({ code: "invalid_split_plan", message: `The split plan is not valid: ${problems.map((p) => p.message).join("; ")}.`, errors: problems })
      }
      for (const [i, leg] of plan.entries()) {
        if (leg.subMerchantRef === null) continue
        const sm = yield* subMerchants.findByReference(scope, leg.subMerchantRef)
        if (!sm) {
          return yield* new BadRequest({
            code: "unknown_sub_merchant", message: `splits.${i}: no sub-merchant with reference ${JSON.stringify(leg.subMerchantRef)} in this tenant and mode.`,
            errors: [{ path: `splits.${i}.subMerchantRef`, message: "no such sub-merchant" }]
          })
        }
        if (sm.payoutAccountNumber === null) {
          return yield* new BadRequest({
            code: "sub_merchant_unverified",
            message: `splits.${i}: sub-merchant ${JSON.stringify(leg.subMerchantRef)} has no verified payout account yet; set it (PUT /api/v1/sub-merchants/${sm.id}/payout) first.`,
            errors: [{ path: `splits.${i}.subMerchantRef`, message: "no verified payout account" }]
          })
        }
      }
      yield* sql`INSERT INTO settlement_settings (tenant_id, mode, splits, splits_updated_at)
        VALUES (${scope.tenantId}, ${scope.mode}, ${JSON.stringify(plan)}::jsonb, now())
        ON CONFLICT (tenant_id, mode) DO UPDATE SET splits = EXCLUDED.splits, splits_updated_at = now(), updated_at = now()`.pipe(Effect.orDie)
      const after = toPlan(yield* read(scope), scope.mode)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "settlement_splits.updated", subject: scope.tenantId, details: after })
      return after
    })

    return { read, get, put, getSplits, putSplits } as const
  })
}) {}
