// The benches' customers: distinct Nigerian names, each paying from an account of their own.

const FIRST_NAMES = [
  "John", "Chinedu", "Ngozi", "Aisha", "Emeka", "Funmilayo", "Ibrahim", "Yetunde", "Obinna", "Zainab", "Tunde", "Chioma",
  "Musa", "Kemi", "Ifeanyi", "Halima", "Segun", "Adaeze", "Bola", "Uche", "Fatima", "Femi", "Nkechi", "Sani", "Bisi",
  "Kelechi", "Hauwa", "Dapo", "Amaka", "Yusuf", "Lola", "Ikenna"
]
const LAST_NAMES = [
  "Adeyemi", "Okafor", "Eze", "Bello", "Nwosu", "Adebayo", "Musa", "Ogunleye", "Uche", "Abubakar", "Okonkwo", "Balogun",
  "Danjuma", "Obi", "Afolabi", "Suleiman", "Nnamdi", "Olawale", "Ibekwe", "Lawal", "Chukwu", "Oyelaran", "Garba",
  "Onyekachi", "Fashola", "Aliyu", "Ezeh", "Ogundipe", "Yakubu", "Anozie", "Salami", "Odukoya"
]

/**
 * The i-th customer: a distinct name (first x last, then a middle initial), who pays into their own account from their
 * own bank account, as a customer paying school fees or an invoice does. The payer name comes in bank order
 * (`SURNAME FIRSTNAME`), which matches the customer's name.
 */
export const customer = (i: number) => {
  const first = FIRST_NAMES[i % FIRST_NAMES.length]!
  const last = LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]!
  const round = Math.floor(i / (FIRST_NAMES.length * LAST_NAMES.length))
  const middle = round === 0 ? "" : ` ${String.fromCharCode(65 + ((round - 1) % 26))}`
  return {
    name: `${first}${middle} ${last}`,
    payerName: `${last.toUpperCase()} ${first.toUpperCase()}${middle}`,
    payerAccount: String(2_000_000_000 + i)
  }
}
