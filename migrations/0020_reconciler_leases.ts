import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Who owns which partition of the deposit stream (DESIGN.md "The deposit pipeline", item 7; docs/deposits.md,
 * "Partitions and owners"). One row per (stream, partition): the reconciler process that holds it (`owner`, null when
 * free), until when (`expires_at`, renewed by the owner; another process may take the partition over only after it),
 * and `epoch`, raised by every take-over: it names the partition's JetStream consumer for that ownership and fences
 * the reconcile transactions (they lock the row FOR KEY SHARE and check owner and epoch). Times are the database's.
 *
 * `reconciler_members`: the reconciler processes alive (each renews its row with its leases), so each can take its
 * fair share of the partitions and hand back the rest when another process joins.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE reconciler_partitions (
      stream text NOT NULL,
      partition integer NOT NULL CHECK (partition >= 0),
      owner text,
      epoch bigint NOT NULL DEFAULT 0,
      expires_at timestamptz NOT NULL DEFAULT '-infinity',
      PRIMARY KEY (stream, partition)
    )`
  yield* sql`
    CREATE TABLE reconciler_members (
      stream text NOT NULL,
      owner text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (stream, owner)
    )`
})
