import type { SqlClient } from "@effect/sql"
import { Data, Effect, Ref } from "effect"
import * as crypto from "node:crypto"
import { newId } from "../../src/domain/Ids.js"
import { LedgerAccount, type Leg } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { MoneyJournal, settlementClaimLegs } from "../../src/domain/MoneyOut.js"
import { paymentStateOf } from "../../src/domain/Reconciliation.js"
import {
  allocationJournal, isSweepable, legFailed, type LegTransferStatus, legReference, MAX_LEG_ATTEMPTS, meetsMinimum, type SplitAmount,
  type SplitLeg, splitNet, subMerchantPlan
} from "../../src/domain/Settlement.js"
import type { Ledger } from "../ledger/Ledger.js"
import type { Providers } from "../providers/Providers.js"
import type { Recipient } from "../transfers/BankDirectory.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import type { TransferDispatch } from "../transfers/TransferDispatch.js"
import type { TransferRow, TransferStore } from "../transfers/TransferStore.js"
import { type SettlementConfigRow, settlementRecipientOf } from "./SettlementConfig.js"
import type { SettlementStore } from "./SettlementStore.js"
import { payoutRecipientOf, type SubMerchantRow, type SubMerchants } from "./SubMerchants.js"

/** A claim that the available balance no longer covers: nothing of it is kept. */
class Short extends Data.TaggedError("Short")<{}> {}

/** What one run settles with: the configuration as it stood, the tenant's account, the plan's (verified) sub-merchants. */
export interface RunContext {
  readonly config: SettlementConfigRow
  readonly tenantTo: Recipient
  readonly planSubMerchants: ReadonlyMap<string, SubMerchantRow>
}

export type Outcome =
  | { readonly kind: "settled"; readonly id: string; readonly transfers: ReadonlyArray<TransferRow> }
  | { readonly kind: "skipped"; readonly id: string | null }
  | { readonly kind: "held-back" }
  | { readonly kind: "short" }

/** The services a claim works with. */
export interface ClaimDeps {
  readonly sql: SqlClient.SqlClient
  readonly ledger: Ledger
  readonly transfers: TransferStore
  readonly dispatch: TransferDispatch
  readonly providers: Providers
  readonly subMerchants: SubMerchants
  readonly store: SettlementStore
}

/** Which kind of leg a split amount is, and the ledger account its money waits in. */
const legOf = (a: SplitAmount, sm: SubMerchantRow | undefined, planSubMerchants: ReadonlyMap<string, SubMerchantRow>) => {
  if (sm !== undefined) {
    return a.leg?.subMerchantRef === sm.reference
      ? { kind: "sub_merchant" as const, subMerchant: sm, source: LedgerAccount.subMerchant(sm.id) }
      : { kind: "platform_fee" as const, subMerchant: undefined, source: LedgerAccount.platformFees }
  }
  const named = a.leg?.subMerchantRef ? planSubMerchants.get(a.leg.subMerchantRef) : undefined
  return named !== undefined
    ? { kind: "sub_merchant" as const, subMerchant: named, source: LedgerAccount.subMerchant(named.id) }
    : { kind: "tenant" as const, subMerchant: undefined, source: LedgerAccount.settlementPending }
}

const fingerprint = (ref: string) => crypto.createHash("sha256").update(ref).digest("hex")

/**
 * A run's claims: one account's settlement with its legs and their transfers (`claimAccount`), and the retries of the
 * legs that failed (`retryLegs`). Built inside the Settlements service's layer (services/settlement/Settlements.ts).
 */
export const makeSettlementClaims = ({ sql, ledger, transfers, dispatch, providers, subMerchants, store }: ClaimDeps) => {
  /** Inserts a leg's transfer (Pending, leased) and answers the claim journal that goes with it. */
  const insertLegTransfer = (
    scope: Scope,
    ref: string,
    amountKobo: number,
    to: Recipient,
    source: string,
    virtualAccountId: string,
    narration: string
  ) =>
    Effect.gen(function* () {
      const settings = yield* MoneyOutSettings
      const id = yield* transfers.insert(scope, {
        id: newId("trf"), merchantTxRef: ref, source: "settlement", requestFingerprint: fingerprint(ref), amountKobo,
        accountNumber: to.accountNumber, bankCode: to.bankCode, bankName: to.bankName, accountName: to.accountName, narration,
        provider: yield* providers.nameOf(scope), depositReference: null, virtualAccountId, capDay: null, ledgerSource: source, createdBy: "settlement"
      }, settings.leaseMs)
      if (id === undefined) return yield* Effect.dieMessage(`settlement leg reference ${ref} is already taken`)
      return { journalId: MoneyJournal.claim("settlement", ref), legs: settlementClaimLegs(source, amountKobo) }
    })

  /** Records a Skipped settlement, unless the account's latest settlement is already skipped for the same reason. */
  const recordSkip = (scope: Scope, vaId: string, netKobo: number, code: string, reason: string) =>
    Effect.gen(function* () {
      const [latest] = yield* store.latestOf(vaId)
      if (latest?.status === "Skipped" && latest.reasonCode === code) return null
      const id = newId("set")
      yield* store.insertSkipped(scope, id, vaId, netKobo, code, reason)
      yield* store.stageEvent(scope, "settlement.skipped", (yield* store.get(scope, id))!)
      return id
    })

  /**
   * One account's claim, in one transaction: the account row locked (the lock order of every step that moves its
   * money), its free money read, the plan decided, and (unless skipped or short) the settlement, its legs, their
   * transfers and the journals written: `stl:<id>` moves the net from customer_funds to each leg's source, and each
   * leg's claim moves it on to settlements_in_transit.
   */
  const claimAccount = (scope: Scope, run: RunContext, vaId: string, budget: Ref.Ref<number>) =>
    sql.withTransaction(Effect.gen(function* () {
      const [va] = yield* store.lockAccount(vaId)
      if (!va || !isSweepable(paymentStateOf(va))) return { kind: "held-back" } as Outcome
      const freeKobo = yield* ledger.balance(scope, LedgerAccount.customerFunds(vaId))
      if (!meetsMinimum(freeKobo, run.config.minPayoutKobo)) return { kind: "held-back" } as Outcome
      // Nothing is paid out while late reversals leave the tenant owing: its next collections recover that first. The
      // receivable's row is locked (shared, after the account row, before the stripes), so a reversal that would make
      // it owe waits for this claim, and a claim after such a reversal sees it.
      const owedKobo = yield* ledger.receivable(scope, "share")
      if (owedKobo > 0) {
        const id = yield* recordSkip(scope, vaId, freeKobo, "receivable_outstanding",
          `the tenant owes ${owedKobo} kobo for late reversals (the bank took back deposits after their money had left); nothing is settled until its next collections have recovered it`)
        return { kind: "skipped", id } as Outcome
      }

      let plan: ReadonlyArray<SplitLeg> = run.config.splits
      let sm: SubMerchantRow | undefined
      if (va.subMerchantRef !== null) {
        sm = yield* subMerchants.findByReference(scope, va.subMerchantRef)
        if (!sm || sm.payoutAccountNumber === null) {
          const id = yield* recordSkip(scope, vaId, freeKobo, "sub_merchant_unverified",
            `sub-merchant ${JSON.stringify(va.subMerchantRef)} has no verified payout account; its collections wait until one is set`)
          return { kind: "skipped", id } as Outcome
        }
        plan = subMerchantPlan(sm.reference, sm.platformFeeBps)
      }
      const decision = splitNet(freeKobo, plan)
      if (decision.kind === "skip") {
        return { kind: "skipped", id: yield* recordSkip(scope, vaId, freeKobo, decision.code, decision.reason) } as Outcome
      }
      const reserved = yield* Ref.modify(budget, (b) => (freeKobo <= b ? [true, b - freeKobo] as const : [false, b] as const))
      if (!reserved) return yield* new Short()

      const id = newId("set")
      yield* store.insertProcessing(scope, id, vaId, freeKobo)
      const allocation: Array<Leg> = [{ account: LedgerAccount.customerFunds(vaId), amountKobo: freeKobo }]
      const claims: Array<{ journalId: string; legs: ReadonlyArray<Leg> }> = []
      const refs: Array<string> = []
      for (const [i, a] of decision.amounts.entries()) {
        const legNo = i + 1
        const leg = legOf(a, sm, run.planSubMerchants)
        const target = leg.subMerchant ? payoutRecipientOf(leg.subMerchant)! : run.tenantTo
        const ref = legReference(id, legNo, 1)
        yield* store.insertLeg(scope, {
          settlementId: id, legNo, kind: leg.kind, subMerchantId: leg.subMerchant?.id ?? null, bps: a.leg?.bps ?? null,
          flatKobo: a.leg?.flatKobo ?? null, amountKobo: a.amountKobo, sourceAccount: leg.source, transferRef: ref
        })
        allocation.push({ account: leg.source, amountKobo: -a.amountKobo })
        claims.push(yield* insertLegTransfer(scope, ref, a.amountKobo, target, leg.source, vaId, `Settlement ${va.accountRef}`))
        refs.push(ref)
      }
      yield* ledger.postAll(scope, [{ journalId: allocationJournal(id), legs: allocation }, ...claims]).pipe(
        Effect.catchTag("Overdrawn", () => Effect.zipRight(Ref.update(budget, (b) => b + freeKobo), new Short()))
      )
      const rows: Array<TransferRow> = []
      for (const ref of refs) rows.push((yield* transfers.find(scope, ref))!)
      return { kind: "settled", id, transfers: rows } as Outcome
    })).pipe(
      Effect.catchTag("Short", () => Effect.succeed({ kind: "short" } as Outcome)),
      Effect.catchTag("SqlError", Effect.die)
    )

  /**
   * Retries the legs whose latest transfer failed or was reversed (their money back in their source): while the
   * settlement has attempts left, or, once it has Failed, when the destination changed since (the tenant fixed it).
   * A retry is a new transfer with the next attempt's reference; the legs that were paid are not touched.
   */
  const retryLegs = (scope: Scope, c: SettlementConfigRow) =>
    Effect.gen(function* () {
      const failed = yield* store.failedLegs(scope)
      let retried = 0
      for (const f of failed) {
        const sm = f.subMerchantId === null ? undefined : yield* subMerchants.find(scope, f.subMerchantId)
        const target = sm === undefined ? settlementRecipientOf(c) : payoutRecipientOf(sm)
        if (target === undefined) continue
        const moved = target.accountNumber !== f.accountNumber || target.bankCode !== f.bankCode
        if (f.attempts >= MAX_LEG_ATTEMPTS && !moved) continue
        const row = yield* sql.withTransaction(Effect.gen(function* () {
          yield* transfers.lockAccount(f.virtualAccountId)
          if ((yield* ledger.receivable(scope, "share")) > 0) return undefined
          yield* store.lockSettlement(f.settlementId)
          const [leg] = yield* store.lockLeg(f.settlementId, f.legNo)
          const latest = yield* transfers.find(scope, leg!.transferRef)
          if (leg!.transferRef !== f.transferRef || !latest || !legFailed(latest.status as LegTransferStatus)) return undefined
          const ref = legReference(f.settlementId, f.legNo, leg!.attempts + 1)
          const claim = yield* insertLegTransfer(scope, ref, f.amountKobo, target, f.sourceAccount, f.virtualAccountId, `Settlement ${f.accountRef}`)
          yield* ledger.post(scope, claim.journalId, claim.legs).pipe(
            Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`a failed leg's money waits in its source: ${e.message}`))
          )
          yield* store.legRetried(f.settlementId, f.legNo, ref)
          yield* store.reopen(f.settlementId)
          return (yield* transfers.find(scope, ref))!
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        if (row === undefined) continue
        retried++
        yield* dispatch.send(scope, row)
      }
      return retried
    })

  return { claimAccount, retryLegs } as const
}
