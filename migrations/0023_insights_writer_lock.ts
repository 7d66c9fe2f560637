import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `insight_accounts` goes (issue 33): the roll-ups now have one writer at a time, the insights consumer's advisory turn
 * (services/insights/RollupStore.ts `writerLock`), so no recompute locks an account's row any more. The table held
 * nothing but those lock targets.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TABLE insight_accounts`
})
