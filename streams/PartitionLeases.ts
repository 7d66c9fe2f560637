import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import { integerArray } from "../src/db/PgArray.js"
import { direct } from "../src/db/Direct.js"

/** One ownership of one partition: the lease row's epoch when this process took it. */
export interface Claim {
  readonly partition: number
  readonly epoch: number
}

/**
 * A reconcile transaction's fence found that this process no longer owns these partitions (another took them over):
 * nothing of theirs may be applied or acked by this process any more.
 */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly lost: ReadonlyArray<Claim> }> {}

export interface PartitionLeasesOptions {
  /** Whose partitions: the deposit stream's name (several deployments, or test runs, may share a database). */
  readonly key: string
  /** How many partitions there are (DEPOSIT_PARTITIONS). */
  readonly partitions: number
  /** How long a lease lasts unless renewed (RECONCILER_LEASE_MS). */
  readonly leaseMs: number
}

const claimKey = (c: Claim) => `${c.partition}:${c.epoch}`

/**
 * Exclusive, expiring ownership of the deposit stream's partitions, in Postgres (tables `reconciler_partitions` and
 * `reconciler_members`, migration 0020). Every time is the database's `now()`, so the processes' clocks never matter.
 *
 * - `beat` (every third of the lease): this process says it is alive and renews every lease it holds; the answer is
 *   what it holds (a partition missing from it was taken over: stop it at once) and how many reconciler processes are
 *   alive (for a fair share: ceil(partitions / alive)). A process counts as alive while it beat within the last two
 *   thirds of a lease, so a dead process stops counting before its leases run out and nobody hands work back in between.
 * - `acquire`: takes free partitions, or partitions whose lease has run out, raising each one's epoch. `FOR UPDATE SKIP
 *   LOCKED`: two processes never take the same one, and a row a reconcile transaction of its (old) owner still holds
 *   (FOR KEY SHARE, see `fence`) is left until that transaction has ended.
 * - `release`: hands a partition back at once (a rebalance, or a graceful stop), so another process need not wait.
 * - `fence`: run first inside every reconcile transaction: locks the batch's lease rows FOR KEY SHARE and checks this
 *   process still holds them at the claimed epochs; otherwise the transaction fails with LeaseLost and nothing commits.
 *   KEY SHARE does not conflict with the owner's renewals (an UPDATE of non-key columns), but does with a take-over's
 *   FOR UPDATE: a partition cannot change hands while a transaction of its owner is in flight, and a transaction that
 *   starts after the change sees it. So a paused old owner that wakes up after losing a partition applies nothing.
 */
export const makePartitionLeases = (options: PartitionLeasesOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { key, partitions, leaseMs } = options
    /** This process's name in the tables: unique per start (a restarted process is a new owner). */
    const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    /** Alive: beat within the last two thirds of a lease (see above). */
    const aliveForMs = Math.ceil(leaseMs / 3)

    yield* sql`
      INSERT INTO reconciler_partitions (stream, partition)
      SELECT ${key}, g FROM generate_series(0, ${partitions - 1}::int) AS g
      ON CONFLICT (stream, partition) DO NOTHING`
    // Members that stopped long ago (killed, never said goodbye): only their row is left.
    yield* sql`DELETE FROM reconciler_members WHERE stream = ${key} AND expires_at < now() - interval '1 hour'`

    const beat = Effect.gen(function* () {
      const [row] = yield* sql<{ alive: number; held: ReadonlyArray<readonly [number, number]> }>`
        WITH m AS (
          INSERT INTO reconciler_members (stream, owner, expires_at) VALUES (${key}, ${owner}, now() + ${leaseMs}::int * interval '1 millisecond')
          ON CONFLICT (stream, owner) DO UPDATE SET expires_at = EXCLUDED.expires_at
          RETURNING 1
        ), r AS (
          UPDATE reconciler_partitions SET expires_at = now() + ${leaseMs}::int * interval '1 millisecond'
          WHERE stream = ${key} AND owner = ${owner} AND partition < ${partitions}
          RETURNING partition, epoch
        )
        SELECT 1 + (SELECT count(*) FROM reconciler_members WHERE stream = ${key} AND owner <> ${owner}
            AND expires_at > now() + ${aliveForMs}::int * interval '1 millisecond')::int AS alive,
          COALESCE((SELECT json_agg(json_build_array(partition, epoch)) FROM r), '[]'::json) AS held`
      return {
        alive: row!.alive,
        held: row!.held.map(([partition, epoch]): Claim => ({ partition, epoch: Number(epoch) }))
      }
    })

    const acquire = (n: number) =>
      n <= 0
        ? Effect.succeed([] as ReadonlyArray<Claim>)
        : sql<{ partition: number; epoch: number }>`
            UPDATE reconciler_partitions p SET owner = ${owner}, epoch = p.epoch + 1, expires_at = now() + ${leaseMs}::int * interval '1 millisecond'
            FROM (
              SELECT partition FROM reconciler_partitions
              WHERE stream = ${key} AND partition < ${partitions} AND (owner IS NULL OR expires_at < now()) AND owner IS DISTINCT FROM ${owner}
              ORDER BY partition LIMIT ${n}::int
              FOR UPDATE SKIP LOCKED
            ) free
            WHERE p.stream = ${key} AND p.partition = free.partition
            RETURNING p.partition, p.epoch`.pipe(
            Effect.map((rows) => rows.map((r): Claim => ({ partition: r.partition, epoch: Number(r.epoch) })).sort((a, b) => a.partition - b.partition))
          )

    const release = (c: Claim) =>
      Effect.asVoid(sql`
        UPDATE reconciler_partitions SET owner = NULL, expires_at = '-infinity'
        WHERE stream = ${key} AND partition = ${c.partition} AND owner = ${owner} AND epoch = ${c.epoch}`)

    /** Every lease back, and out of the members: a graceful stop. */
    const leave = Effect.zipRight(
      sql`UPDATE reconciler_partitions SET owner = NULL, expires_at = '-infinity' WHERE stream = ${key} AND owner = ${owner}`,
      sql`DELETE FROM reconciler_members WHERE stream = ${key} AND owner = ${owner}`
    ).pipe(Effect.asVoid)

    const fence = (claims: ReadonlyArray<Claim>): Effect.Effect<void, LeaseLost | SqlError.SqlError> =>
      Effect.gen(function* () {
        const rows = yield* direct(sql<{ partition: number; epoch: number }>`
          SELECT partition, epoch FROM reconciler_partitions
          WHERE stream = ${key} AND owner = ${owner} AND partition = ANY(${integerArray(claims.map((c) => c.partition))}::int[])
          FOR KEY SHARE`)
        const held = new Set(rows.map((r) => claimKey({ partition: r.partition, epoch: Number(r.epoch) })))
        const lost = claims.filter((c) => !held.has(claimKey(c)))
        if (lost.length > 0) return yield* new LeaseLost({ lost })
      })

    return { owner, beat, acquire, release, leave, fence } as const
  })

export type PartitionLeases = Effect.Effect.Success<ReturnType<typeof makePartitionLeases>>
