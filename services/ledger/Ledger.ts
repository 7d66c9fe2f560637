import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { availableDelta, familyOf, GuardedBalance, isBalanced, type Leg, netLegs } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { makeLedgerStore } from "./LedgerStore.js"

export type Journal = Scope & { readonly journalId: string; readonly legs: ReadonlyArray<Leg> }

/** A change to one guarded balance row (natural sign). */
export interface GuardedChange extends Scope {
  readonly account: string
  readonly deltaKobo: number
}

/** A posting would take a guarded balance (escrow, the available balance, a sub-merchant) below zero. */
export class Overdrawn extends Data.TaggedError("Overdrawn")<{ readonly message: string }> {}

/** The free stripes of the available balance held less than a lowering needs (Ledger `lowerFreeStripes`). */
class FellShort extends Data.TaggedError("FellShort") {}

/** What the journals change on guarded balance rows, summed per row, in lock order (account name within tenant and mode). */
export const guardedChanges = (journals: ReadonlyArray<Journal>): ReadonlyArray<GuardedChange> => {
  const sums = new Map<string, GuardedChange>()
  const add = (j: Journal, account: string, deltaKobo: number) => {
    if (deltaKobo === 0) return
    const key = `${j.tenantId}|${j.mode}|${account}`
    const prev = sums.get(key)
    sums.set(key, { tenantId: j.tenantId, mode: j.mode, account, deltaKobo: (prev?.deltaKobo ?? 0) + deltaKobo })
  }
  for (const j of journals) {
    add(j, GuardedBalance.available, availableDelta(j.legs))
    for (const leg of j.legs) {
      const family = familyOf(leg.account)
      if (family?.guarded) add(j, leg.account, family.kind === "liability" ? -leg.amountKobo : leg.amountKobo)
    }
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c).filter((c) => c.deltaKobo !== 0)
}

const isCheckViolation = (e: { readonly cause?: unknown }) => (e.cause as { code?: string } | undefined)?.code === "23514"

/**
 * The immutable ledger: balanced journals, each posted once, and the guarded balance rows kept with them in the same
 * transaction (the caller's).
 */
export class Ledger extends Effect.Service<Ledger>()("services/Ledger", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* makeLedgerStore

    /**
     * The INSERT of several balanced journals (legs netted per account), for a caller that runs it in a statement of
     * its own (the deposit path's batch write); undefined when there is nothing to write. Dies on an unbalanced journal.
     * A journal already posted makes the statement fail on the journal key: that caller has its own idempotency key.
     */
    const insertMany = (journals: ReadonlyArray<Journal>) =>
      Effect.gen(function* () {
        for (const j of journals) {
          if (!isBalanced(j.legs)) return yield* Effect.dieMessage(`unbalanced journal ${j.journalId}: ${JSON.stringify(j.legs)}`)
        }
        const rows = journals.flatMap((j) => netLegs(j.legs).map((leg) => ({ journal: j, leg })))
        return rows.length === 0 ? undefined : store.insertEntries(rows)
      })

    const overdrawn = (changes: ReadonlyArray<GuardedChange>) =>
      new Overdrawn({ message: `posting would overdraw ${changes.map((c) => `${c.account} (${c.deltaKobo})`).join(", ")}` })

    /**
     * Raises the tenant's available balance on any stripe no other transaction holds (SKIP LOCKED), so concurrent
     * deposit batches of one tenant never wait for each other's commits; only when every stripe is held, it waits for
     * one. The stripes exist from the tenant's creation (Tenants.create, migration 0009).
     */
    const raiseAvailable = (c: GuardedChange) =>
      Effect.gen(function* () {
        const raised = yield* store.raiseFreeStripe(c)
        if (raised.length > 0) return
        const waited = yield* store.raiseAnyStripe(c)
        if (waited.length === 0) return yield* Effect.dieMessage(`tenant ${c.tenantId} (${c.mode}) has no available-balance stripes`)
      })

    /**
     * Takes the amount off the free stripes (no other transaction holds them), the fullest first, each down to at most
     * zero, in a savepoint: true when they held enough. When they did not, the savepoint is undone, which also lets go
     * of the stripes it locked, so the caller's fallback locks them in order holding none out of order (two lowerings
     * never wait for each other in a circle).
     */
    const lowerFreeStripes = (c: GuardedChange) =>
      sql.withTransaction(Effect.gen(function* () {
        let left = -c.deltaKobo
        while (left > 0) {
          const [took] = yield* store.takeFromFullestFreeStripe(c, left)
          if (took === undefined) return yield* Effect.fail(new FellShort())
          left -= took.takenKobo
        }
      })).pipe(Effect.as(true), Effect.catchTag("FellShort", () => Effect.succeed(false)))

    /**
     * Lowers the available balance. First from ONE stripe that holds enough and no one else holds (`SKIP LOCKED`); else
     * from several such stripes together; so a hold or a payout waits for no reconciler batch and makes none wait for
     * it. Only when the free stripes together hold too little (other steps hold the rest), every stripe locked (in
     * order), each taken down to at most zero, or `Overdrawn`. Either way no stripe goes below zero, so the sum never
     * does. Locking all eight makes every deposit batch of the tenant wait for the step, so it is the last resort (the
     * middle step is for lowerings larger than one stripe, such as a payout of most of a balance: docs/performance.md,
     * "The available balance's stripes").
     */
    const lowerAvailable = (c: GuardedChange) =>
      Effect.gen(function* () {
        const one = yield* store.takeFromFullestFreeStripe(c, -c.deltaKobo, -c.deltaKobo)
        if (one.length > 0) return
        if (yield* lowerFreeStripes(c)) return
        const stripes = yield* store.lockStripes(c)
        let left = -c.deltaKobo
        const takes: Array<readonly [string, number]> = []
        for (const s of stripes) {
          if (left === 0) break
          const take = Math.min(left, s.balanceKobo)
          if (take > 0) takes.push([s.account, take])
          left -= take
        }
        if (left > 0) return yield* Effect.fail(overdrawn([c]))
        yield* store.takeFromStripes(c, takes)
      })

    /** Guarded rows kept one per account (escrow, sub-merchants). */
    const applyRows = (changes: ReadonlyArray<GuardedChange>) =>
      Effect.gen(function* () {
        if (changes.length === 0) return
        const key = (c: { tenantId: string; mode: string; account: string }) => `${c.tenantId}|${c.mode}|${c.account}`
        // Several rows: lock them in order first, so two steps that touch the same rows never deadlock.
        if (changes.length > 1) yield* store.lockRows(changes)
        const done = new Set((yield* store.updateRows(changes)).map(key))
        const missing = changes.filter((c) => !done.has(key(c)))
        if (missing.length === 0) return
        yield* store.insertRows(missing)
        yield* store.updateRows(missing)
      })

    /**
     * Applies guarded changes in lock order (the available stripes sort before escrow and sub-merchant rows); a row that
     * would go below zero fails with `Overdrawn`, and the caller's transaction rolls back with it. (Not INSERT .. ON
     * CONFLICT DO UPDATE: Postgres checks the CHECK on the proposed row before it finds the conflict.)
     */
    const applyGuarded = (changes: ReadonlyArray<GuardedChange>): Effect.Effect<void, Overdrawn> =>
      changes.length === 0
        ? Effect.void
        : Effect.gen(function* () {
          for (const c of changes) {
            if (c.account === GuardedBalance.available) yield* (c.deltaKobo > 0 ? raiseAvailable(c) : lowerAvailable(c))
          }
          yield* applyRows(changes.filter((c) => c.account !== GuardedBalance.available))
        }).pipe(
          Effect.catchAll((e) =>
            e instanceof Overdrawn ? Effect.fail(e) : isCheckViolation(e) ? Effect.fail(overdrawn(changes)) : Effect.die(e))
        )

    /**
     * One balanced journal and its guarded balances, inside the caller's transaction. Posting the same journal id again
     * is a no-op (answers false); a journal whose legs only partly exist is a bug and dies.
     */
    const post = Effect.fn("Ledger.post")(function* (scope: Scope, journalId: string, legs: ReadonlyArray<Leg>) {
      if (!isBalanced(legs)) return yield* Effect.dieMessage(`unbalanced journal ${journalId}: ${JSON.stringify(legs)}`)
      const netted = netLegs(legs)
      if (netted.length === 0) return false
      const journal: Journal = { tenantId: scope.tenantId, mode: scope.mode, journalId, legs: netted }
      const n = yield* store.postEntries(journal)
      if (n === 0) return false
      if (n !== netted.length) return yield* Effect.dieMessage(`journal ${journalId} was partly posted before (${n} of ${netted.length} legs new)`)
      yield* applyGuarded(guardedChanges([journal]))
      return true
    })

    /**
     * Several journals of one step, in the caller's transaction, with their guarded balances changed by the journals'
     * net sum: an account a step credits and debits again (a settlement's sub-merchant share, allocated and sent at once)
     * takes no row lock. Each journal is posted once: one posted before is skipped (answers the ids posted now).
     */
    const postAll = Effect.fn("Ledger.postAll")(function* (scope: Scope, journals: ReadonlyArray<{ readonly journalId: string; readonly legs: ReadonlyArray<Leg> }>) {
      const netted: Array<Journal> = []
      for (const j of journals) {
        if (!isBalanced(j.legs)) return yield* Effect.dieMessage(`unbalanced journal ${j.journalId}: ${JSON.stringify(j.legs)}`)
        const legs = netLegs(j.legs)
        if (legs.length > 0) netted.push({ tenantId: scope.tenantId, mode: scope.mode, journalId: j.journalId, legs })
      }
      if (netted.length === 0) return [] as ReadonlyArray<string>
      const inserted = yield* store.postEntriesMany(netted)
      const counts = new Map(inserted.map((r) => [r.journalId, r.n]))
      const posted = netted.filter((j) => counts.has(j.journalId))
      for (const j of posted) {
        if (counts.get(j.journalId) !== j.legs.length) {
          return yield* Effect.dieMessage(`journal ${j.journalId} was partly posted before (${counts.get(j.journalId)} of ${j.legs.length} legs new)`)
        }
      }
      yield* applyGuarded(guardedChanges(posted))
      return posted.map((j) => j.journalId)
    })

    /**
     * Accounts' natural-sign balances from their entries (debit for assets, credit for liabilities), of one scope in one
     * statement: every account asked for (0 without entries).
     */
    const balances = Effect.fn("Ledger.balances")(function* (scope: Scope, accounts: ReadonlyArray<string>) {
      const sums = new Map((yield* store.entriesSums(scope, accounts)).map((r) => [r.account, Number(r.balance)]))
      return new Map(accounts.map((a) => {
        const sum = sums.get(a) ?? 0
        return [a, familyOf(a)?.kind === "liability" && sum !== 0 ? -sum : sum]
      }))
    })

    /** One account's natural-sign balance (`balances`). */
    const balance = (scope: Scope, account: string) => Effect.map(balances(scope, [account]), (b) => b.get(account)!)

    /**
     * What the tenant owes in the scope's mode for late reversals (its `tenant_receivable` row), locked `FOR UPDATE` by
     * a step that will recover from it, `FOR SHARE` by one that must see it stay at zero until it commits (settlement).
     * Lock order: after the account rows, before the available balance's stripes.
     */
    const receivable = store.receivable

    /**
     * Keeps the tenant's flag (`tenants.receivable_modes`, read by the deposit path with its account lock) in step with a
     * receivable the caller moved across zero, in the caller's transaction (which holds the receivable row's lock).
     */
    const flagReceivable = store.flagReceivable

    /** The tenant's available balance: the sum of its stripes, locked when `lock` (a step about to lower it). */
    const available = store.available

    return { post, postAll, insertMany, applyGuarded, available, balance, balances, receivable, flagReceivable } as const
  })
}) {}
