import { describe, expect, it } from "vitest"
import { count } from "../../src/dashboard/Plural.js"

describe("count (the dashboard's plurals)", () => {
  it("writes one in the singular and every other number in the plural", () => {
    expect(count(1, "deposit")).toBe("1 deposit")
    expect(count(2, "deposit")).toBe("2 deposits")
    expect(count(0, "deposit")).toBe("0 deposits")
    expect(count(1_234, "deposit")).toBe("1,234 deposits")
  })

  it("takes an irregular plural", () => {
    expect(count(1, "business", "businesses")).toBe("1 business")
    expect(count(3, "business", "businesses")).toBe("3 businesses")
  })
})
