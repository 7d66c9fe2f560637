import { SqlClient } from "@effect/sql"
import { Duration, Effect, Ref } from "effect"
import { BadRequest, Conflict } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import type { Scope } from "../../src/domain/Mode.js"
import { Ledger } from "../ledger/Ledger.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Providers } from "../providers/Providers.js"
import { TransferDispatch } from "../transfers/TransferDispatch.js"
import { type TransferRow, TransferStore } from "../transfers/TransferStore.js"
import { makeSettlementClaims, type Outcome, type RunContext } from "./SettlementClaims.js"
import { SettlementConfig, settlementRecipientOf } from "./SettlementConfig.js"
import { type RunSummary, SettlementRunSettings } from "./SettlementRunSettings.js"
import { SettlementStore } from "./SettlementStore.js"
import { SubMerchants, type SubMerchantRow } from "./SubMerchants.js"

/**
 * Settlement: sweeps the free money of each fully-paid, overpaid or open account into legs (the split plan, or the
 * sub-merchant and its platform fee), each leg a transfer through the money-out machinery. Per account ONE claim
 * transaction (account row locked first: the settlement, its legs, their transfers and the journals), then the provider
 * calls outside it (TransferDispatch: one call per leg reference, crash safe), then the outcomes as the provider
 * reports them (TransferOutcomes -> SettlementStore.legChanged). A failed leg's money waits in its source for the next
 * run's retry, with a new reference, without touching the legs that were paid. The claims and retries are
 * SettlementClaims.ts; the SQL is SettlementStore.ts.
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
    const { claimAccount, retryLegs } = makeSettlementClaims({ sql, ledger, transfers, dispatch, providers, subMerchants, store })
    const { takeLease, renewLease, releaseLease, candidates, heldBackCount } = store

    /** Sends a settled account's leg transfers (outside any transaction); a failure to send is the completer's to finish. */
    const sendAll = (scope: Scope, rows: ReadonlyArray<TransferRow>) =>
      Effect.forEach(rows, (row) => dispatch.send(scope, row), { discard: true })

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
      const due = yield* store.autoSettleDue()
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
