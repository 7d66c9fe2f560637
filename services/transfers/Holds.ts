import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { LedgerAccount, move } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { holdableKobo, MoneyJournal, refundedKobo } from "../../src/domain/MoneyOut.js"
import { Ledger } from "../ledger/Ledger.js"
import { Tenants } from "../access/Tenants.js"
import { type TransactionRow, Transactions } from "../deposits/Transactions.js"
import { HoldStore, toHold } from "./HoldStore.js"
import { TransferStore } from "./TransferStore.js"

export interface HoldRequest {
  readonly amountKobo?: number | undefined
  readonly reason?: string | undefined
}

/** A deposit whose money sits in its account's free funds: a completed inflow credited to a virtual account. */
export const creditedDeposit = (row: TransactionRow | undefined, reference: string) =>
  Effect.gen(function* () {
    if (!row) return yield* notFound("transaction", reference)
    if (row.kind !== "inflow" || row.virtualAccountId === null || row.status !== "Completed") {
      const why = row.kind !== "inflow" ? "it is a reversal" : row.virtualAccountId === null ? "it was paid into an unknown NUBAN" : `it is ${row.status}`
      return yield* new BadRequest({ code: "nothing_available", message: `Deposit ${reference} has no money in an account to act on: ${why}.` })
    }
    return row as TransactionRow & { readonly virtualAccountId: string; readonly accountRef: string }
  })

/**
 * Escrow holds on deposits (`POST /settlements/{ref}/hold` and `/release`): a hold moves the deposit's money that is
 * still free (not held, refunded, settled or paid out) from customer_funds to escrow, where settlement and payouts
 * cannot take it; a release moves it back. Each in one transaction under the account's row lock; both idempotent.
 */
export class Holds extends Effect.Service<Holds>()("services/transfers/Holds", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const transactions = yield* Transactions
    const store = yield* HoldStore
    const transfers = yield* TransferStore
    const tenants = yield* Tenants

    type Credited = TransactionRow & { readonly virtualAccountId: string; readonly accountRef: string }

    /** What of the credited deposit a new hold may escrow now (under the account's lock). */
    const holdableOf = (scope: Scope, deposit: Credited) =>
      Effect.gen(function* () {
        return holdableKobo({
          appliedKobo: deposit.appliedKobo - deposit.reversedKobo,
          refundedKobo: refundedKobo(yield* transfers.refundsOf(scope, deposit.reference)),
          freeKobo: yield* ledger.balance(scope, LedgerAccount.customerFunds(deposit.virtualAccountId)),
          availableKobo: yield* ledger.available(scope)
        })
      })

    /** Moves `amountKobo` into escrow under the deposit's next hold `seq`, and records and audits the hold. */
    const place = (scope: Scope, deposit: Credited, seq: number, amountKobo: number, reason: string | null, actor: string) =>
      Effect.gen(function* () {
        const reference = deposit.reference
        yield* ledger.post(scope, MoneyJournal.hold(reference, seq), move(LedgerAccount.customerFunds(deposit.virtualAccountId), LedgerAccount.escrow(deposit.virtualAccountId), amountKobo))
        yield* store.place(scope, { reference, virtualAccountId: deposit.virtualAccountId, accountRef: deposit.accountRef, seq, heldKobo: amountKobo, reason, actor })
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "hold.placed", subject: reference, details: { amountKobo, reason } })
      })

    const hold = Effect.fn("Holds.hold")(function* (scope: Scope, reference: string, request: HoldRequest, actor: string) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* transactions.findRow(scope.tenantId, scope.mode, reference).pipe(Effect.orDie)
        if (row?.virtualAccountId) yield* transfers.lockAccount(row.virtualAccountId)
        const current = yield* store.find(scope, reference, true)
        // Idempotent: an active hold answers as it is, whatever became of its deposit since (a reversal, say).
        if (current?.status === "Held") return toHold(current)
        const deposit = yield* creditedDeposit(row, reference)
        const holdable = yield* holdableOf(scope, deposit)
        if (holdable === 0) {
          return yield* new BadRequest({ code: "nothing_available", message: `Nothing of deposit ${reference} is free to hold: it was refunded, settled, paid out or is held.` })
        }
        const amountKobo = request.amountKobo ?? holdable
        if (amountKobo > holdable) {
          return yield* new BadRequest({ code: "hold_exceeds_available", message: `Only ${holdable} kobo of deposit ${reference} is free to hold; ${amountKobo} was asked.` })
        }
        yield* place(scope, deposit, (current?.seq ?? 0) + 1, amountKobo, request.reason ?? null, actor).pipe(
          Effect.catchTag("Overdrawn", () => Effect.fail(new BadRequest({ code: "nothing_available", message: `Deposit ${reference}'s money is no longer available to hold.` })))
        )
        return toHold((yield* store.find(scope, reference))!)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * A hold placed by a money rule or payment flow (in the caller's transaction, under the account's lock it took):
     * up to `upToKobo` of what is still free. Never fails for lack of money: it answers what it did instead, so the
     * run's outcome can say it (an active hold stays as it is; nothing free holds nothing).
     */
    const holdUpTo = Effect.fn("Holds.holdUpTo")(function* (scope: Scope, reference: string, upToKobo: number, reason: string, actor: string) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* transactions.findRow(scope.tenantId, scope.mode, reference).pipe(Effect.orDie)
        if (!row?.virtualAccountId || row.kind !== "inflow" || row.status !== "Completed") return { kind: "not-credited" } as const
        yield* transfers.lockAccount(row.virtualAccountId)
        const current = yield* store.find(scope, reference, true)
        if (current?.status === "Held") return { kind: "already-held", heldKobo: current.heldKobo } as const
        const amountKobo = Math.min(upToKobo, yield* holdableOf(scope, row as Credited))
        if (amountKobo <= 0) return { kind: "nothing-free" } as const
        yield* place(scope, row as Credited, (current?.seq ?? 0) + 1, amountKobo, reason, actor)
        return { kind: "placed", heldKobo: amountKobo, askedKobo: upToKobo } as const
        // An overdraw rolls the savepoint back whole (nothing of the hold stays) and is answered as nothing free.
      })).pipe(Effect.catchTag("Overdrawn", () => Effect.succeed({ kind: "nothing-free" } as const)), Effect.catchTag("SqlError", Effect.die))
    })

    const release = Effect.fn("Holds.release")(function* (scope: Scope, reference: string, actor: string) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const seen = yield* store.find(scope, reference)
        if (!seen) {
          const deposit = yield* transactions.findRow(scope.tenantId, scope.mode, reference).pipe(Effect.orDie)
          return yield* (deposit ? notFound("hold", reference) : notFound("transaction", reference))
        }
        yield* transfers.lockAccount(seen.virtualAccountId)
        const current = (yield* store.find(scope, reference, true))!
        if (current.status === "Released") return toHold(current)
        if (current.status === "Refunded") {
          return yield* new Conflict({ code: "hold_not_active", message: `The hold on deposit ${reference} ended in a refund; there is nothing to release.` })
        }
        yield* ledger.post(scope, MoneyJournal.release(reference, current.seq), move(LedgerAccount.escrow(current.virtualAccountId), LedgerAccount.customerFunds(current.virtualAccountId), current.heldKobo))
          .pipe(Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`a release cannot overdraw escrow: ${e.message}`)))
        yield* store.close(scope, reference, "Released")
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "hold.released", subject: reference, details: { amountKobo: current.heldKobo } })
        return toHold((yield* store.find(scope, reference))!)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { hold, holdUpTo, release } as const
  })
}) {}
