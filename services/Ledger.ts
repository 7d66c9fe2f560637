import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Mode } from "../src/domain/Mode.js"
import { type Column, insertFromJson } from "../src/db/InsertFromJson.js"
import { isBalanced, type Leg } from "../src/domain/Ledger.js"

type Journal = { readonly tenantId: string; readonly mode: Mode; readonly journalId: string; readonly legs: ReadonlyArray<Leg> }

const LEG_COLUMNS: ReadonlyArray<Column<{ readonly journal: Journal; readonly leg: Leg }>> = [
  ["tenant_id", "text", (r) => r.journal.tenantId], ["mode", "text", (r) => r.journal.mode], ["journal_id", "text", (r) => r.journal.journalId],
  ["account", "text", (r) => r.leg.account], ["amount_kobo", "int8", (r) => r.leg.amountKobo]
]

/** Appends balanced journals to the immutable ledger, inside the caller's transaction. */
export class Ledger extends Effect.Service<Ledger>()("services/Ledger", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /**
     * The INSERT of several balanced journals, for a caller that runs it in a statement of its own (say, as one
     * part of a multi-table write); undefined when there is nothing to write. Dies on an unbalanced journal.
     */
    const insertMany = (journals: ReadonlyArray<Journal>) =>
      Effect.gen(function* () {
        for (const j of journals) {
          if (!isBalanced(j.legs)) return yield* Effect.dieMessage(`unbalanced journal ${j.journalId}: ${JSON.stringify(j.legs)}`)
        }
        const rows = journals.flatMap((j) => j.legs.map((leg) => ({ journal: j, leg })))
        return rows.length === 0 ? undefined : insertFromJson(sql, "ledger_entries", LEG_COLUMNS, rows)
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
