import { SqlClient } from "@effect/sql"
import { Data, Duration, Effect, Ref } from "effect"
import * as crypto from "node:crypto"
import { BadRequest, Conflict } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { newId } from "../../src/domain/Ids.js"
import { LedgerAccount, type Leg } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { MoneyJournal, settlementClaimLegs } from "../../src/domain/MoneyOut.js"
import { paymentStateOf } from "../../src/domain/Reconciliation.js"
import {
  allocationJournal, isSweepable, legFailed, type LegTransferStatus, legReference, MAX_LEG_ATTEMPTS, meetsMinimum, type SplitAmount,
  type SplitLeg, splitNet, subMerchantPlan
} from "../../src/domain/Settlement.js"
import { Ledger } from "../ledger/Ledger.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Providers } from "../providers/Providers.js"
import type { Recipient } from "../transfers/BankDirectory.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import { TransferDispatch } from "../transfers/TransferDispatch.js"
import { type TransferRow, TransferStore } from "../transfers/TransferStore.js"
import { SettlementConfig, type SettlementConfigRow, settlementRecipientOf } from "./SettlementConfig.js"
import { type RunSummary, SettlementRunSettings } from "./SettlementRunSettings.js"
import { SettlementStore } from "./SettlementStore.js"
import { payoutRecipientOf, SubMerchants, type SubMerchantRow } from "./SubMerchants.js"

/** A claim that the available balance no longer covers: nothing of it is kept. */
class Short extends Data.TaggedError("Short")<{}> {}

/** What one run settles with: the configuration as it stood, the tenant's account, the plan's (verified) sub-merchants. */
interface RunContext {
  readonly config: SettlementConfigRow
  readonly tenantTo: Recipient
  readonly planSubMerchants: ReadonlyMap<string, SubMerchantRow>
}

interface Candidate {
  readonly id: string
  readonly freeKobo: number
}

type Outcome =
  | { readonly kind: "settled"; readonly id: string; readonly transfers: ReadonlyArray<TransferRow> }
  | { readonly kind: "skipped"; readonly id: string | null }
  | { readonly kind: "held-back" }
  | { readonly kind: "short" }

/**
 * Settlement: sweeps the free money of each fully-paid, overpaid or open account into legs (the split plan, or the
 * sub-merchant and its platform fee), each leg a transfer through the money-out machinery. Per account ONE claim
 * transaction (account row locked first: the settlement, its legs, their transfers and the journals), then the provider
 * calls outside it (TransferDispatch: one call per leg reference, crash safe), then the outcomes as the provider
 * reports them (TransferOutcomes -> SettlementStore.legChanged). A failed leg's money waits in its source for the next
 * run's retry, with a new reference, without touching the legs that were paid.
 */
export class Settlements extends Effect.Service<Settlements>()("services/settlement/Settlements", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const transfers = yield* TransferStore
    const dispatch = yield* TransferDispatch
    const providers = yield* Providers
    const config = yield* SettlementConfig
    const subMerchants = yield* SubMerchants
    const store = yield* SettlementStore

    /** Takes the tenant's run lease; false when another run holds it. */
    const takeLease = (scope: Scope, leaseMs: number) =>
      sql<{ n: number }>`
        WITH up AS (
          INSERT INTO settlement_settings (tenant_id, mode, run_lease_until) VALUES (${scope.tenantId}, ${scope.mode}, now() + make_interval(secs => ${leaseMs / 1000}))
          ON CONFLICT (tenant_id, mode) DO UPDATE SET run_lease_until = EXCLUDED.run_lease_until
            WHERE settlement_settings.run_lease_until IS NULL OR settlement_settings.run_lease_until < now()
          RETURNING 1)
        SELECT count(*)::int AS n FROM up`.pipe(Effect.map((r) => r[0]!.n > 0), Effect.orDie)

    const renewLease = (scope: Scope, leaseMs: number) =>
      sql`UPDATE settlement_settings SET run_lease_until = now() + make_interval(secs => ${leaseMs / 1000})
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(Effect.asVoid, Effect.orDie)

    const releaseLease = (scope: Scope) =>
      sql`UPDATE settlement_settings SET run_lease_until = NULL, last_run_at = now() WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** The accounts that may be swept (fully paid, overpaid or open) and have free money (`f.free_kobo`). */
    const sweepableWithFreeMoney = (scope: Scope) =>
      sql`FROM virtual_accounts va
        CROSS JOIN LATERAL (SELECT -COALESCE(sum(e.amount_kobo), 0)::bigint AS free_kobo FROM ledger_entries e
          WHERE e.tenant_id = va.tenant_id AND e.mode = va.mode AND e.account = 'customer_funds:' || va.id) f
        WHERE va.tenant_id = ${scope.tenantId} AND va.mode = ${scope.mode}
          AND (va.expected_amount_kobo IS NULL OR va.amount_paid_kobo >= va.expected_amount_kobo) AND f.free_kobo > 0`

    /** Accounts that may be swept and hold at least the minimum of free money, oldest first. */
    const candidates = (scope: Scope, minPayoutKobo: number, limit: number) =>
      sql<Candidate>`SELECT va.id, f.free_kobo ${sweepableWithFreeMoney(scope)} AND f.free_kobo >= ${minPayoutKobo}
        ORDER BY va.created_at, va.id LIMIT ${limit}`.pipe(Effect.orDie)

    /** How many sweepable accounts hold some free money, but less than the minimum: held back. */
    const heldBackCount = (scope: Scope, minPayoutKobo: number) =>
      minPayoutKobo <= 1
        ? Effect.succeed(0)
        : sql<{ n: number }>`SELECT count(*)::int AS n ${sweepableWithFreeMoney(scope)} AND f.free_kobo < ${minPayoutKobo}`.pipe(
          Effect.map((r) => r[0]!.n),
          Effect.orDie
        )

    const fingerprint = (ref: string) => crypto.createHash("sha256").update(ref).digest("hex")

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
        const [latest] = yield* sql<{ status: string; reasonCode: string | null }>`SELECT status, reason_code FROM settlements
          WHERE virtual_account_id = ${vaId} ORDER BY created_at DESC, id DESC LIMIT 1`
        if (latest?.status === "Skipped" && latest.reasonCode === code) return null
        const id = newId("set")
        yield* sql`INSERT INTO settlements (id, tenant_id, mode, virtual_account_id, net_kobo, status, reason_code, reason, completed_at)
          VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${vaId}, ${netKobo}, 'Skipped', ${code}, ${reason}, now())`
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
        const [va] = yield* sql<{ accountRef: string; expectedAmountKobo: number | null; amountPaidKobo: number; subMerchantRef: string | null }>`
          SELECT account_ref, expected_amount_kobo, amount_paid_kobo, sub_merchant_ref FROM virtual_accounts WHERE id = ${vaId} FOR UPDATE`
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
        yield* sql`INSERT INTO settlements (id, tenant_id, mode, virtual_account_id, net_kobo, status)
          VALUES (${id}, ${scope.tenantId}, ${scope.mode}, ${vaId}, ${freeKobo}, 'Processing')`
        const allocation: Array<Leg> = [{ account: LedgerAccount.customerFunds(vaId), amountKobo: freeKobo }]
        const claims: Array<{ journalId: string; legs: ReadonlyArray<Leg> }> = []
        const refs: Array<string> = []
        for (const [i, a] of decision.amounts.entries()) {
          const legNo = i + 1
          const leg = legOf(a, sm, run.planSubMerchants)
          const target = leg.subMerchant ? payoutRecipientOf(leg.subMerchant)! : run.tenantTo
          const ref = legReference(id, legNo, 1)
          yield* sql`INSERT INTO settlement_legs (settlement_id, leg_no, tenant_id, mode, kind, sub_merchant_id, bps, flat_kobo, amount_kobo, source_account, transfer_ref)
            VALUES (${id}, ${legNo}, ${scope.tenantId}, ${scope.mode}, ${leg.kind}, ${leg.subMerchant?.id ?? null}, ${a.leg?.bps ?? null},
              ${a.leg?.flatKobo ?? null}, ${a.amountKobo}, ${leg.source}, ${ref})`
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

    /** Sends a settled account's leg transfers (outside any transaction); a failure to send is the completer's to finish. */
    const sendAll = (scope: Scope, rows: ReadonlyArray<TransferRow>) =>
      Effect.forEach(rows, (row) => dispatch.send(scope, row), { discard: true })

    /**
     * Retries the legs whose latest transfer failed or was reversed (their money back in their source): while the
     * settlement has attempts left, or, once it has Failed, when the destination changed since (the tenant fixed it).
     * A retry is a new transfer with the next attempt's reference; the legs that were paid are not touched.
     */
    const retryLegs = (scope: Scope, c: SettlementConfigRow) =>
      Effect.gen(function* () {
        const failed = yield* sql<{
          settlementId: string; legNo: number; kind: string; subMerchantId: string | null; amountKobo: number; sourceAccount: string
          transferRef: string; attempts: number; virtualAccountId: string; accountRef: string; accountNumber: string; bankCode: string
        }>`SELECT l.settlement_id, l.leg_no, l.kind, l.sub_merchant_id, l.amount_kobo, l.source_account, l.transfer_ref, l.attempts,
            s.virtual_account_id, va.account_ref, t.account_number, t.bank_code
          FROM settlements s JOIN settlement_legs l ON l.settlement_id = s.id
          JOIN transfers t ON t.tenant_id = l.tenant_id AND t.mode = l.mode AND t.merchant_tx_ref = l.transfer_ref
          JOIN virtual_accounts va ON va.id = s.virtual_account_id
          WHERE s.tenant_id = ${scope.tenantId} AND s.mode = ${scope.mode} AND s.status IN ('Processing', 'Failed')
            AND t.status IN ('Failed', 'Reversed')
          ORDER BY s.created_at, l.leg_no`.pipe(Effect.orDie)
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
            yield* sql`SELECT 1 FROM settlements WHERE id = ${f.settlementId} FOR UPDATE`
            const [leg] = yield* sql<{ transferRef: string; attempts: number }>`SELECT transfer_ref, attempts FROM settlement_legs
              WHERE settlement_id = ${f.settlementId} AND leg_no = ${f.legNo} FOR UPDATE`
            const latest = yield* transfers.find(scope, leg!.transferRef)
            if (leg!.transferRef !== f.transferRef || !latest || !legFailed(latest.status as LegTransferStatus)) return undefined
            const ref = legReference(f.settlementId, f.legNo, leg!.attempts + 1)
            const claim = yield* insertLegTransfer(scope, ref, f.amountKobo, target, f.sourceAccount, f.virtualAccountId, `Settlement ${f.accountRef}`)
            yield* ledger.post(scope, claim.journalId, claim.legs).pipe(
              Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`a failed leg's money waits in its source: ${e.message}`))
            )
            yield* sql`UPDATE settlement_legs SET transfer_ref = ${ref}, attempts = attempts + 1 WHERE settlement_id = ${f.settlementId} AND leg_no = ${f.legNo}`
            yield* sql`UPDATE settlements SET status = 'Processing', completed_at = NULL WHERE id = ${f.settlementId}`
            return (yield* transfers.find(scope, ref))!
          })).pipe(Effect.catchTag("SqlError", Effect.die))
          if (row === undefined) continue
          retried++
          yield* dispatch.send(scope, row)
        }
        return retried
      })

    /**
     * One run for one tenant and mode: failed legs retried, then every sweepable account with enough free money
     * settled (at most `maxAccountsPerRun`, `concurrency` at a time), within what the tenant may still pay out.
     * `manual` (POST /settlements/run) runs without autoSettle; both need the settlement account.
     */
    const runFor = Effect.fn("Settlements.runFor")(function* (scope: Scope, manual: boolean) {
      const settings = yield* SettlementRunSettings
      const c = yield* config.read(scope)
      const tenantTo = settlementRecipientOf(c)
      if (tenantTo === undefined) {
        return yield* new BadRequest({
          code: "settlement_account_missing",
          message: "No settlement account is set: PUT /api/v1/settings/settlement with settlementAccountNumber, settlementBankCode and settlementAccountName first."
        })
      }
      if (!(yield* takeLease(scope, settings.runLeaseMs))) {
        return yield* new Conflict({ code: "settlement_in_progress", message: "A settlement run for this tenant and mode is under way; ask again when it is done." })
      }
      return yield* Effect.gen(function* () {
        // The lease's heartbeat: renewed while this run lives, so only a run that died lets it run out.
        yield* renewLease(scope, settings.runLeaseMs).pipe(
          Effect.delay(Duration.millis(Math.max(1, Math.floor(settings.runLeaseMs / 3)))),
          Effect.forever,
          Effect.forkScoped
        )
        const planSubMerchants = new Map<string, SubMerchantRow>()
        for (const leg of c.splits) {
          if (leg.subMerchantRef === null) continue
          const sm = yield* subMerchants.findByReference(scope, leg.subMerchantRef)
          if (sm?.payoutAccountNumber != null) planSubMerchants.set(sm.reference, sm)
        }
        const run: RunContext = { config: c, tenantTo, planSubMerchants }
        // A failed leg is not sent again while the tenant owes for late reversals (each account's claim checks it too).
        const retriedLegs = (yield* ledger.receivable(scope)) > 0 ? 0 : yield* retryLegs(scope, c)
        const budget = yield* Ref.make(yield* ledger.available(scope))
        const todo = yield* candidates(scope, c.minPayoutKobo, settings.maxAccountsPerRun)
        const outcomes: Array<Outcome> = []
        yield* Effect.forEach(todo, (cand) =>
          Effect.gen(function* () {
            const outcome = yield* claimAccount(scope, run, cand.id, budget)
            if (outcome.kind === "settled") yield* sendAll(scope, outcome.transfers)
            outcomes.push(outcome)
          }).pipe(Effect.catchAllCause((cause) => Effect.logError(`settlement of account ${cand.id} failed; it is tried again next run`, cause))),
          { concurrency: settings.concurrency, discard: true })
        const settled = outcomes.flatMap((o) => (o.kind === "settled" ? [o] : []))
        const summary: RunSummary = {
          tenantId: scope.tenantId, mode: scope.mode,
          settlementIds: settled.map((o) => o.id),
          skippedIds: outcomes.flatMap((o) => (o.kind === "skipped" && o.id !== null ? [o.id] : [])),
          heldBack: outcomes.filter((o) => o.kind === "held-back").length + (yield* heldBackCount(scope, c.minPayoutKobo)),
          short: outcomes.filter((o) => o.kind === "short").length,
          retriedLegs,
          legsSent: settled.reduce((s, o) => s + o.transfers.length, 0)
        }
        if (summary.settlementIds.length + summary.skippedIds.length + summary.retriedLegs + summary.short > 0) {
          yield* Effect.logInfo(`settlement run (${manual ? "manual" : "auto"}) for ${scope.tenantId}/${scope.mode}: ${summary.settlementIds.length} settled (${summary.legsSent} legs), ${summary.skippedIds.length} skipped, ${summary.heldBack} held back, ${summary.short} short of balance, ${summary.retriedLegs} legs retried`)
        }
        return summary
      }).pipe(Effect.scoped, Effect.ensuring(releaseLease(scope)))
    })

    /** The auto-settle pass: every tenant and mode with autoSettle and a settlement account, one after another. */
    const runDue = Effect.fn("Settlements.runDue")(function* () {
      const due = yield* sql<{ tenantId: string; mode: Scope["mode"] }>`SELECT tenant_id, mode FROM settlement_settings
        WHERE auto_settle AND account_number IS NOT NULL AND bank_code IS NOT NULL
          AND (run_lease_until IS NULL OR run_lease_until < now())
        ORDER BY last_run_at NULLS FIRST, tenant_id, mode`.pipe(Effect.orDie)
      const summaries: Array<RunSummary> = []
      for (const t of due) {
        const summary = yield* runFor({ tenantId: t.tenantId, mode: t.mode }, false).pipe(
          Effect.catchTags({
            Conflict: () => Effect.succeed(undefined),
            BadRequest: () => Effect.succeed(undefined)
          }),
          Effect.catchAllCause((cause) => Effect.as(Effect.logError(`settlement run for ${t.tenantId}/${t.mode} failed`, cause), undefined))
        )
        if (summary) summaries.push(summary)
      }
      return summaries
    })

    const list = Effect.fn("Settlements.list")(function* (scope: Scope, page: PageRequest) {
      const after = yield* cursorId(page, "id", (id) => store.idOf(scope, id))
      const limit = limitOf(page)
      return pageOf(yield* store.list(scope, limit, after), limit - 1)
    })

    /** `POST /settlements/run`: a run now, answered with the settlements it made (the newest up to 500) and its counts. */
    const runNow = Effect.fn("Settlements.runNow")(function* (scope: Scope) {
      const s = yield* runFor(scope, true)
      const ids = [...s.settlementIds, ...s.skippedIds]
      const page = ids.length === 0 ? [] : yield* store.list(scope, 501, undefined, ids)
      return {
        ...pageOf(page, 500), settledCount: s.settlementIds.length, skippedCount: s.skippedIds.length, heldBackCount: s.heldBack,
        retriedLegCount: s.retriedLegs
      }
    })

    return { runFor, runDue, runNow, list } as const
  })
}) {}
