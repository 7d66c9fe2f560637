import { SqlClient } from "@effect/sql"
import { Array as Arr, Chunk, Clock, Effect, Queue } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { type Column, bulkInsert } from "../../src/db/BulkInsert.js"
import { integerArray } from "../../src/db/PgArray.js"
import type { DepositEnvelope } from "../../streams/DepositBus.js"
import type { SandboxEvent } from "./SandboxEvent.js"
import { outageLog } from "../../src/OutageLog.js"

export interface InboxRow {
  readonly id: number
  readonly tenantId: string
  readonly mode: Mode
  readonly provider: string
  readonly providerReference: string
  readonly kind: "inflow" | "reversal"
  readonly accountNumber: string
  readonly payload: SandboxEvent
  readonly reconciledAt: Date | null
}

/**
 * What one sweep pass saw (Inbox `advanceSweepMark`): the highest inbox id visible (null: none), and the xid the pass
 * took after its snapshot. Both as text: a bigint and an xid8.
 */
export interface SweepCeiling {
  readonly maxId: string | null
  readonly xid: string
}

/** How old a publish is before its inbox row gets a published mark (if it is still unreconciled then). */
const MARK_AFTER_MS = 1_000
/** Inbox batches whose published marks may wait at once. */
const MARKS_MAX = 4_096

export const envelopeOf = (r: Pick<InboxRow, "id" | "tenantId" | "mode" | "provider" | "providerReference" | "accountNumber">): DepositEnvelope => ({
  inboxId: r.id,
  tenantId: r.tenantId,
  mode: r.mode,
  provider: r.provider,
  reference: r.providerReference,
  accountNumber: r.accountNumber
})

const INBOX_COLUMNS: ReadonlyArray<Column<Omit<InboxRow, "id" | "reconciledAt">>> = [
  ["tenant_id", "text", (r) => r.tenantId], ["mode", "text", (r) => r.mode], ["provider", "text", (r) => r.provider],
  ["provider_reference", "text", (r) => r.providerReference], ["kind", "text", (r) => r.kind], ["account_number", "text", (r) => r.accountNumber],
  ["payload", "json", (r) => r.payload]
]

/** The Postgres inbox of provider events: the durable record a receiver answer rests on. */
export class Inbox extends Effect.Service<Inbox>()("services/deposits/Inbox", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const markOutages = yield* outageLog("published marks", "mark writes")

    /**
     * Inserts several events in ONE statement (one commit); per row, in order: its envelope and whether its NUBAN is
     * one of the tenant's accounts (read in the same statement), or undefined when the (tenant, mode, provider,
     * reference) was already there, or an earlier row of the same call carries it.
     */
    const insertMany = Effect.fn("Inbox.insertMany")(function* (rows: ReadonlyArray<Omit<InboxRow, "id" | "reconciledAt">>) {
      const key = (r: Pick<InboxRow, "tenantId" | "mode" | "provider" | "providerReference">) => `${r.tenantId}|${r.mode}|${r.provider}|${r.providerReference}`
      const first = new Map<string, number>()
      rows.forEach((r, i) => first.has(key(r)) || first.set(key(r), i))
      const unique = [...first.values()].map((i) => rows[i]!)
      const inserted = yield* sql<Pick<InboxRow, "id" | "tenantId" | "mode" | "provider" | "providerReference"> & { readonly known: boolean }>`
        WITH ins AS (
          ${bulkInsert(sql, "inbound_events", INBOX_COLUMNS, unique)}
          -- A one-time filter, run before the first row takes its id: this transaction has its id (xid) first, which
          -- the sweeper's low-water mark relies on (SweepCeiling).
          WHERE pg_current_xact_id() IS NOT NULL
          ON CONFLICT (tenant_id, mode, provider, provider_reference) DO NOTHING
          RETURNING id, tenant_id, mode, provider, provider_reference, account_number
        )
        SELECT ins.id, ins.tenant_id, ins.mode, ins.provider, ins.provider_reference,
          -- A probe per row (as EXISTS, Postgres hashed a scan of the whole accounts table instead).
          (SELECT true FROM virtual_accounts va WHERE va.nuban = ins.account_number AND va.tenant_id = ins.tenant_id AND va.mode = ins.mode LIMIT 1) IS NOT NULL AS known
        FROM ins`
      const byKey = new Map(inserted.map((r) => [key(r), r]))
      return rows.map((r, i) => {
        const row = first.get(key(r)) === i ? byKey.get(key(r)) : undefined
        return row === undefined ? undefined : { envelope: envelopeOf({ ...r, id: row.id }), known: row.known }
      })
    }, Effect.orDie)

    /** Inserts the event; undefined when the (tenant, mode, provider, reference) is already there. */
    const insert = (row: Omit<InboxRow, "id" | "reconciledAt">) => Effect.map(insertMany([row]), ([inserted]) => inserted?.envelope)

    const markPublished = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.void : sql`UPDATE inbound_events SET published_at = now() WHERE id = ANY(${ids}::bigint[])`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * The receiver's published marks, written together once a second rather than one statement per inbox batch, and
     * only on rows still unreconciled a second after their publish: the reconciler sets `published_at` with
     * `reconciled_at` anyway (a reconciled event plainly reached the bus), so a mark is only ever needed for a deposit
     * that is slow to reconcile. Marks published less than a second ago wait for the next pass (most of those rows
     * are reconciled by then; marking them at once made a quarter of all inbox rows take an extra, non-HOT update
     * under load). The mark only keeps the sweeper from re-feeding a row in flight; a row is marked at most about two
     * seconds after its publish and the sweeper waits three, so a late or lost mark costs at most a re-publish that
     * JetStream de-duplicates.
     */
    // Bounded: past MARKS_MAX waiting batches new marks are dropped. A lost mark costs at most a re-publish that
    // JetStream de-duplicates (see above), never a deposit.
    const marks = yield* Queue.dropping<{ readonly atMs: number; readonly ids: ReadonlyArray<number> }>(MARKS_MAX)
    const writeMarks = (ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? Effect.void
        // SKIP LOCKED: a row the reconciler holds is being reconciled, and gets its mark there; waiting for it
        // would only make that reconciliation wait for this statement in turn.
        : sql`UPDATE inbound_events SET published_at = now() WHERE id IN (
            SELECT id FROM inbound_events WHERE id = ANY(${integerArray(ids)}::bigint[]) AND published_at IS NULL AND reconciled_at IS NULL
            FOR UPDATE SKIP LOCKED)`.pipe(
            Effect.asVoid,
            Effect.zipLeft(markOutages.succeeded()),
            // Postgres away: one warning and one recovery line (src/OutageLog.ts); the sweeper may re-feed those rows.
            Effect.catchAllCause((c) => markOutages.failed(c))
          )
    yield* Effect.addFinalizer(() => Effect.flatMap(Queue.takeAll(marks), (batches) => writeMarks(Chunk.toReadonlyArray(batches).flatMap((b) => b.ids))))
    // Idle until a mark arrives (no timer while nothing happens), then a second for the rest to gather; what is
    // younger than MARK_AFTER_MS goes back on the queue for the next pass.
    yield* Queue.take(marks).pipe(
      Effect.zipLeft(Effect.sleep(`${MARK_AFTER_MS} millis`)),
      Effect.flatMap((first) => Effect.flatMap(Queue.takeAll(marks), (rest) => Effect.gen(function* () {
        const dueBy = (yield* Clock.currentTimeMillis) - MARK_AFTER_MS
        const [young, due] = Arr.partition([first, ...Chunk.toReadonlyArray(rest)], (b) => b.atMs <= dueBy)
        yield* writeMarks(due.flatMap((b) => b.ids))
        if (young.length > 0) yield* Queue.offerAll(marks, young)
      }))),
      Effect.forever,
      Effect.forkScoped
    )
    const notePublished = (ids: ReadonlyArray<number>) =>
      ids.length === 0 ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (atMs) => Queue.offer(marks, { atMs, ids })).pipe(Effect.asVoid)

    /**
     * Rows the bus may have lost: never published and older than a few seconds, or published long enough ago
     * (beyond JetStream's de-duplication window) without being reconciled. A row the reconciler gave up on (poison)
     * is left to the operator's replay, so nothing is retried forever. Read from the sweep mark up, on the key: every
     * row below the mark is reconciled or given up (`advanceSweepMark`).
     */
    const unreconciled = Effect.fn("Inbox.unreconciled")(function* (limit: number) {
      return yield* sql<Pick<InboxRow, "id" | "tenantId" | "mode" | "provider" | "providerReference" | "accountNumber">>`
        SELECT id, tenant_id, mode, provider, provider_reference, account_number FROM inbound_events
        WHERE id >= (SELECT below_id FROM inbox_sweep_mark)
          AND reconciled_at IS NULL AND gave_up_at IS NULL
          AND ((published_at IS NULL AND received_at < now() - interval '3 seconds')
            OR published_at < now() - interval '11 minutes')
        ORDER BY id LIMIT ${limit}`
    }, Effect.orDie)

    /**
     * Moves the sweep mark up to the first row not yet settled (reconciled or given up) among the ids at most the
     * `previous` ceiling's, once every transaction that could still hold one of those ids has ended; answers this
     * pass's ceiling, for the next pass.
     *
     * Why that is safe: ids are taken out of order with commits, so a row below a visible one may still be in flight
     * (its insert not committed), and a mark moved past it would hide it from the sweeper for good. The ceiling is the
     * highest id visible in this statement's snapshot: every id up to it was taken before the snapshot, by an insert
     * whose transaction had its xid before it took an id (`insertMany`'s one-time filter), so before this statement's
     * own xid, taken after its snapshot. Once the oldest running xid is past that xid, every one of those
     * transactions has committed or rolled back, and their rows (if any) are visible.
     */
    const advanceSweepMark = Effect.fn("Inbox.advanceSweepMark")(function* (previous: SweepCeiling | undefined) {
      const ceiling = previous?.maxId ?? null
      const [row] = yield* sql<{ readonly maxId: string | null; readonly xid: string }>`
        WITH candidate AS (
          SELECT COALESCE(
            (SELECT min(i.id) FROM inbound_events i
              WHERE i.id >= m.below_id AND i.id <= ${ceiling}::int8 AND i.reconciled_at IS NULL AND i.gave_up_at IS NULL),
            ${ceiling}::int8 + 1) AS below_id
          FROM inbox_sweep_mark m
          WHERE ${ceiling}::int8 IS NOT NULL AND pg_snapshot_xmin(pg_current_snapshot()) > ${previous?.xid ?? null}::xid8
        ), moved AS (
          -- Only upward, and only when it moves (at rest the mark is not written again every pass).
          UPDATE inbox_sweep_mark m SET below_id = c.below_id FROM candidate c WHERE c.below_id > m.below_id
        )
        -- "moved" runs though nothing reads it: a data-modifying WITH always runs to completion.
        SELECT (SELECT max(id) FROM inbound_events)::text AS max_id, pg_current_xact_id()::text AS xid`
      return { maxId: row!.maxId, xid: row!.xid } satisfies SweepCeiling
    }, Effect.orDie)

    const fromId = Effect.fn("Inbox.fromId")(function* (fromId: number, limit: number) {
      return yield* sql<Pick<InboxRow, "id" | "tenantId" | "mode" | "provider" | "providerReference" | "accountNumber">>`
        SELECT id, tenant_id, mode, provider, provider_reference, account_number FROM inbound_events
        WHERE id >= ${fromId} ORDER BY id LIMIT ${limit}`
    }, Effect.orDie)

    return { insert, insertMany, markPublished, notePublished, unreconciled, advanceSweepMark, fromId } as const
  })
}) {}
