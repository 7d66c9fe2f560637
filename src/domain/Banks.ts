/**
 * Built-in fallback list of Nigerian institutions (NIGERIA.md §2.2). A live
 * provider list is authoritative when available; business logic should never
 * branch on these codes. `code` is the CBN / Paystack code (3-digit banks,
 * 5-digit OFIs, or Paystack's own codes for wallets and PSBs); `nipCode` is
 * the NIBSS NIP institution code where known.
 */

export interface Bank {
  readonly name: string
  readonly code: string
  readonly nipCode?: string
}

/** A 5-digit OFI-style code, so sandbox NUBANs exercise the revised (`9` + code) check digit. */
export const SANDBOX_BANK: { readonly name: string; readonly code: string } = {
  name: "Collections Sandbox MFB",
  code: "51999"
}

export const NIGERIAN_BANKS: ReadonlyArray<Bank> = [
  { name: "Access Bank", code: "044", nipCode: "000014" },
  { name: "Access Bank (Diamond)", code: "063", nipCode: "000005" },
  { name: "Citibank Nigeria", code: "023", nipCode: "000009" },
  { name: "Ecobank Nigeria", code: "050", nipCode: "000010" },
  { name: "Fidelity Bank", code: "070", nipCode: "000007" },
  { name: "First Bank of Nigeria", code: "011", nipCode: "000016" },
  { name: "First City Monument Bank", code: "214", nipCode: "000003" },
  { name: "Globus Bank", code: "00103", nipCode: "000027" },
  { name: "Guaranty Trust Bank", code: "058", nipCode: "000013" },
  { name: "Heritage Bank", code: "030", nipCode: "000020" },
  { name: "Jaiz Bank", code: "301", nipCode: "000006" },
  { name: "Keystone Bank", code: "082", nipCode: "000002" },
  { name: "Polaris Bank", code: "076", nipCode: "000008" },
  { name: "Providus Bank", code: "101", nipCode: "000023" },
  { name: "Stanbic IBTC Bank", code: "221", nipCode: "000012" },
  { name: "Standard Chartered Bank", code: "068", nipCode: "000021" },
  { name: "Sterling Bank", code: "232", nipCode: "000001" },
  { name: "SunTrust Bank", code: "100", nipCode: "000022" },
  { name: "Titan Trust Bank", code: "102", nipCode: "000025" },
  { name: "Union Bank of Nigeria", code: "032", nipCode: "000018" },
  { name: "United Bank For Africa", code: "033", nipCode: "000004" },
  { name: "Unity Bank", code: "215", nipCode: "000011" },
  { name: "Wema Bank", code: "035", nipCode: "000017" },
  { name: "ALAT by Wema", code: "035A" },
  { name: "Zenith Bank", code: "057", nipCode: "000015" },
  { name: "TAJ Bank", code: "302", nipCode: "000026" },
  { name: "Rand Merchant Bank", code: "502", nipCode: "000024" },
  { name: "Coronation Merchant Bank", code: "559", nipCode: "060001" },
  { name: "FSDH Merchant Bank", code: "501", nipCode: "400001" },
  { name: "Lotus Bank", code: "303" },
  { name: "Optimus Bank", code: "107" },
  { name: "PremiumTrust Bank", code: "105" },
  { name: "Alpha Morgan Bank", code: "108" },
  { name: "Nova Merchant Bank", code: "561" },
  { name: "Greenwich Merchant Bank", code: "562" },
  { name: "Parallex Bank", code: "104" },
  { name: "Kuda Microfinance Bank", code: "50211", nipCode: "090267" },
  { name: "Moniepoint Microfinance Bank", code: "50515", nipCode: "090405" },
  { name: "Sparkle Microfinance Bank", code: "51310", nipCode: "090325" },
  { name: "FairMoney Microfinance Bank", code: "51318" },
  { name: "Mint Microfinance Bank", code: "50304" },
  { name: "Eyowo", code: "50126" },
  { name: "VFD Microfinance Bank", code: "566", nipCode: "090110" },
  { name: "Rubies Microfinance Bank", code: "125", nipCode: "090175" },
  { name: "Carbon", code: "565", nipCode: "100026" },
  { name: "Paga", code: "327", nipCode: "100002" },
  { name: "OPay", code: "999992", nipCode: "100004" },
  { name: "PalmPay", code: "999991", nipCode: "100033" },
  { name: "Paystack-Titan", code: "100039", nipCode: "100039" },
  { name: "9PSB", code: "120001", nipCode: "120001" },
  { name: "HopePSB", code: "120002", nipCode: "120002" },
  { name: "MTN MoMo PSB", code: "120003" },
  { name: "Airtel Smartcash PSB", code: "120004" },
  SANDBOX_BANK
]

const byCode: ReadonlyMap<string, Bank> = new Map(NIGERIAN_BANKS.map((bank) => [bank.code, bank]))

export const findBankByCode = (code: string): Bank | undefined => byCode.get(code)

const byNipCode: ReadonlyMap<string, Bank> = new Map(
  NIGERIAN_BANKS.flatMap((bank) => (bank.nipCode === undefined ? [] : [[bank.nipCode, bank] as const]))
)

export const findBankByNipCode = (nipCode: string): Bank | undefined => byNipCode.get(nipCode)
