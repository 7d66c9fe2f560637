import { describe, expect, it } from "vitest"
import { isValidNuban, makeNuban, normaliseInstitutionCode, nubanCheckDigit } from "../../src/domain/Nuban.js"

// NIGERIA.md §1.3, every row: [bank code, NUBAN, check digit]
const VALID_VECTORS: ReadonlyArray<readonly [string, string, number]> = [
  ["011", "0000014579", 9],
  ["011", "0000000220", 0],
  ["044", "0010246780", 0],
  ["221", "0054556411", 1],
  ["057", "1012854016", 6],
  ["058", "0108024071", 1],
  ["033", "1018044721", 1],
  ["011", "2022323697", 7],
  ["070", "5600026567", 7],
  ["214", "2828744017", 7],
  ["035", "9930000737", 7],
  ["035", "9930000902", 2],
  ["101", "9977581536", 6],
  ["50515", "6106424552", 2],
  ["232", "8947206823", 3],
  ["035", "7203133878", 8],
  ["044", "0690000032", 2],
  ["50515", "0000000018", 8],
  ["50211", "1234567897", 7],
  ["058", "0000000018", 8],
  ["057", "1234567899", 9]
]

const INVALID_VECTORS: ReadonlyArray<readonly [string, string]> = [
  ["123", "1234567890"],
  ["044", "0690000034"],
  ["058", "0001234567"],
  ["090405", "6106424552"]
]

describe("normaliseInstitutionCode", () => {
  it("pads a 3-digit bank code with 000", () => {
    expect(normaliseInstitutionCode("011")).toBe("000011")
    expect(normaliseInstitutionCode("232")).toBe("000232")
  })

  it("prefixes a 5-digit OFI code with 9", () => {
    expect(normaliseInstitutionCode("50547")).toBe("950547")
    expect(normaliseInstitutionCode("50515")).toBe("950515")
  })

  it("keeps a code already in normalised form", () => {
    expect(normaliseInstitutionCode("000011")).toBe("000011")
    expect(normaliseInstitutionCode("950515")).toBe("950515")
  })

  it("refuses NIP codes, Paystack pseudo-codes and malformed input", () => {
    for (const code of ["090405", "090267", "100004", "060001", "035A", "", "01", "0111", "1234567", "0 11", "５０５１５"]) {
      expect(normaliseInstitutionCode(code), code).toBeUndefined()
    }
  })
})

describe("nubanCheckDigit", () => {
  it.each(VALID_VECTORS)("bank %s, NUBAN %s has check digit %i", (code, nuban, digit) => {
    expect(nubanCheckDigit(code, nuban.slice(0, 9))).toBe(digit)
  })

  it("maps a sum of 0 mod 10 to check digit 0, not 10", () => {
    expect(nubanCheckDigit("011", "000000022")).toBe(0)
    expect(nubanCheckDigit("044", "001024678")).toBe(0)
  })

  it("agrees for a 3-digit code and its normalised 6-digit form", () => {
    expect(nubanCheckDigit("000035", "993000073")).toBe(nubanCheckDigit("035", "993000073"))
    expect(nubanCheckDigit("950515", "610642455")).toBe(nubanCheckDigit("50515", "610642455"))
  })

  it("is undefined for an unsupported code or a serial that is not 9 digits", () => {
    expect(nubanCheckDigit("090405", "610642455")).toBeUndefined()
    expect(nubanCheckDigit("035A", "993000073")).toBeUndefined()
    expect(nubanCheckDigit("035", "99300007")).toBeUndefined()
    expect(nubanCheckDigit("035", "9930000730")).toBeUndefined()
    expect(nubanCheckDigit("035", "99300007x")).toBeUndefined()
  })
})

describe("isValidNuban", () => {
  it.each(VALID_VECTORS)("bank %s, NUBAN %s is valid", (code, nuban) => {
    expect(isValidNuban(nuban, code)).toBe(true)
  })

  it.each(INVALID_VECTORS)("bank %s, NUBAN %s is invalid", (code, nuban) => {
    expect(isValidNuban(nuban, code)).toBe(false)
  })

  it("accepts the DESIGN.md vectors and rejects its invalid one", () => {
    expect(isValidNuban("0000014579", "011")).toBe(true)
    expect(isValidNuban("0010246780", "044")).toBe(true)
    expect(isValidNuban("9930000737", "035")).toBe(true)
    expect(isValidNuban("6106424552", "50515")).toBe(true)
    expect(isValidNuban("0690000034", "044")).toBe(false)
  })

  it("accepts the 10→0 worked example 011/0000000220", () => {
    expect(isValidNuban("0000000220", "011")).toBe(true)
  })

  it("rejects the Moniepoint account under its NIP code 090405", () => {
    expect(isValidNuban("6106424552", "50515")).toBe(true)
    expect(isValidNuban("6106424552", "090405")).toBe(false)
  })

  it("rejects every other check digit for a valid serial", () => {
    for (let d = 0; d <= 9; d++) {
      expect(isValidNuban(`993000073${d}`, "035")).toBe(d === 7)
    }
  })

  it("rejects malformed account numbers", () => {
    for (const nuban of ["000001457", "00000145790", "", "00000I4579", "abcdefghij", " 000014579", "000001457 ", "0000-14579", "+000014579", "1e09145790"]) {
      expect(isValidNuban(nuban, "011"), JSON.stringify(nuban)).toBe(false)
    }
  })

  it("rejects a valid number under a malformed code", () => {
    expect(isValidNuban("0000014579", "11")).toBe(false)
    expect(isValidNuban("0000014579", "O11")).toBe(false)
    expect(isValidNuban("0000014579", "")).toBe(false)
  })
})

describe("makeNuban", () => {
  it("zero-pads the serial and appends the check digit", () => {
    expect(makeNuban("011", 1457)).toBe("0000014579")
    expect(makeNuban("011", 22)).toBe("0000000220")
    expect(makeNuban("035", 993000073)).toBe("9930000737")
    expect(makeNuban("50515", 610642455)).toBe("6106424552")
    // 9·3 + 5·7 + 0·3 + 5·3 + 1·7 + 5·3 = 99 → check digit 1: the OFI prefix alone weighs in
    expect(makeNuban("50515", 0)).toBe("0000000001")
    expect(makeNuban("011", 0)).toBe("0000000000") // 1·7 + 1·3 = 10 → 0
    expect(makeNuban("51999", 999_999_999)).toMatch(/^999999999[0-9]$/)
  })

  it("round-trips: every generated NUBAN is valid for its code and 10 digits long", () => {
    const codes = ["011", "044", "035", "058", "50515", "50211", "51999", "000232", "950547"]
    let serial = 0
    for (let i = 0; i < 1_000; i++) {
      serial = (serial * 7919 + 104_729 + i) % 1_000_000_000
      for (const code of codes) {
        const nuban = makeNuban(code, serial)
        expect(nuban).toHaveLength(10)
        expect(nuban.slice(0, 9)).toBe(String(serial).padStart(9, "0"))
        expect(isValidNuban(nuban, code)).toBe(true)
      }
    }
  })

  it("generates exactly one valid number per serial", () => {
    for (let serial = 0; serial < 200; serial++) {
      const serial9 = String(serial).padStart(9, "0")
      const valid = Array.from({ length: 10 }, (_, d) => `${serial9}${d}`).filter((n) => isValidNuban(n, "51999"))
      expect(valid).toEqual([makeNuban("51999", serial)])
    }
  })

  it("throws on a serial outside 0..999,999,999 or not an integer", () => {
    for (const serial of [-1, 1_000_000_000, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => makeNuban("011", serial), String(serial)).toThrow(RangeError)
    }
  })

  it("throws on an unsupported institution code", () => {
    expect(() => makeNuban("090405", 1)).toThrow(/090405/)
    expect(() => makeNuban("035A", 1)).toThrow(RangeError)
  })
})
