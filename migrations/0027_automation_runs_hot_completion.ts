import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The actor's completion of a run (`steps`, `completed_at`: services/automation/AutomationStore.ts `completeRuns`) may
 * be a HOT update (issue 33). It was never one: `automation_runs_flow_idx` named `completed_at` in its predicate, so
 * every completion wrote a new row version elsewhere and an entry in each of the table's three indexes (the run's key,
 * its five-column once-key, the flows' list), about 13,000 of them in a heavy bench run. The flows' list index now
 * holds every flow run; its one query (`listFlowRuns`) filters the few not completed yet. And pages are filled to half,
 * so a run's completed version fits beside it (a run is completed once, moments after it is written). Heavy bench runs
 * (13,100 runs each): fill factor 70, 43% of completions HOT; 60, 73%; 50, all of them, and the table only 13% larger
 * than at 70 (at 70 the versions that did not fit went to other pages).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX automation_runs_flow_idx`
  yield* sql`CREATE INDEX automation_runs_flow_idx ON automation_runs (tenant_id, mode, fired_at DESC, seq DESC) WHERE source = 'flow'`
  yield* sql`ALTER TABLE automation_runs SET (fillfactor = 50)`
})
