import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, String as Str } from "effect"
import { rememberedNames } from "../../src/db/Database.js"
import { boundedMemo } from "../../src/domain/BoundedMemo.js"
import { TestSql } from "../support/TestApp.js"

describe("rememberedNames", () => {
  it("answers exactly as the transform it remembers, calling it once per name", () => {
    const calls: Array<string> = []
    const camel = rememberedNames((s) => {
      calls.push(s)
      return Str.snakeToCamel(s)
    })
    const names = ["amount_kobo", "tenant_id", "risk_reasons", "x", "already_camelCase", "a_b_c_d", "amount_kobo", "tenant_id"]
    expect(names.map(camel)).toEqual(names.map(Str.snakeToCamel))
    expect(calls).toEqual(["amount_kobo", "tenant_id", "risk_reasons", "x", "already_camelCase", "a_b_c_d"])
  })

  it("keeps at most `max` names, then starts again (still answering correctly): boundedMemo, shared with NameMatch", () => {
    let calls = 0
    const snake = boundedMemo(3, (s) => {
      calls++
      return Str.camelToSnake(s)
    })
    for (const n of ["aB", "cD", "eF"]) snake(n)
    expect(calls).toBe(3)
    expect(snake("gH")).toBe("g_h") // the fourth name: the memo is cleared, then holds it
    expect(calls).toBe(4)
    expect(snake("aB")).toBe("a_b") // forgotten, so asked again
    expect(calls).toBe(5)
    expect(snake("gH")).toBe("g_h") // still remembered
    expect(calls).toBe(5)
  })
})

// The service's client renames through the memo: rows read back with camelCase keys, inserts written with snake_case.
layer(TestSql)("the service's client with remembered names", (it) => {
  it.effect("reads snake_case columns as camelCase keys and writes camelCase fields to snake_case columns", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE remembered_names (tenant_id text, amount_kobo bigint, paid_at_ms bigint)`
      for (let i = 0; i < 3; i++) {
        yield* sql`INSERT INTO remembered_names ${sql.insert({ tenantId: `ten_${i}`, amountKobo: 100 * i, paidAtMs: i })}`
      }
      const rows = yield* sql`SELECT tenant_id, amount_kobo, paid_at_ms FROM remembered_names ORDER BY amount_kobo`
      expect(rows).toEqual([0, 1, 2].map((i) => ({ tenantId: `ten_${i}`, amountKobo: 100 * i, paidAtMs: i })))
    }))
})
