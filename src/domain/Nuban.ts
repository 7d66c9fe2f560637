/**
 * NUBAN check digit, CBN revised standard (2020): the institution code is
 * written as 6 digits (`000` + 3-digit bank code, `9` + 5-digit OFI code),
 * followed by the 9-digit serial, weighted 3,7,3 repeating.
 */

const WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3] as const

export const NUBAN_SERIAL_MAX = 999_999_999

const isDigits = (s: string, length: number): boolean =>
  s.length === length && /^[0-9]+$/.test(s)

/**
 * The 6-digit form of a CBN bank (3-digit) or OFI (5-digit) code, or
 * undefined when the check digit does not apply. A 6-digit input is accepted
 * only in a shape normalisation itself produces (`000ddd` or `9ddddd`), so
 * NIBSS NIP codes such as `090405` or `100004` are refused rather than
 * silently giving a wrong digit.
 */
export const normaliseInstitutionCode = (code: string): string | undefined => {
  if (isDigits(code, 3)) return `000${code}`
  if (isDigits(code, 5)) return `9${code}`
  if (isDigits(code, 6) && (code.startsWith("000") || code.startsWith("9"))) return code
  return undefined
}

/** The check digit 0..9, or undefined for an unsupported code or a serial that is not 9 digits. */
export const nubanCheckDigit = (bankCode: string, serial9: string): number | undefined => {
  const code6 = normaliseInstitutionCode(bankCode)
  if (code6 === undefined || !isDigits(serial9, 9)) return undefined
  const digits = code6 + serial9
  let sum = 0
  for (let i = 0; i < WEIGHTS.length; i++) sum += Number(digits[i]) * WEIGHTS[i]!
  return (10 - (sum % 10)) % 10
}

export const isValidNuban = (nuban10: string, bankCode: string): boolean => {
  if (!isDigits(nuban10, 10)) return false
  const expected = nubanCheckDigit(bankCode, nuban10.slice(0, 9))
  return expected !== undefined && expected === Number(nuban10[9])
}

/** Throws on an unsupported code or a serial outside 0..999,999,999: both are programming errors. */
export const makeNuban = (bankCode: string, serial: number): string => {
  if (!Number.isSafeInteger(serial) || serial < 0 || serial > NUBAN_SERIAL_MAX) {
    throw new RangeError(`NUBAN serial must be an integer in 0..${NUBAN_SERIAL_MAX}, got ${serial}`)
  }
  const serial9 = String(serial).padStart(9, "0")
  const check = nubanCheckDigit(bankCode, serial9)
  if (check === undefined) {
    throw new RangeError(`NUBAN check digit is not defined for institution code "${bankCode}"`)
  }
  return `${serial9}${check}`
}
