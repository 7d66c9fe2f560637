import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { LedgerAccount, move } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { holdableKobo, MoneyJournal, refundedKobo } from "../../src/domain/MoneyOut.js"
import { Ledger } from "../ledger/Ledger.js"
import { Tenants } from "../access/Tenants.js"
import { type TransactionRow, Transactions } from "../deposits/Transactions.js"
import { HoldStore, type NewHold, toHold } from "./HoldStore.js"
import { type TransferRow, TransferStore } from "./TransferStore.js"

/** A hold a money rule or payment flow asks for: up to `upToKobo` of the deposit's money still free. */
export interface HoldUpTo {
  readonly reference: string
  readonly upToKobo: number
  readonly reason: string
  readonly actor: string
}

/** What `holdUpTo` did. */
export type HoldUpToResult =
  | { readonly kind: "placed"; readonly heldKobo: number; readonly askedKobo: number }
  | { readonly kind: "already-held"; readonly heldKobo: number }
  | { readonly kind: "nothing-free" }
  | { readonly kind: "not-credited" }

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
    const holdUpTo = Effect.fn("Holds.holdUpTo")(function* (
      scope: Scope, reference: string, upToKobo: number, reason: string, actor: string,
      /** The caller's transaction already holds the account against other debits (holdUpToMany's caller): no lock here. */
      options: { readonly locked?: boolean } = {}
    ) {
      return yield* sql.withTransaction(Effect.gen(function* () {
        const row = yield* transactions.findRow(scope.tenantId, scope.mode, reference).pipe(Effect.orDie)
        if (!row?.virtualAccountId || row.kind !== "inflow" || row.status !== "Completed") return { kind: "not-credited" } as const
        if (options.locked !== true) yield* transfers.lockAccount(row.virtualAccountId)
        const current = yield* store.find(scope, reference, true)
        if (current?.status === "Held") return { kind: "already-held", heldKobo: current.heldKobo } as const
        const amountKobo = Math.min(upToKobo, yield* holdableOf(scope, row as Credited))
        if (amountKobo <= 0) return { kind: "nothing-free" } as const
        yield* place(scope, row as Credited, (current?.seq ?? 0) + 1, amountKobo, reason, actor)
        return { kind: "placed", heldKobo: amountKobo, askedKobo: upToKobo } as const
        // An overdraw rolls the savepoint back whole (nothing of the hold stays) and is answered as nothing free.
      })).pipe(Effect.catchTag("Overdrawn", () => Effect.succeed({ kind: "nothing-free" } as const)), Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * `holdUpTo` for several deposits of one scope, in the caller's transaction, which holds their accounts' locks (the
     * automation actor's, in the reconciler's order): the same answers as `holdUpTo` called for each in turn, from one
     * read of each kind and one write of each kind, whatever their number (issue 33: the actor placed about 150 holds a
     * second, 14 statements each). What each may escrow is worked out in order, each hold lowering what the next one of
     * its account and its tenant finds free. The tenant's available balance is not locked while it is read (as in
     * `holdUpTo`): if it fell meanwhile and the batch would overdraw it, the batch is undone and each is placed alone.
     */
    const holdUpToMany = Effect.fn("Holds.holdUpToMany")(function* (scope: Scope, requests: ReadonlyArray<HoldUpTo>) {
      if (requests.length === 0) return [] as ReadonlyArray<HoldUpToResult>
      const references = [...new Set(requests.map((r) => r.reference))]
      return yield* sql.withTransaction(Effect.gen(function* () {
        const rows = new Map((yield* transactions.findRows(scope.tenantId, scope.mode, references).pipe(Effect.orDie)).map((r) => [r.reference, r]))
        const credited = (r: TransactionRow | undefined): r is Credited =>
          r?.virtualAccountId !== null && r?.virtualAccountId !== undefined && r.kind === "inflow" && r.status === "Completed"
        const current = new Map((yield* store.findMany(scope, references, true)).map((h) => [h.reference, { status: h.status, seq: h.seq, heldKobo: h.heldKobo }]))
        const refunds = new Map<string, Array<TransferRow>>()
        for (const t of yield* transfers.refundsOfMany(scope, references)) {
          const list = refunds.get(t.depositReference!) ?? []
          list.push(t)
          refunds.set(t.depositReference!, list)
        }
        const fundsOf = (r: Credited) => LedgerAccount.customerFunds(r.virtualAccountId)
        const creditedRows = [...rows.values()].filter(credited)
        const free = yield* ledger.balances(scope, [...new Set(creditedRows.map(fundsOf))])
        let available = creditedRows.length === 0 ? 0 : yield* ledger.available(scope)
        const results: Array<HoldUpToResult> = []
        const placed: Array<NewHold> = []
        for (const q of requests) {
          const row = rows.get(q.reference)
          if (!credited(row)) {
            results.push({ kind: "not-credited" })
            continue
          }
          const hold = current.get(q.reference)
          if (hold?.status === "Held") {
            results.push({ kind: "already-held", heldKobo: hold.heldKobo })
            continue
          }
          const holdable = holdableKobo({
            appliedKobo: row.appliedKobo - row.reversedKobo,
            refundedKobo: refundedKobo(refunds.get(q.reference) ?? []),
            freeKobo: free.get(fundsOf(row)) ?? 0,
            availableKobo: available
          })
          const amountKobo = Math.min(q.upToKobo, holdable)
          if (amountKobo <= 0) {
            results.push({ kind: "nothing-free" })
            continue
          }
          const seq = (hold?.seq ?? 0) + 1
          placed.push({ reference: q.reference, virtualAccountId: row.virtualAccountId, accountRef: row.accountRef, seq, heldKobo: amountKobo, reason: q.reason, actor: q.actor })
          current.set(q.reference, { status: "Held", seq, heldKobo: amountKobo })
          free.set(fundsOf(row), (free.get(fundsOf(row)) ?? 0) - amountKobo)
          available -= amountKobo
          results.push({ kind: "placed", heldKobo: amountKobo, askedKobo: q.upToKobo })
        }
        if (placed.length === 0) return results
        const journals = placed.map((h) => ({
          journalId: MoneyJournal.hold(h.reference, h.seq),
          legs: move(LedgerAccount.customerFunds(h.virtualAccountId), LedgerAccount.escrow(h.virtualAccountId), h.heldKobo)
        }))
        const posted = yield* ledger.postAll(scope, journals)
        if (posted.length !== journals.length) return yield* Effect.dieMessage(`holds: ${journals.length - posted.length} hold journals were posted before`)
        yield* store.placeMany(scope, placed)
        yield* tenants.auditMany(placed.map((h) => ({
          tenantId: scope.tenantId, mode: scope.mode, actor: h.actor, action: "hold.placed", subject: h.reference, details: { amountKobo: h.heldKobo, reason: h.reason }
        })))
        return results
      })).pipe(
        // Undone whole (the savepoint); each alone then answers as holdUpTo does, an overdraw as nothing free.
        // (The caller holds the accounts, perhaps `FOR KEY SHARE` only: no lock is taken again, so none is upgraded.)
        Effect.catchTag("Overdrawn", () => Effect.forEach(requests, (q) => holdUpTo(scope, q.reference, q.upToKobo, q.reason, q.actor, { locked: true }))),
        Effect.catchTag("SqlError", Effect.die)
      )
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

    return { hold, holdUpTo, holdUpToMany, release } as const
  })
}) {}
