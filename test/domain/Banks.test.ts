import { describe, expect, it } from "vitest"
import { findBankByCode, findBankByNipCode, NIGERIAN_BANKS, SANDBOX_BANK } from "../../src/domain/Banks.js"
import { isValidNuban, makeNuban, normaliseInstitutionCode } from "../../src/domain/Nuban.js"

describe("NIGERIAN_BANKS", () => {
  it("has unique codes and unique NIP codes", () => {
    const codes = NIGERIAN_BANKS.map((b) => b.code)
    expect(new Set(codes).size).toBe(codes.length)
    const nipCodes = NIGERIAN_BANKS.flatMap((b) => (b.nipCode === undefined ? [] : [b.nipCode]))
    expect(new Set(nipCodes).size).toBe(nipCodes.length)
  })

  it("has non-empty names and well-formed codes", () => {
    for (const bank of NIGERIAN_BANKS) {
      expect(bank.name.trim()).not.toBe("")
      expect(bank.code).toMatch(/^[0-9]{3,6}A?$/)
      if (bank.nipCode !== undefined) expect(bank.nipCode).toMatch(/^[0-9]{6}$/)
    }
  })

  it("includes the sandbox bank with a 5-digit OFI code", () => {
    expect(NIGERIAN_BANKS).toContainEqual(SANDBOX_BANK)
    expect(SANDBOX_BANK).toEqual({ name: "Collections Sandbox MFB", code: "51999" })
    expect(normaliseInstitutionCode(SANDBOX_BANK.code)).toBe("951999")
    expect(isValidNuban(makeNuban(SANDBOX_BANK.code, 42), SANDBOX_BANK.code)).toBe(true)
  })
})

describe("findBankByCode", () => {
  it("resolves known codes", () => {
    expect(findBankByCode("058")).toEqual({ name: "Guaranty Trust Bank", code: "058", nipCode: "000013" })
    expect(findBankByCode("50515")).toEqual({ name: "Moniepoint Microfinance Bank", code: "50515", nipCode: "090405" })
    expect(findBankByCode("044")?.name).toBe("Access Bank")
    expect(findBankByCode("035")?.name).toBe("Wema Bank")
    expect(findBankByCode("50211")?.name).toBe("Kuda Microfinance Bank")
    expect(findBankByCode("51999")).toBe(SANDBOX_BANK)
  })

  it("is undefined for unknown codes and does not match NIP codes", () => {
    expect(findBankByCode("999")).toBeUndefined()
    expect(findBankByCode("")).toBeUndefined()
    expect(findBankByCode("090405")).toBeUndefined()
  })
})

describe("findBankByNipCode", () => {
  it("resolves NIP codes to the institution", () => {
    expect(findBankByNipCode("000013")?.code).toBe("058")
    expect(findBankByNipCode("090405")?.code).toBe("50515")
    expect(findBankByNipCode("100004")?.name).toBe("OPay")
    expect(findBankByNipCode("058")).toBeUndefined()
  })
})
