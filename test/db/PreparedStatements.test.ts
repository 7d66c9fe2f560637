import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { PLAN_EACH_TIME, StatementNames } from "../../src/db/PreparedStatements.js"
import { TestSql } from "../support/TestApp.js"

describe("StatementNames (which texts run as named prepared statements)", () => {
  it("names a text on its third sighting, and keeps that name", () => {
    const names = new StatementNames(3, 10)
    expect(names.nameFor("SELECT $1")).toBeUndefined()
    expect(names.nameFor("SELECT $1")).toBeUndefined()
    const name = names.nameFor("SELECT $1")
    expect(name).toMatch(/^collections_\d+$/)
    expect(names.nameFor("SELECT $1")).toBe(name)
    expect(names.size).toBe(1)
  })
  it("gives different texts different names", () => {
    const names = new StatementNames(1, 10)
    expect(names.nameFor("SELECT $1")).not.toBe(names.nameFor("SELECT $1 + 1"))
  })
  it("never names a text marked to be planned each time", () => {
    const names = new StatementNames(1, 10)
    const text = `SELECT ${PLAN_EACH_TIME} $1`
    for (let i = 0; i < 5; i++) expect(names.nameFor(text)).toBeUndefined()
    expect(names.size).toBe(0)
  })
  it("prepares no more than its cap; later texts run unnamed, earlier ones keep their names", () => {
    const names = new StatementNames(1, 2)
    const a = names.nameFor("a")
    const b = names.nameFor("b")
    expect(names.nameFor("c")).toBeUndefined()
    expect(names.nameFor("c")).toBeUndefined()
    expect([names.nameFor("a"), names.nameFor("b")]).toEqual([a, b])
    expect(names.size).toBe(2)
  })
})

layer(TestSql, { timeout: 60_000, excludeTestServices: true })("the service's Postgres client on the real server", (it) => {
  it.effect("runs a repeated statement as a prepared statement on its connection, with the right answers", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // One transaction holds one connection, so its session's prepared statements are the ones this loop made.
      const { answers, prepared } = yield* sql.withTransaction(
        Effect.gen(function* () {
          const answers: Array<number> = []
          for (let i = 0; i < 6; i++) {
            const [row] = yield* sql<{ n: number }>`SELECT ${i}::int * 7 AS n /* prepared-probe */`
            answers.push(row!.n)
          }
          const prepared = yield* sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%prepared-probe%'`
          return { answers, prepared }
        })
      )
      expect(answers).toEqual([0, 7, 14, 21, 28, 35])
      expect(prepared).toHaveLength(1)
    }))

  it.effect("runs a statement marked PLAN_EACH_TIME unnamed however often it comes (planned on every execution)", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const prepared = yield* sql.withTransaction(
        Effect.gen(function* () {
          for (let i = 0; i < 6; i++) expect((yield* sql<{ n: number }>`SELECT ${sql.literal(PLAN_EACH_TIME)} ${i}::int * 7 AS n /* each-time-probe */`)[0]!.n).toBe(i * 7)
          return yield* sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%each-time-probe%'`
        })
      )
      expect(prepared).toEqual([])
    }))

  it.effect("a statement that fails to parse keeps failing cleanly and leaves the connection usable", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 5; i++) {
        const bad = yield* Effect.either(sql`SELEC ${i}::int AS n`)
        expect(Either.isLeft(bad)).toBe(true)
      }
      const ok = yield* Effect.forEach([1, 2, 3, 4, 5], (i) => sql<{ n: number }>`SELECT ${i}::int AS n /* after-bad */`)
      expect(ok.map((rows) => rows[0]!.n)).toEqual([1, 2, 3, 4, 5])
    }))

  it.effect("a table changed under a prepared statement: the next execution sees the new rows and columns it asks for", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE prepared_probe (id int PRIMARY KEY, v text)`
      const read = (id: number) => sql.withTransaction(sql<{ v: string }>`SELECT v FROM prepared_probe WHERE id = ${id}`)
      for (let i = 0; i < 5; i++) yield* sql`INSERT INTO prepared_probe (id, v) VALUES (${i}, ${`v${i}`})`
      for (let i = 0; i < 5; i++) expect((yield* read(i))[0]!.v).toBe(`v${i}`)
      yield* sql`ALTER TABLE prepared_probe ADD COLUMN w int NOT NULL DEFAULT 0`
      yield* sql`CREATE INDEX prepared_probe_v ON prepared_probe (v)`
      expect((yield* read(3))[0]!.v).toBe("v3")
    }))
})
