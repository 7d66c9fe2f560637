import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { arrayLiteral, ELEMENTS_KIND_SAMPLES, integerArray, textArray } from "../../src/db/PgArray.js"
import { TestSql } from "../support/TestApp.js"

const ODD = ["", "NULL", "null", "plain", 'say "hi"', "back\\slash", '\\"', "{braces}", "a,b", " spaced ", "tab\there", "line\nbreak",
  "Ọ̀ṣun Adébáyọ̀", "emoji 💸", "2026-11-21T08:00:00.000Z", "ten_0123456789abcdef", "'quote'"]

describe("PgArray literals", () => {
  it("quotes every text element, escapes only quote and backslash, writes null as NULL", () => {
    expect(textArray([])).toBe("{}")
    expect(textArray(["a", null, "NULL", 'x"y', "p\\q"])).toBe('{"a",NULL,"NULL","x\\"y","p\\\\q"}')
  })

  it("takes an array parameter of strings (and nulls) or of safe integers, and leaves any other to the driver", () => {
    expect(arrayLiteral([])).toBe("{}")
    expect(arrayLiteral(["a", null, 'x"y'])).toBe(textArray(["a", null, 'x"y']))
    expect(arrayLiteral([3, -1, 0])).toBe("{3,-1,0}")
    for (const other of [[1, "a"], [1, null], [1.5], [true], [new Date(0)], [["a"]], [undefined], [10n]]) expect(arrayLiteral(other)).toBeUndefined()
  })

  it("reads an array the same whatever V8 keeps it as (holey, frozen, small or large integers)", () => {
    // The samples the module feeds these functions at load (so V8 never deoptimises them on a new kind): each gives the
    // literal its plain copy gives.
    for (const sample of ELEMENTS_KIND_SAMPLES) expect(arrayLiteral(sample)).toBe(arrayLiteral([...sample]))
    const holey = new Array<unknown>(2)
    holey[0] = "a"
    expect(arrayLiteral(holey)).toBeUndefined() // a hole reads as undefined: the driver serialises such an array itself
    expect(arrayLiteral(Object.freeze([2 ** 40, 1]))).toBe(`{${2 ** 40},1}`)
    expect(arrayLiteral(Object.freeze(["x", null]))).toBe('{"x",NULL}')
  })

  it("writes integers bare and refuses anything else", () => {
    expect(integerArray([])).toBe("{}")
    expect(integerArray([1, -2, 9007199254740991])).toBe("{1,-2,9007199254740991}")
    expect(() => integerArray([1.5])).toThrow(/not a safe integer/)
    expect(() => integerArray([Number.NaN])).toThrow(/not a safe integer/)
    expect(() => integerArray([2 ** 53])).toThrow(/not a safe integer/)
  })
})

// Postgres reads the literals back as exactly the values given, and as the pg driver's own serialisation of the same
// JavaScript array would give them.
layer(TestSql)("PgArray literals on the real Postgres", (it) => {
  it.effect("text[] and timestamptz[] round-trip every odd string, in order, nulls included", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const values = [...ODD, null, ...ODD.slice().reverse()]
      const [ours] = yield* sql<{ a: ReadonlyArray<string | null> }>`SELECT ${textArray(values)}::text[] AS a`
      const [drivers] = yield* sql<{ a: ReadonlyArray<string | null> }>`SELECT ${values}::text[] AS a`
      expect(ours!.a).toEqual(values)
      expect(drivers!.a).toEqual(values)
      const times = ["2026-11-21T08:00:00.000Z", "2026-01-01T23:59:59.999Z"]
      const [t] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM unnest(${textArray(times)}::timestamptz[]) AS u(at)
        WHERE at IN ('2026-11-21T08:00:00Z'::timestamptz, '2026-01-01T23:59:59.999Z'::timestamptz)`
      expect(t!.n).toBe(2)
    }))

  it.effect("a statement's JavaScript array parameters reach Postgres as the same values, in the service's client", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const texts = [...ODD, null]
      const ids = [1, 42, 9007199254740991, -7, 0]
      const dates = [new Date("2026-11-21T08:00:00.000Z"), new Date("2026-01-01T23:59:59.999Z")]
      // Three times: the third runs as a named prepared statement, the first two unnamed (both paths convert).
      for (let i = 0; i < 3; i++) {
        const [r] = yield* sql<{ t: ReadonlyArray<string | null>; b: ReadonlyArray<string>; hit: boolean; d: number; mixed: ReadonlyArray<string | null> }>`
          SELECT ${texts}::text[] AS t, ${ids}::bigint[] AS b, 42 = ANY(${ids}::bigint[]) AS hit,
            (SELECT count(*)::int FROM unnest(${dates}::timestamptz[]) AS u(at) WHERE at = '2026-11-21T08:00:00Z'::timestamptz) AS d,
            ${[1, null, "x"]}::text[] AS mixed /* array-params-probe */`
        expect(r!.t).toEqual(texts)
        expect(r!.b.map(Number)).toEqual(ids)
        expect(r!.hit).toBe(true)
        expect(r!.d).toBe(1)
        expect(r!.mixed).toEqual(["1", null, "x"])
      }
    }))

  it.effect("bigint[] and int[] round-trip, with = ANY as the hot statements use it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ids = [1, 42, 9007199254740991, -7, 0]
      // (int8[] results come back from the driver as strings; the values are what matters here.)
      const [r] = yield* sql<{ a: ReadonlyArray<string>; hit: boolean }>`
        SELECT ${integerArray(ids)}::bigint[] AS a, 42 = ANY(${integerArray(ids)}::bigint[]) AS hit`
      expect(r!.a.map(Number)).toEqual(ids)
      expect(r!.hit).toBe(true)
      const [i] = yield* sql<{ a: ReadonlyArray<number> }>`SELECT ${integerArray([3, 2, 1])}::int[] AS a`
      expect(i!.a).toEqual([3, 2, 1])
    }))
})
