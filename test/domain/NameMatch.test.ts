import { describe, expect, it } from "vitest"
import { jaroWinkler, matchNames, normaliseName } from "../../src/domain/NameMatch.js"

type Band = "STRONG" | "PARTIAL" | "WEAK"

// [payer name, customer name, expected band, expected score (NIGERIA.md §5.2 rows) or undefined]
const TABLE: ReadonlyArray<readonly [string, string, Band, number | undefined]> = [
  // NIGERIA.md §5.2 illustrative table, every row
  ["ADEYEMI JOHN O", "John Adeyemi", "STRONG", 0.96],
  ["OKAFOR CHIOMA ADAEZE", "Chioma Okafor", "STRONG", 0.93],
  ["NNAJI, JOSHUA & VIVIAN", "Joshua Nnaji", "STRONG", 0.93],
  ["MUHAMMED ABDULLAHI", "Mohammed Abdullahi", "STRONG", 1],
  ["IBRAHIM MUSA", "Musa Ibrahim", "STRONG", 1],
  ["OLUWASEUN ADEBAYO", "Seun Adebayo", "STRONG", 1],
  ["ADEYEMI JOHN O", "Adeyemi Oluwaseun", "WEAK", 0.67],
  ["ADEYEMI JOHN O", "Adebayo John", "WEAK", 0.48],
  ["CASAFINA CREDIT-EASY LOAN", "Seyi Olufemi", "WEAK", 0],
  // compound: 0.5 without compound handling; one shared name caps the band at PARTIAL
  ["CHUKWU EMEKA", "Chukwuemeka Obi", "PARTIAL", 0.9],
  // honorifics
  ["ALHAJI MUSA IBRAHIM", "Ibrahim Musa", "STRONG", 1],
  ["CHIEF (MRS) ADAEZE OKAFOR", "Adaeze Okafor", "STRONG", 1],
  ["ENGR. OLUSEGUN BAKARE", "Segun Bakare", "STRONG", 1],
  ["HRH OBA ADEWALE OGUNLEYE", "Adewale Ogunleye", "STRONG", 1],
  // diacritics
  ["ADEBAYO OLUWASEUN", "Adébáyọ̀ Olúwaseun", "STRONG", 1],
  // fintech prefixes
  ["PAYSTACK/JOHN ADEYEMI", "Adeyemi John", "STRONG", 1],
  ["FROM GTBANK/ADEYEMI JOHN O", "John Adeyemi", "STRONG", 0.96],
  ["KAROKART / RHODA CHURCH", "Rhoda Church", "STRONG", 1],
  // variants and compounds
  ["ABDUL RAHMAN BELLO", "Abdulrahman Bello", "STRONG", 1],
  ["MOHAMED SANI", "Muhammad Sani", "STRONG", 1],
  ["TUNDE BAKARE", "Babatunde Bakare", "STRONG", 1],
  ["EMEKA OBI", "Chukwuemeka Obi", "STRONG", 1],
  ["OLUWA SEUN ADEBAYO", "Oluwaseun Adebayo", "STRONG", 1],
  ["CHUKWU EMEKA", "Chukwuemeka Chukwu", "STRONG", 1],
  // spelling variance, missing middle name, initials
  ["ADEYEMMI JOHN", "John Adeyemi", "STRONG", 1],
  ["OKAFFOR CHIOMA", "Chioma Okafor", "STRONG", 1],
  ["JOHN OLUWASEUN ADEYEMI", "John Adeyemi", "STRONG", 0.93],
  ["J. ADEYEMI", "John Adeyemi", "PARTIAL", 0.89],
  ["NNAJI J V", "Joshua Nnaji", "PARTIAL", undefined],
  // same family / different people
  ["JOHN ADEYEMI", "Peter Adeyemi", "WEAK", 0.5],
  ["JOHN OKAFOR", "John Adeyemi", "WEAK", 0.5],
  ["EMEKA OBI", "Fatima Bello", "WEAK", 0],
  ["NGOZI EZE", "Aisha Yusuf", "WEAK", 0],
  ["GTBANK/SAMUEL OKONKWO", "Chidinma Okeke", "WEAK", undefined],
  // empty
  ["", "John Adeyemi", "WEAK", 0],
  ["JOHN ADEYEMI", "  ", "WEAK", 0]
]

describe("matchNames", () => {
  it.each(TABLE)("%s ↔ %s is %s", (payer, customer, band, score) => {
    const result = matchNames(payer, customer)
    expect(result.band).toBe(band)
    if (score !== undefined) expect(result.score).toBeCloseTo(score, 2)
  })

  it.each(TABLE)("is symmetric: %s ↔ %s", (payer, customer) => {
    expect(matchNames(customer, payer)).toEqual(matchNames(payer, customer))
  })

  it("never calls the §5.2 middle-name ambiguity STRONG", () => {
    expect(matchNames("ADEYEMI JOHN O", "Adeyemi Oluwaseun").band).not.toBe("STRONG")
  })

  it("keeps scores within 0..1", () => {
    for (const [payer, customer] of TABLE) {
      const { score } = matchNames(payer, customer)
      expect(score).toBeGreaterThanOrEqual(0)
      expect(score).toBeLessThanOrEqual(1)
    }
  })
})

describe("normaliseName", () => {
  it.each([
    ["PAYSTACK/John Doe", ["JOHN", "DOE"]],
    ["FROM GTBANK/ADEYEMI JOHN O", ["ADEYEMI", "JOHN", "O"]],
    ["Adébáyọ̀", ["ADEBAYO"]],
    ["NNAJI, JOSHUA & VIVIAN", ["NNAJI", "JOSHUA", "VIVIAN"]],
    ["CHIEF (MRS) ADAEZE OKAFOR", ["ADAEZE", "OKAFOR"]],
    ["Dr. Muhammed Abdul-Rahman", ["MUHAMMAD", "ABDULRAHMAN"]],
    ["ABDUL MUSA", ["ABDUL", "MUSA"]],
    ["Seun, Femi & Nkem", ["OLUWASEUN", "OLUFEMI", "NKEMDILIM"]],
    ["NNAMDI IKE", ["NNAMDI", "IKECHUKWU"]],
    ["O'Neil", ["ONEIL"]],
    ["PRINCE", ["PRINCE"]],
    ["", []]
  ] as const)("%s → %j", (raw, tokens) => {
    expect(normaliseName(raw)).toEqual(tokens)
  })
})

describe("jaroWinkler", () => {
  it.each([
    ["MARTHA", "MARHTA", 0.9611],
    ["DWAYNE", "DUANE", 0.84],
    ["DIXON", "DICKSONX", 0.8133],
    ["JOHN", "JOHN", 1],
    ["ABC", "XYZ", 0],
    ["", "", 1],
    ["JOHN", "", 0]
  ] as const)("%s ~ %s = %d", (a, b, expected) => {
    expect(jaroWinkler(a, b)).toBeCloseTo(expected, 4)
    expect(jaroWinkler(b, a)).toBeCloseTo(expected, 4)
  })
})
