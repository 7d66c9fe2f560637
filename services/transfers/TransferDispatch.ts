import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, Option } from "effect"
import { pacedPasses } from "../../src/Pacing.js"
import type { Scope } from "../../src/domain/Mode.js"
import { kindOf, type TransferOutcome } from "../../src/domain/MoneyOut.js"
import type { ProviderTransfer } from "../providers/BankProvider.js"
import { Providers } from "../providers/Providers.js"
import { probe } from "./MoneyOutHooks.js"
import { TransferOutcomes } from "./Outcomes.js"
import { MoneyOutSettings, withProviderTimeout } from "./Settings.js"
import { type TransferRow, TransferStore } from "./TransferStore.js"
import { outageLog } from "../../src/OutageLog.js"

const outcomeOf = (status: ProviderTransfer["status"]): TransferOutcome | undefined =>
  status === "Successful" ? "success" : status === "Failed" ? "failed" : status === "Reversed" ? "reversed" : undefined

/**
 * The provider half of every transfer. A transfer is claimed first (a Pending row with a lease, its money already
 * moved to "in transit", in the claimer's transaction); then, outside any transaction, the provider is called once
 * with the transfer's own reference; then a second transaction records what it answered. A crash anywhere leaves a
 * row whose lease runs out, and `resume` finishes it: it asks the provider for the reference first and sends only
 * when the provider never got it, so the provider is asked to pay at most once per reference.
 */
export class TransferDispatch extends Effect.Service<TransferDispatch>()("services/transfers/TransferDispatch", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const providers = yield* Providers
    const store = yield* TransferStore
    const outcomes = yield* TransferOutcomes

    /** The scope's provider now; none (live mode lost its connection, or SANDBOX_LIVE_MODE went off): left for later. */
    const providerOf = (scope: Scope, merchantTxRef: string) =>
      providers.resolve(scope).pipe(
        Effect.tapError((e) => Effect.logWarning(`transfer ${merchantTxRef}: no provider serves ${scope.mode} mode (${e.code}); left open`)),
        Effect.option
      )

    /** Records the provider's answer: Processing (sent), and at once its outcome when the provider already has one. */
    const finalise = (scope: Scope, merchantTxRef: string, answer: ProviderTransfer) =>
      sql.withTransaction(Effect.gen(function* () {
        const settings = yield* MoneyOutSettings
        const row = yield* outcomes.lockFor(scope, merchantTxRef)
        if (!row) return yield* Effect.dieMessage(`transfer ${merchantTxRef} vanished`)
        if (row.status === "Pending" && (yield* store.markSent(row.id, answer.providerReference, settings.statusCheckAfterMs))) {
          if (kindOf(row.source) === "refund") yield* outcomes.refundSent(scope, merchantTxRef)
        }
        const outcome = outcomeOf(answer.status)
        if (outcome !== undefined) {
          const now = (yield* store.find(scope, merchantTxRef, true))!
          yield* outcomes.applyLocked(scope, now, outcome, answer.providerReference, answer.reason)
        }
        yield* probe("beforeFinaliseCommit", merchantTxRef)
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Calls the provider for a transfer this fiber holds the lease of, and records the answer. A refusal fails the
     * transfer (the money goes back); no answer (5xx, timeout) leaves it Pending for `resume` after the lease.
     */
    const send = Effect.fn("TransferDispatch.send")(function* (scope: Scope, row: TransferRow) {
      yield* probe("beforeProviderCall", row.merchantTxRef)
      // The fence: only while this fiber still holds the lease (a slow claimer may have been overtaken).
      if (!(yield* store.renewLease(row.id, (yield* MoneyOutSettings).leaseMs))) {
        yield* Effect.logWarning(`transfer ${row.merchantTxRef}: the lease ran out before the provider call; left to whoever took it over`)
        return (yield* store.find(scope, row.merchantTxRef))!
      }
      const found = yield* providerOf(scope, row.merchantTxRef)
      if (Option.isNone(found)) return (yield* store.find(scope, row.merchantTxRef))!
      const provider = found.value
      const answer = yield* withProviderTimeout(provider.name, "transfer", provider.transfer({
        tenantId: scope.tenantId, merchantId: provider.merchantId, mode: scope.mode, reference: row.merchantTxRef, amountKobo: row.amountKobo,
        accountNumber: row.accountNumber, bankCode: row.bankCode, accountName: row.accountName, narration: row.narration
      })).pipe(Effect.either)
      yield* probe("afterProviderCall", row.merchantTxRef)
      if (Either.isRight(answer)) yield* finalise(scope, row.merchantTxRef, answer.right)
      else if (answer.left._tag === "TransferRejected") {
        yield* Effect.logWarning(`provider refused transfer ${row.merchantTxRef}: ${answer.left.reason}`)
        yield* outcomes.apply(scope, row.merchantTxRef, "failed", null, answer.left.reason)
      } else {
        yield* Effect.logWarning(`transfer ${row.merchantTxRef}: no answer from the provider (${answer.left.reason}); the completer will check and finish it`)
      }
      yield* probe("afterFinaliseCommit", row.merchantTxRef)
      return (yield* store.find(scope, row.merchantTxRef))!
    })

    /**
     * Finishes a transfer whose lease ran out: Pending (its claimer crashed, or got no answer) is asked about at the
     * provider and sent only if the provider never got it; Processing with no outcome yet gets a status check. Does
     * nothing when another fiber took it first.
     */
    const resume = Effect.fn("TransferDispatch.resume")(function* (scope: Scope, row: TransferRow) {
      const settings = yield* MoneyOutSettings
      if (row.status !== "Pending" && row.status !== "Processing") return row
      const lease = row.status === "Pending" ? settings.leaseMs : settings.statusCheckAfterMs * Math.min(2 ** Math.min(row.attempts, 6), 64)
      if (!(yield* store.takeOver(row.id, row.status, lease))) return row
      const found = yield* providerOf(scope, row.merchantTxRef)
      if (Option.isNone(found)) return row
      const provider = found.value
      const known = yield* withProviderTimeout(provider.name, "transfer status", provider.transferStatus({
        tenantId: scope.tenantId, merchantId: provider.merchantId, mode: scope.mode, reference: row.merchantTxRef
      })).pipe(Effect.either)
      if (Either.isLeft(known)) {
        yield* Effect.logWarning(`transfer ${row.merchantTxRef}: status check failed (${known.left.reason}); will try again`)
        return row
      }
      if (Option.isSome(known.right)) {
        const answer = known.right.value
        if (row.status === "Pending") yield* finalise(scope, row.merchantTxRef, answer)
        else {
          const outcome = outcomeOf(answer.status)
          if (outcome !== undefined) yield* outcomes.apply(scope, row.merchantTxRef, outcome, answer.providerReference, answer.reason)
        }
      } else if (row.status === "Pending") {
        yield* Effect.logInfo(`transfer ${row.merchantTxRef}: the provider never got it; sending it now`)
        return yield* send(scope, row)
      } else {
        yield* Effect.logError(`transfer ${row.merchantTxRef} is Processing but the provider does not know its reference`)
      }
      return (yield* store.find(scope, row.merchantTxRef))!
    })

    /** One pass of the completer over every transfer whose lease ran out. Returns how many it looked at. */
    const completeDue = Effect.fn("TransferDispatch.completeDue")(function* (limit = 100) {
      const due = yield* store.due(limit)
      yield* Effect.forEach(due, (d) =>
        Effect.gen(function* () {
          const scope: Scope = { tenantId: d.tenantId, mode: d.mode }
          const row = yield* store.find(scope, d.merchantTxRef)
          if (row) yield* resume(scope, row)
        }).pipe(Effect.catchAllCause((cause) => Effect.logError(`completer could not finish transfer ${d.merchantTxRef}`, cause))),
        { concurrency: 4, discard: true })
      return due.length
    })

    return { send, resume, completeDue } as const
  })
}) {}

/** The completer fiber: finishes, paced (src/Pacing.ts), the transfers a crash or a silent provider left open. */
export const TransferCompleterLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const dispatch = yield* TransferDispatch
    const settings = yield* MoneyOutSettings
    // Every interval while transfers are found open; after empty passes the wait doubles up to 6 intervals (30 s
    // by default): at rest a lapsed transfer is finished within that, and the completer costs next to nothing.
    const pace = { baseMs: settings.completerIntervalMs, idleMaxMs: 6 * settings.completerIntervalMs }
    yield* pacedPasses(pace, dispatch.completeDue(), (n) => n > 0, { outages: yield* outageLog("transfer completer") }).pipe(Effect.forkScoped)
  })
)
