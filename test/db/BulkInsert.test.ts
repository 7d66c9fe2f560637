import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type Column, bulkInsert } from "../../src/db/BulkInsert.js"
import { TestSql } from "../support/TestApp.js"

interface Row {
  readonly name: string | null
  readonly amountKobo: number
  readonly at: Date
  readonly doc: unknown
  readonly docText: string | null
  readonly tags: unknown
}

const COLUMNS: ReadonlyArray<Column<Row>> = [
  ["name", "text", (r) => r.name], ["amount_kobo", "int8", (r) => r.amountKobo], ["at", "timestamptz", (r) => r.at],
  ["doc", "json", (r) => r.doc], ["doc_text", "json", (r) => r.docText], ["tags", "jsonb", (r) => r.tags]
]

layer(TestSql, { timeout: 60_000, excludeTestServices: true })("bulkInsert on the real Postgres", (it) => {
  it.effect("inserts every row in order, a json column keeping exactly the text JSON.stringify gives its object", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ifj (id bigserial PRIMARY KEY, name text, amount_kobo int8 NOT NULL, at timestamptz NOT NULL,
        doc json, doc_text json, tags jsonb)`
      const at = new Date("2026-11-21T10:11:12.345Z")
      const rows: Array<Row> = [
        { name: "Ngozi \"Nkem\" O'Brien\n₦ ✓", amountKobo: 9_007_199_254_740_991, at, doc: { b: 1, a: [true, null, "x\\y"], nested: { z: "é" } }, docText: `{"kept" :  "as written"}`, tags: ["a", "b"] },
        { name: null, amountKobo: 0, at, doc: null, docText: null, tags: null },
        { name: "third", amountKobo: 250_000, at, doc: { empty: {} }, docText: "[1,2]", tags: { k: 1 } }
      ]
      yield* sql`${bulkInsert(sql, "ifj", COLUMNS, rows)}`
      const back = yield* sql<{ name: string | null; amountKobo: number; at: Date; doc: string | null; docText: string | null; tags: string | null }>`
        SELECT name, amount_kobo, at, doc::text AS doc, doc_text::text AS doc_text, tags::text AS tags FROM ifj ORDER BY id`
      expect(back.map((r) => r.name)).toEqual(rows.map((r) => r.name))
      expect(back.map((r) => r.amountKobo)).toEqual(rows.map((r) => r.amountKobo))
      expect(back.every((r) => r.at.getTime() === at.getTime())).toBe(true)
      // An object is serialised once with its row; the stored json text is exactly JSON.stringify of it.
      expect(back[0]!.doc).toBe(JSON.stringify(rows[0]!.doc))
      expect(back[2]!.doc).toBe(JSON.stringify(rows[2]!.doc))
      // JSON text is nested as it is, whitespace included.
      expect(back[0]!.docText).toBe(`{"kept" :  "as written"}`)
      expect(back[2]!.docText).toBe("[1,2]")
      expect(back[0]!.tags).toBe(`["a", "b"]`)
      // null is SQL NULL, not a JSON null.
      expect([back[1]!.doc, back[1]!.docText, back[1]!.tags]).toEqual([null, null, null])
    }))
  it.effect("writes undefined as NULL, a Date as its ISO instant, and rows in order however many there are", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ifj2 (id bigserial PRIMARY KEY, label text, n int8, at timestamptz, flag bool, doc jsonb)`
      type R2 = { readonly label?: string; readonly n: number; readonly at: Date | undefined; readonly flag: boolean; readonly doc: unknown }
      const cols: ReadonlyArray<Column<R2>> = [
        ["label", "text", (r) => r.label], ["n", "int8", (r) => r.n], ["at", "timestamptz", (r) => r.at],
        ["flag", "bool", (r) => r.flag], ["doc", "jsonb", (r) => r.doc]
      ]
      const at = new Date("2026-11-21T23:59:59.999Z")
      const rows: Array<R2> = Array.from({ length: 300 }, (_, i) => ({
        ...(i % 3 === 0 ? {} : { label: `row ${i} \u2028 "q" \\` }),
        n: i * 1_000_003, at: i % 2 === 0 ? at : undefined, flag: i % 5 === 0, doc: i % 7 === 0 ? undefined : { i, list: [i, "x"] }
      }))
      yield* sql`${bulkInsert(sql, "ifj2", cols, rows)}`
      const back = yield* sql<{ label: string | null; n: number; at: Date | null; flag: boolean; doc: string | null }>`
        SELECT label, n, at, flag, doc::text AS doc FROM ifj2 ORDER BY id`
      expect(back.length).toBe(rows.length)
      back.forEach((b, i) => {
        const r = rows[i]!
        expect(b.label).toBe(r.label ?? null)
        expect(b.n).toBe(r.n)
        expect(b.at?.toISOString() ?? null).toBe(r.at?.toISOString() ?? null)
        expect(b.flag).toBe(r.flag)
        expect(b.doc === null ? null : JSON.parse(b.doc)).toEqual(r.doc ?? null)
      })
    }))
  it.effect("carries each json column in its own parameter: a string holding U+001E round-trips, raw U+001E is refused, a lone row of NULLs is one row", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ifj3 (id bigserial PRIMARY KEY, k int8, a json, b jsonb)`
      type R3 = { readonly a: unknown; readonly b: unknown }
      const cols: ReadonlyArray<Column<R3>> = [["a", "json", (r) => r.a], ["b", "jsonb", (r) => r.b], ["k", "int8", () => 1]]
      // A control character inside a string is escaped by JSON.stringify (\u001e), so it never splits the field.
      const rows: Array<R3> = [{ a: { s: "x\u001ey" }, b: ["\u001e"] }, { a: null, b: { k: 2 } }, { a: "[]", b: null }]
      yield* sql`${bulkInsert(sql, "ifj3", cols, rows)}`
      const back = yield* sql<{ a: string | null; b: string | null }>`SELECT a::text AS a, b::text AS b FROM ifj3 ORDER BY id`
      expect(back.map((r) => (r.a === null ? null : JSON.parse(r.a)))).toEqual([{ s: "x\u001ey" }, null, []])
      expect(back.map((r) => (r.b === null ? null : JSON.parse(r.b)))).toEqual([["\u001e"], { k: 2 }, null])
      // JSON text given as a string that holds the separator raw is not JSON: refused before anything is sent.
      const refused = yield* Effect.sync(() => bulkInsert(sql, "ifj3", cols, [{ a: "[\"x\u001ey\"]", b: null }])).pipe(Effect.exit)
      expect(refused._tag).toBe("Failure")
      expect(String((refused as { cause: unknown }).cause)).toContain("U+001E")
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ifj3`)[0]!.n).toBe(3)
      // One row whose json fields are all NULL (empty texts) is still one row; a list of json columns only is refused.
      yield* sql`${bulkInsert(sql, "ifj3", cols, [{ a: null, b: undefined }])}`
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ifj3 WHERE a IS NULL AND b IS NULL`)[0]!.n).toBe(1)
      expect(() => bulkInsert(sql, "ifj3", [["a", "json", (r: R3) => r.a]], [{ a: 1, b: 1 }])).toThrow(/at least one column/)
    }))
  it.effect("writes the array literals' hard cases as themselves, and refuses a value its column's type cannot hold", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ifj4 (id bigserial PRIMARY KEY, t text, i int4, b int8)`
      type R4 = { readonly t: unknown; readonly i: unknown; readonly b: unknown }
      const cols: ReadonlyArray<Column<R4>> = [["t", "text", (r) => r.t], ["i", "int4", (r) => r.i], ["b", "int8", (r) => r.b]]
      const texts = ["NULL", "", " padded ", "{a,b}", "comma, and \"quote\"", "back\\slash\\", "tab\tnew\nline", "(x)"]
      const rows: Array<R4> = [
        ...texts.map((t, k) => ({ t, i: k % 2 === 0 ? null : -k, b: k === 0 ? 9_007_199_254_740_991n * 1000n : k === 1 ? "-42" : k })),
        { t: 12.5, i: 0, b: undefined }
      ]
      yield* sql`${bulkInsert(sql, "ifj4", cols, rows)}`
      const back = yield* sql<{ t: string | null; i: number | null; b: string | null }>`SELECT t, i, b::text AS b FROM ifj4 ORDER BY id`
      expect(back.map((r) => r.t)).toEqual([...texts, "12.5"])
      expect(back.map((r) => r.i)).toEqual([null, -1, null, -3, null, -5, null, -7, 0])
      expect(back.map((r) => r.b)).toEqual(["9007199254740991000", "-42", "2", "3", "4", "5", "6", "7", null])
      for (const bad of [{ t: "x", i: 1.5, b: 1 }, { t: "x", i: 1, b: "12 OR 1" }, { t: { not: "text" }, i: 1, b: 1 }]) {
        const exit = yield* Effect.sync(() => bulkInsert(sql, "ifj4", cols, [bad])).pipe(Effect.exit)
        expect(exit._tag).toBe("Failure")
      }
    }))
})
