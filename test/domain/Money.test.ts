import { describe, expect, it } from "vitest"
import { Either, ParseResult, Schema } from "effect"
import { Kobo, koboFromDb, PositiveKobo } from "../../src/domain/Money.js"

const decode = (schema: Schema.Schema<any, any>, input: unknown) => Schema.decodeUnknownEither(schema)(input)

/** The message a 400 would show for this input. */
const complaint = (schema: Schema.Schema<any, any>, input: unknown): string => {
  const result = decode(schema, input)
  if (Either.isRight(result)) throw new Error(`expected ${JSON.stringify(input)} to be rejected`)
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => i.message).join("; ")
}

describe("Kobo: money as integer kobo", () => {
  it.each([0, 1, 150000, 500_000_000, Number.MAX_SAFE_INTEGER])("accepts the integer %s", (n) => {
    expect(decode(Kobo, n)).toEqual(Either.right(n))
  })

  it.each([
    ["a float (naira with kobo)", 1500.5, /fraction was given \(did you send naira\?\)/],
    ["a tiny fraction", 0.01, /fraction/],
    ["a numeric string", "150000", /JSON number .* not a string/],
    ["a negative integer", -5, /not negative/],
    ["an unsafe integer", 2 ** 53, /safe integer range/],
    ["NaN", Number.NaN, /finite/],
    ["Infinity", Number.POSITIVE_INFINITY, /finite/],
    ["null", null, /JSON number/],
    ["a boolean", true, /JSON number/],
    ["a bigint", 150000n, /JSON number/]
  ] as const)("rejects %s with a message naming integer kobo", (_, input, detail) => {
    const message = complaint(Kobo, input)
    expect(message).toContain("integer kobo (1 naira = 100 kobo)")
    expect(message).toMatch(detail)
  })

  it("encodes to the same plain number", () => {
    const k = Schema.decodeUnknownSync(Kobo)(150000)
    expect(Schema.encodeSync(Kobo)(k)).toBe(150000)
  })

  it("PositiveKobo rejects zero and accepts 1", () => {
    expect(complaint(PositiveKobo, 0)).toMatch(/integer kobo .*greater than zero/)
    expect(decode(PositiveKobo, 1)).toEqual(Either.right(1))
    expect(complaint(PositiveKobo, -1)).toContain("integer kobo")
    expect(complaint(PositiveKobo, 99.5)).toContain("integer kobo")
  })

  it("inside a struct, the issue carries the field path", () => {
    const Body = Schema.Struct({ amountKobo: Kobo })
    const result = decode(Body, { amountKobo: 1500.5 })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left)
      expect(issues[0]).toMatchObject({ path: ["amountKobo"], message: expect.stringContaining("integer kobo") })
    }
  })
})

describe("koboFromDb: Postgres int8 text to a safe integer", () => {
  it("parses text, numbers and bigints", () => {
    expect(koboFromDb("150000")).toBe(150000)
    expect(koboFromDb(0)).toBe(0)
    expect(koboFromDb(123n)).toBe(123)
    expect(koboFromDb(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER)
  })
  it("throws beyond the safe range or on non-integers", () => {
    expect(() => koboFromDb("9007199254740993")).toThrow(/safe range/)
    expect(() => koboFromDb("12.5")).toThrow(/safe range/)
    expect(() => koboFromDb("abc")).toThrow(/safe range/)
  })
})
