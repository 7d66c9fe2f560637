import type { SqlClient } from "@effect/sql"
import { textArray } from "./PgArray.js"

/**
 * A list of keys as the outer side of a per-key probe: `FROM ${keyList(sql, keys)} CROSS JOIN LATERAL (SELECT ... FROM t
 * WHERE tenant_id = ... AND mode = ... AND key_column = k.key OFFSET 0) x`. Each key once, in the database's order of
 * text, so rows locked `FOR UPDATE` inside the probe are locked in one order by every caller. The probe must stay a
 * subquery: one with `FOR UPDATE` or an aggregate does; any other needs the `OFFSET 0`, or Postgres pulls it up into a
 * join that its generic plan may make a hash join over the whole table.
 *
 * Why not `key_column = ANY($n)`: the pool runs repeated statements as prepared ones (src/db/PreparedStatements.ts),
 * and Postgres's generic plan for `tenant_id = $1 AND mode = $2 AND key_column = ANY($3)` does not know the list. With
 * the statistics of a young table it reads the tenant's whole range of the `(tenant_id, mode, ...)` index and filters
 * every row by the list, and that plan stays cached while the table grows. A benchmark run's automation actor read
 * 1,378 buffers, every hold of the tenant, for each pass's probe of 200 new references (19 ms; by key, 0.3 ms); the
 * free-balance sums read every ledger entry of the tenant. In the probe form the key is in the index condition
 * whatever the statistics say (test/db/KeyProbes.test.ts).
 */
export const keyList = (sql: SqlClient.SqlClient, keys: ReadonlyArray<string>) =>
  sql`(SELECT DISTINCT u.key FROM unnest(${textArray(keys)}::text[]) AS u(key) ORDER BY u.key) k`
