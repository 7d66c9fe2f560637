import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../src/Config.js"
import { isBalanced, type Leg } from "../src/domain/Ledger.js"

/** Appends balanced journals to the immutable ledger, inside the caller's transaction. */
export class Ledger extends Effect.Service<Ledger>()("services/Ledger", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    type Journal = { readonly tenantId: string; readonly mode: Mode; readonly journalId: string; readonly legs: ReadonlyArray<Leg> }
    /**
     * The INSERT of several balanced journals, for a caller that runs it in a statement of its own (say, as one
     * part of a multi-table write); undefined when there is nothing to write. Dies on an unbalanced journal.
     */
    const insertMany = (journals: ReadonlyArray<Journal>) =>
      Effect.gen(function* () {
        for (const j of journals) {
          if (!isBalanced(j.legs)) return yield* Effect.dieMessage(`unbalanced journal ${j.journalId}: ${JSON.stringify(j.legs)}`)
        }
        const rows = journals.flatMap((j) => j.legs.map((l) => ({ tenantId: j.tenantId, mode: j.mode, journalId: j.journalId, account: l.account, amountKobo: l.amountKobo })))
        return rows.length === 0 ? undefined : sql`INSERT INTO ledger_entries ${sql.insert(rows)}`
      })
    /** One balanced journal, inside the caller's transaction. */
    const post = Effect.fn("Ledger.post")(function* (tenantId: string, mode: Mode, journalId: string, legs: ReadonlyArray<Leg>) {
      const insert = yield* insertMany([{ tenantId, mode, journalId, legs }])
      if (insert) yield* insert
    })
    const balance = Effect.fn("Ledger.balance")(function* (tenantId: string, mode: Mode, account: string) {
      const rows = yield* sql<{ balance: number }>`
        SELECT COALESCE(sum(amount_kobo), 0)::bigint AS balance FROM ledger_entries WHERE tenant_id = ${tenantId} AND mode = ${mode} AND account = ${account}`
      return rows[0]!.balance
    })
    return { post, insertMany, balance } as const
  })
}) {}
