import { Clock, Effect } from "effect"
import type { LedgerEntry, Statement } from "../../src/contract/Ledger.js"
import { BadRequest } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import { describeJournal, type JournalDescription, publicAccountName, virtualAccountIdOf } from "../../src/domain/Journals.js"
import { LedgerAccount, type Leg } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { figuresOf, statementLines } from "../../src/domain/Statement.js"
import { VirtualAccounts } from "../accounts/VirtualAccounts.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { makeEntryIds } from "./EntryIds.js"
import { makeLedgerReadStore } from "./LedgerReadStore.js"

export interface Range {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** `from` must come before `to`: a 400 naming both otherwise. */
const checkRange = (r: Range) =>
  r.from !== undefined && r.to !== undefined && r.from.getTime() >= r.to.getTime()
    ? Effect.fail(new BadRequest({
      code: "validation_failed",
      message: `from (${r.from.toISOString()}) must be before to (${r.to.toISOString()}).`,
      errors: [{ path: "to", message: "must be after from" }]
    }))
    : Effect.void

const unique = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]

/**
 * Reading the ledger back (docs/ledger.md): the tenant's entries page by page, and a virtual account's statement. Account
 * names are shown as an integrator knows them (the accountRef, not the internal id); each journal's reason and reference
 * come from its id and legs (src/domain/Journals.ts). Reads only: no transaction, no lock.
 */
export class LedgerReads extends Effect.Service<LedgerReads>()("services/LedgerReads", {
  effect: Effect.gen(function* () {
    const store = yield* makeLedgerReadStore
    const accounts = yield* VirtualAccounts
    const ids = yield* makeEntryIds

    /** Each journal's reason and reference, from all of its legs. */
    const describeAll = (scope: Scope, journalIds: ReadonlyArray<string>) =>
      Effect.map(store.legsOf(scope, unique(journalIds)), (rows) => {
        const legs = new Map<string, Array<Leg>>()
        for (const r of rows) legs.set(r.journalId, [...(legs.get(r.journalId) ?? []), { account: r.account, amountKobo: r.amountKobo }])
        return (journalId: string): JournalDescription => describeJournal(journalId, legs.get(journalId) ?? [])
      })

    const entries = Effect.fn("LedgerReads.entries")(function* (scope: Scope, f: Range & PageRequest & { readonly accountRef?: string | undefined }) {
      yield* checkRange(f)
      const va = f.accountRef === undefined ? undefined : yield* accounts.resolve(scope, f.accountRef)
      const after = yield* cursorId(f, "id", (key) => store.entryId(scope, ids.rowId(key)))
      const limit = limitOf(f)
      const rows = yield* store.entries(scope, {
        accounts: va && [LedgerAccount.customerFunds(va.id), LedgerAccount.escrow(va.id), LedgerAccount.reviewPending(va.id)],
        from: f.from, to: f.to, after, limit
      })
      const describe = yield* describeAll(scope, rows.map((r) => r.journalId))
      const refs = yield* accounts.refsOf(scope, unique(rows.flatMap((r) => virtualAccountIdOf(r.account) ?? [])))
      return pageOf(rows.map((r): LedgerEntry => ({
        id: ids.publicId(r.id), journalId: r.journalId, account: publicAccountName(r.account, (id) => refs.get(id)), amountKobo: r.amountKobo,
        ...describe(r.journalId), createdAt: r.createdAt.toISOString()
      })), limit - 1)
    })

    const statement = Effect.fn("LedgerReads.statement")(function* (scope: Scope, accountRef: string, range: Range) {
      yield* checkRange(range)
      const va = yield* accounts.resolve(scope, accountRef)
      const to = range.to ?? new Date(yield* Clock.currentTimeMillis)
      const [opening, ...journals] = yield* store.statement(scope, {
        customerFunds: LedgerAccount.customerFunds(va.id), escrow: LedgerAccount.escrow(va.id), reviewPending: LedgerAccount.reviewPending(va.id)
      }, range.from, to)
      const describe = yield* describeAll(scope, journals.map((j) => j.journalId!))
      const openingFigures = figuresOf(opening!)
      const { lines, closing } = statementLines(openingFigures, journals.map((j) => ({
        journalId: j.journalId!, createdAt: j.createdAt!.toISOString(), sums: j, description: describe(j.journalId!)
      })))
      return {
        accountRef: va.accountRef, nuban: va.nuban, from: range.from?.toISOString() ?? null, to: to.toISOString(),
        opening: openingFigures, movements: lines, closing
      } satisfies Statement
    })

    return { entries, statement } as const
  })
}) {}
