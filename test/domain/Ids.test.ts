import { describe, expect, it } from "@effect/vitest"
import { newId } from "../../src/domain/Ids.js"

describe("newId", () => {
  it("gives prefixed hex ids of the asked size, all distinct across many refills of the random pool", () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => newId("evt", i % 7 === 0 ? 16 : 12))
    ids.forEach((id, i) => expect(id).toMatch(new RegExp(`^evt_[0-9a-f]{${i % 7 === 0 ? 32 : 24}}$`)))
    expect(new Set(ids).size).toBe(ids.length)
    expect(newId("big", 5_000)).toMatch(/^big_[0-9a-f]{10000}$/)
  })
})
