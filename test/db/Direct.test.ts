import { SqlClient, Statement } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { direct } from "../../src/db/Direct.js"
import { TestSql } from "../support/TestApp.js"

/**
 * `direct` (src/db/Direct.ts) runs a statement in a transaction on the transaction's connection, without @effect/sql's
 * per-statement wrapping. A statement transformer (`Statement.currentTransformer`, which the service never installs)
 * runs inside that wrapping, so counting its calls tells which way a statement went.
 */
const counted = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    let wrapped = 0
    const counting: Statement.Statement.Transformer = (statement) => Effect.sync(() => (wrapped++, statement))
    const value = yield* Effect.locally(self, Statement.currentTransformer, Option.some(counting))
    return { value, wrapped }
  })

layer(TestSql, { timeout: 60_000, excludeTestServices: true })("direct statements on the real Postgres", (it) => {
  it.effect("in a transaction (tracer off, as the service runs): the statement's own rows, names and errors, on the transaction's connection, unwrapped", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const table = `direct_probe_${process.pid}_${Date.now()}`
      yield* sql`CREATE TABLE ${sql(table)} (id int PRIMARY KEY, some_value text NOT NULL)`
      const read = () => sql<{ id: number; someValue: string }>`SELECT id, some_value FROM ${sql(table)} ORDER BY id`
      const inTx = sql.withTransaction(Effect.gen(function* () {
        const inserted = yield* direct(sql<{ id: number; someValue: string }>`INSERT INTO ${sql(table)} VALUES (1, 'a'), (2, 'b') RETURNING id, some_value`)
        // Seen by the library's own path in the same transaction: the same connection.
        return { inserted, viaDirect: yield* direct(read()), viaLibrary: yield* read() }
      })).pipe(Effect.withTracerEnabled(false))
      const { value, wrapped } = yield* counted(inTx)
      expect(value.inserted).toEqual([{ id: 1, someValue: "a" }, { id: 2, someValue: "b" }])
      expect(value.viaDirect).toEqual(value.inserted)
      expect(value.viaLibrary).toEqual(value.inserted)
      expect(wrapped).toBe(1) // the library's read only

      // An error is the statement's SqlError, and the transaction rolls back as it would.
      const failed = yield* sql.withTransaction(Effect.zipRight(
        direct(sql`INSERT INTO ${sql(table)} VALUES (3, 'c')`),
        direct(sql`INSERT INTO ${sql(table)} VALUES (1, 'again')`)
      )).pipe(Effect.withTracerEnabled(false), Effect.exit)
      expect(Exit.isFailure(failed)).toBe(true)
      if (Exit.isFailure(failed)) expect(String(failed.cause)).toContain("SqlError")
      expect((yield* read()).map((r) => r.id)).toEqual([1, 2])
      yield* sql`DROP TABLE ${sql(table)}`
    }))

  it.effect("outside a transaction, or with the tracer on (a traced service), it is the statement itself", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const probe = () => direct(sql<{ someValue: number }>`SELECT ${7}::int AS some_value`)
      const outside = yield* counted(probe().pipe(Effect.withTracerEnabled(false)))
      expect(outside).toEqual({ value: [{ someValue: 7 }], wrapped: 1 })
      const traced = yield* counted(sql.withTransaction(probe()).pipe(Effect.withTracerEnabled(true)))
      expect(traced).toEqual({ value: [{ someValue: 7 }], wrapped: 1 })
    }))
})
