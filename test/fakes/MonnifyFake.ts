/**
 * A faithful fake of Monnify's HTTP API as a plain node:http server. Source of truth: shared/PROVIDERS.md part B
 * (sections cited as "B1".."B8"), with §C and §D. Where that file is silent the choice is marked
 * "Assumption (PROVIDERS.md silent): …".
 *
 * One server stands for both hosts (sandbox.monnify.com and api.monnify.com, B1): the adapter is pointed at it by a
 * base URL and the API key's prefix (MK_TEST_ / MK_PROD_) decides the mode. Assumption (PROVIDERS.md silent): both
 * modes behave the same here (no D06 IP whitelist, disbursements enabled in live).
 *
 * Covered: POST /api/v1/auth/login, GET /api/v1/banks, GET /api/v1/disbursements/account/validate,
 * POST and GET /api/v2/bank-transfer/reserved-accounts[/{ref}], GET /api/v1/transactions/search,
 * GET /api/v2/transactions/{ref}, GET /api/v1/bank-transfer/reserved-accounts/transactions,
 * POST /api/v2/disbursements/single, GET /api/v2/disbursements/single/summary,
 * POST /api/v2/disbursements/single/validate-otp; signed SUCCESSFUL_TRANSACTION / REJECTED_PAYMENT /
 * *_DISBURSEMENT webhooks with retries; fault injection.
 * Not covered (answer 404 ErrorResponse like any unknown route): add-linked-accounts, deallocate, KYC and split
 * updates, invoice/limit reservations, resend-otp, wallet-balance, disbursement lists, refunds, settlements,
 * resend-failed-notifications. `restrictPaymentSource` is echoed but not enforced (use rejectPayment()).
 *
 * Control routes (not Monnify's API; no auth; not recorded in calls()):
 *   POST /_fake/credit        {accountNumber, amountNaira, transactionReference?, payerName?, payerAccountNumber?, payerBankCode?,
 *                              sessionId?, deliver?: "now"|"never"|"twice", signWith?}
 *   POST /_fake/reject        {accountNumber, amountNaira, reason?}       a REJECTED_PAYMENT
 *   POST /_fake/redeliver     {reference}            re-sends the latest delivery with that reference
 *   POST /_fake/fault         {op, fault, times?}
 *   POST /_fake/clear-faults
 *   GET  /_fake/state         merchants, reserved accounts, disbursements, deliveries (without bodies)
 */
import { createHmac, randomBytes, randomInt, randomUUID } from "node:crypto"
import http from "node:http"
import https from "node:https"
import type net from "node:net"
import { makeNuban } from "../../src/domain/Nuban.js"

// ---------------------------------------------------------------- exported types

export type MonnifyOperation =
  | "auth.login" | "banks.list" | "account.validate" | "reserved.create" | "reserved.get" | "transactions.search"
  | "transactions.get" | "reserved.transactions" | "disbursement.single" | "disbursement.summary" | "disbursement.validateOtp"
/** "expiredToken": answer the call 401 exactly as for an expired token, even when the token is valid. */
export type Fault = "5xx" | "hang" | "429" | "acceptThenHang" | "acceptThen5xx" | "expiredToken"
export interface MonnifyCall { readonly op: MonnifyOperation | "unknown"; readonly method: string; readonly path: string; readonly query: Record<string, string>; readonly body: unknown; readonly apiKey: string | null; readonly status: number }
export interface MonnifyCreditOptions {
  /** A reserved account's NUBAN. */
  readonly accountNumber: string
  /** As Monnify writes it (e.g. 3000, 1500.5); amountPaid/totalPayable are numbers in the webhook. */
  readonly amountNaira: number | string
  /** Default "MNFY|<2 digits>|<yyyyMMddHHmmss>|<6 digits>". */
  readonly transactionReference?: string
  readonly payerName?: string
  readonly payerAccountNumber?: string
  /** A CBN code; shown as given in the webhook (default ""), as its NIP code in the requery. */
  readonly payerBankCode?: string
  /** Default a 30-digit NIP id starting 090405. */
  readonly sessionId?: string
  readonly paidOn?: Date
  /** "now" (default): deliver once now; "never": record the transaction only; "twice": the same bytes twice; {afterMs}: later. */
  readonly deliver?: "now" | "never" | "twice" | { readonly afterMs: number }
  /** Sign with this secret instead of the merchant's (forgery). */
  readonly signWith?: string
}
export interface Delivery { readonly eventType: string; readonly reference: string; readonly body: string; readonly signature: string; readonly statuses: ReadonlyArray<number> }
export interface MonnifyFake {
  readonly url: string
  /** A merchant: API key (MK_TEST_… or MK_PROD_…), its client secret, contract code, wallet account number, webhook URL, options. */
  addMerchant(m: { apiKey: string; secretKey: string; contractCode: string; walletAccountNumber: string; webhookUrl?: string; walletBalanceKobo?: number; mfa?: boolean; tokenTtlSeconds?: number }): void
  setWebhookUrl(apiKey: string, url: string): void
  setMfa(apiKey: string, on: boolean): void
  setTokenTtl(apiKey: string, seconds: number): void
  addAccount(a: { bankCode: string; accountNumber: string; accountName: string; outcome?: "success" | "failed" | "reversed" }): void
  credit(opts: MonnifyCreditOptions): Promise<Delivery>
  /** A REJECTED_PAYMENT (money that never arrived, e.g. restricted source): webhook only, no transaction. */
  rejectPayment(opts: { accountNumber: string; amountNaira: number; reason?: string }): Promise<Delivery>
  redeliver(d: Delivery): Promise<number>
  sendRaw(apiKey: string, body: string, signature?: string): Promise<{ status: number; text: string }>
  fault(op: MonnifyOperation, fault: Fault, times?: number): void
  clearFaults(): void
  calls(op?: MonnifyOperation): ReadonlyArray<MonnifyCall>
  /** How many logins succeeded per API key (the token-expiry test counts them). */
  logins(apiKey?: string): number
  reservedAccounts(apiKey?: string): ReadonlyArray<{ accountReference: string; accountNumber: string; bankCode: string; customerEmail: string }>
  disbursements(apiKey?: string): ReadonlyArray<{ reference: string; amountNaira: number; status: string; destinationAccountNumber: string; destinationBankCode: string }>
  deliveries(): ReadonlyArray<Delivery>
  close(): Promise<void>
}

type Outcome = "success" | "failed" | "reversed"

/** Lower-case hex HMAC-SHA512 of the exact bytes, keyed with the merchant's client secret (B3). */
export const signMonnify = (secretKey: string, rawBody: string): string =>
  createHmac("sha512", secretKey).update(rawBody, "utf8").digest("hex")

/** The built-in name directory (the Paystack fake's rows): check-digit-valid NUBANs, src/domain/Nuban.ts. */
export const MONNIFY_FAKE_DIRECTORY: ReadonlyArray<{ bankCode: string; accountNumber: string; accountName: string; outcome: Outcome }> = [
  { bankCode: "058", accountNumber: "0123456785", accountName: "ADAEZE OKAFOR", outcome: "success" },
  { bankCode: "044", accountNumber: "1234567895", accountName: "CHUKWUEMEKA NWOSU", outcome: "success" },
  { bankCode: "057", accountNumber: "2000000015", accountName: "BOLANLE ADEYEMI", outcome: "success" },
  { bankCode: "033", accountNumber: "2100000021", accountName: "IBRAHIM MUSA", outcome: "success" },
  { bankCode: "011", accountNumber: "3000000032", accountName: "NGOZI EZE ENTERPRISES", outcome: "success" },
  { bankCode: "50515", accountNumber: "9000000042", accountName: "TUNDE BAKARE", outcome: "success" },
  { bankCode: "058", accountNumber: "9999999907", accountName: "FAIL TRANSFER", outcome: "failed" },
  { bankCode: "044", accountNumber: "9999999913", accountName: "REVERSE TRANSFER", outcome: "reversed" }
]

// ---------------------------------------------------------------- banks (B5)

interface Bank { readonly name: string; readonly code: string; readonly nipCode: string; readonly ussd: string | null }

/**
 * CBN codes with Monnify's own spelling of names (B2/B5/B6 samples: "Access bank", "Sterling bank", "Wema bank",
 * "Zenith bank", "Moniepoint Microfinance Bank", "OPAY" with 305). NIP codes as src/domain/Banks.ts (OPAY's 100004, B6).
 * Assumption (PROVIDERS.md silent): USSD codes are the banks' public short codes; the templates follow B5's Access
 * sample ("*901*Amount*AccountNumber#"); banks without one have null templates.
 */
const BANKS: ReadonlyArray<Bank> = [
  { name: "Access bank", code: "044", nipCode: "000014", ussd: "*901" },
  { name: "First Bank of Nigeria", code: "011", nipCode: "000016", ussd: "*894" },
  { name: "Guaranty Trust Bank", code: "058", nipCode: "000013", ussd: "*737" },
  { name: "Kuda Microfinance Bank", code: "50211", nipCode: "090267", ussd: null },
  { name: "Moniepoint Microfinance Bank", code: "50515", nipCode: "090405", ussd: null },
  { name: "OPAY", code: "305", nipCode: "100004", ussd: null },
  { name: "Sterling bank", code: "232", nipCode: "000001", ussd: "*822" },
  { name: "United Bank for Africa", code: "033", nipCode: "000004", ussd: "*919" },
  { name: "Wema bank", code: "035", nipCode: "000017", ussd: "*945" },
  { name: "Zenith bank", code: "057", nipCode: "000015", ussd: "*966" }
]
const bankByCode = (code: string) => BANKS.find((b) => b.code === code)
const bankJson = (b: Bank) => ({
  name: b.name, code: b.code,
  ussdTemplate: b.ussd === null ? null : `${b.ussd}*Amount*AccountNumber#`,
  baseUssdCode: b.ussd === null ? null : `${b.ussd}#`,
  transferUssdTemplate: b.ussd === null ? null : `${b.ussd}*AccountNumber#`
})
/** Partner banks for reserved accounts: B2's preferredBanks sample ["035","232","50515","058"]. */
const RESERVABLE = new Set(["50515", "232", "035", "058"])
/** getAllAvailableBanks:true, in the order of B2's multi-bank sample (50515, 232, 035). Assumption: GTB is opt-in only. */
const ALL_AVAILABLE: ReadonlyArray<string> = ["50515", "232", "035"]
/** 9-digit serial bases per partner bank, near B2's sample NUBANs (6106424552, 8947206823, 7203133878). Illustrative. */
const SERIAL_BASE: Readonly<Record<string, number>> = { "50515": 610_600_000, "232": 894_700_000, "035": 720_300_000, "058": 551_000_000 }

// ---------------------------------------------------------------- envelopes (B1)

interface Reply { readonly status: number; readonly body: unknown }
/** Success: `responseCode` is the STRING "0". */
const ok = (responseBody: unknown): Reply => ({ status: 200, body: { requestSuccessful: true, responseMessage: "success", responseCode: "0", responseBody } })
/** ErrorResponse: `responseCode` is the NUMBER 99, no responseBody. */
const err = (status: number, responseMessage: string): Reply => ({ status, body: { requestSuccessful: false, responseCode: 99, responseMessage } })
const MISSING_AUTH = err(401, "Unauthorized, supply authorization header") // B1, exact (login); Assumption: the same for Bearer calls
const BAD_CREDENTIALS = err(401, "") // B1, exact
/** Assumption (PROVIDERS.md silent, Q7): an expired token is a 401 ErrorResponse with this text. */
const EXPIRED_TOKEN = err(401, "Access token expired")
/** Assumption (PROVIDERS.md silent): an unknown token is a 401 ErrorResponse with this text. */
const INVALID_TOKEN = err(401, "Invalid access token")
/** Assumption (PROVIDERS.md silent; B1: rate limits unpublished): the 429 and 500 bodies. */
const RATE_LIMITED = err(429, "Too many requests")
const INTERNAL = err(500, "An error occurred while processing your request. Please try again later")
/** Assumption (PROVIDERS.md silent): missing or malformed fields are 400, business-rule refusals 422 (B2 Errors). */
const missing = (field: string) => err(400, `${field} is required`)
const NOT_FOUND_ROUTE = err(404, "Resource not found") // Assumption: unknown routes
const INSUFFICIENT = "You do not have sufficient balance to process this request. Please fund your account and try again." // B6, exact
const D07 = "DUPLICATE REQUEST (D07): same destination account with the same transaction amount within a 2 minutes interval" // B6 status table; Q13
const OTP = "123456" // B1: the official SDK tests authorise sandbox transfers with it. Assumption: the only accepted code.

// ---------------------------------------------------------------- small pure helpers

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const randomString = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join("")
const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join("")
const asRecord = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {})
const str = (o: Record<string, unknown>, k: string): string | undefined => {
  const v = o[k]
  if (typeof v === "number" && Number.isFinite(v)) return String(v)
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined
}
/** Kobo from naira as a JSON number or numeric string with at most 2 decimals (B6: naira). */
const koboOfNaira = (v: unknown): number | undefined => {
  const s = typeof v === "number" && Number.isFinite(v) ? String(v) : typeof v === "string" ? v.trim() : ""
  if (!/^\d+(\.\d{1,2})?$/.test(s)) return undefined
  const kobo = Math.round(Number(s) * 100)
  return Number.isSafeInteger(kobo) && kobo > 0 ? kobo : undefined
}
const naira = (kobo: number) => kobo / 100
const nairaString = (kobo: number) => (kobo / 100).toFixed(2)
/**
 * Collection fee: 1% capped at ₦10. Assumption (PROVIDERS.md silent on pricing): chosen because it reproduces both
 * published samples, 3000 → settlementAmount "2990.00" (B3) and 30000 → "29990.00" (NIGERIA.md §3.2).
 */
const monnifyCollectionFeeKobo = (amountKobo: number) => Math.min(Math.round(amountKobo / 100), 1_000)
/** Assumption (PROVIDERS.md silent; B6 samples show 8 and 20, merchant-specific): a flat ₦10 per disbursement. */
const monnifyDisbursementFeeKobo = (_amountKobo: number) => 1_000

// ---------------------------------------------------------------- time formats (B3, B4, B6); never normalised (B8 §9)

const p2 = (n: number) => String(n).padStart(2, "0")
/** WAT is UTC+1 all year; the fields of `wat(d)` read with getUTC* are the wall clock in Lagos. */
const wat = (d: Date) => new Date(d.getTime() + 3_600_000)
const ymd = (w: Date) => `${w.getUTCFullYear()}-${p2(w.getUTCMonth() + 1)}-${p2(w.getUTCDate())}`
const hms = (w: Date) => `${p2(w.getUTCHours())}:${p2(w.getUTCMinutes())}:${p2(w.getUTCSeconds())}`
/** "2021-11-17 11:28:42.615" (webhook paidOn, reserved-account createdOn), WAT. */
const dashWat = (d: Date) => { const w = wat(d); return `${ymd(w)} ${hms(w)}.${String(w.getUTCMilliseconds()).padStart(3, "0")}` }
/** "2023-06-26 17:53:55.0" (REJECTED_PAYMENT created_on), WAT. */
const dashZeroWat = (d: Date) => { const w = wat(d); return `${ymd(w)} ${hms(w)}.0` }
/** "25/07/2022 11:20:20 AM" / "17/03/2021 3:23:32 AM" (requery paidOn, disbursement webhooks), WAT. */
const slashWat = (d: Date) => {
  const w = wat(d)
  const h = w.getUTCHours()
  return `${p2(w.getUTCDate())}/${p2(w.getUTCMonth() + 1)}/${w.getUTCFullYear()} ${h % 12 === 0 ? 12 : h % 12}:${p2(w.getUTCMinutes())}:${p2(w.getUTCSeconds())} ${h < 12 ? "AM" : "PM"}`
}
/** "2022-11-03T14:13:38.140+0000" (disbursement dateCreated), UTC (B6). */
const isoUtc = (d: Date) => d.toISOString().replace("Z", "+0000")
/** yyyyMMddHHmmss in WAT (MNFY|… and MFDS… references). */
const stampWat = (d: Date) => { const w = wat(d); return `${ymd(w).replaceAll("-", "")}${hms(w).replaceAll(":", "")}` }
/** 30-digit NIP session id: Moniepoint's NIP code 090405 + yyMMddHHmmss (WAT, per the B6 decoding) + 12 digits (§C5). */
const nipSessionId = (d: Date) => `090405${stampWat(d).slice(2)}${digits(12)}`
const mask = (account: string) => `******${account.slice(-4)}`
/**
 * Assumption (PROVIDERS.md silent, Q11): `from`/`to` accept epoch milliseconds or ISO-8601; a date-time without a zone
 * (Monnify's own "2021-01-16T13:56:39.492" style) and a bare date are read as WAT.
 */
const instantOf = (v: string): number | undefined => {
  if (/^\d{10,}$/.test(v)) return Number(v)
  const local = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?$/.test(v)
  const ms = Date.parse(local ? `${v.includes("T") ? v : `${v}T00:00:00`}+01:00` : v)
  return Number.isNaN(ms) ? undefined : ms
}

const parseBody = (raw: string): { ok: true; value: unknown } | { ok: false; value: string } => {
  if (raw.trim() === "") return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown }
  } catch {
    return { ok: false, value: raw }
  }
}

/** A Spring page with 0-based `page` (B4); `size` defaults to 10. Assumption: a negative or non-integer page/size is a 400. */
const springPage = <T>(all: ReadonlyArray<T>, q: Record<string, string>): { readonly page: unknown } | Reply => {
  const page = q["page"] === undefined || q["page"] === "" ? 0 : Number(q["page"])
  const size = q["size"] === undefined || q["size"] === "" ? 10 : Number(q["size"])
  if (!Number.isInteger(page) || page < 0 || !Number.isInteger(size) || size < 1) return err(400, "Invalid page or size")
  const content = all.slice(page * size, page * size + size)
  const totalPages = Math.ceil(all.length / size)
  const sort = { sorted: false, unsorted: true, empty: true }
  return {
    page: {
      content, pageable: { sort, pageNumber: page, pageSize: size, offset: page * size, paged: true, unpaged: false },
      last: page >= totalPages - 1, totalPages, totalElements: all.length, size, number: page, sort, first: page === 0,
      numberOfElements: content.length, empty: content.length === 0
    }
  }
}
const isReply = (x: unknown): x is Reply => typeof x === "object" && x !== null && "status" in x && "body" in x

// ---------------------------------------------------------------- state

interface ReservedAccount { readonly bankCode: string; readonly bankName: string; readonly accountNumber: string; readonly accountName: string }
interface Reservation {
  readonly merchant: Merchant; readonly accountReference: string; readonly accountName: string; readonly currencyCode: string; readonly contractCode: string
  readonly customerEmail: string; readonly customerName: string; readonly accounts: ReadonlyArray<ReservedAccount>; readonly reservationReference: string
  readonly createdOn: string; readonly extra: Record<string, unknown>
}
interface Txn {
  readonly transactionReference: string; readonly reservation: Reservation; readonly account: ReservedAccount; readonly amountKobo: number; readonly feeKobo: number
  readonly paidAt: Date; readonly payerName: string; readonly payerAccountNumber: string; readonly payerBankCode: string | undefined; readonly sessionId: string
}
interface Disbursement {
  readonly reference: string; readonly amountKobo: number; readonly feeKobo: number; readonly narration: string; readonly currency: string
  readonly bank: Bank; readonly destinationAccountNumber: string; readonly destinationAccountName: string; readonly sourceAccountNumber: string
  readonly outcome: Outcome | "unknown"; readonly async: boolean; readonly twoFa: boolean; readonly createdAt: Date; readonly transactionReference: string
  status: string; comment: string | null; description: string; sessionId: string | null; completedAt: Date | null; debited: boolean; d07: boolean
}
interface Merchant {
  readonly apiKey: string; readonly secretKey: string; readonly contractCode: string; readonly wallet: string; readonly mode: "sandbox" | "live"
  readonly merchantCode: string; webhookUrl: string | null; balanceKobo: number; mfa: boolean; tokenTtlSeconds: number; logins: number
  readonly reservations: Array<Reservation>; readonly txns: Array<Txn>; readonly disbursements: Array<Disbursement>
}
interface MutableCall { op: MonnifyOperation | "unknown"; method: string; path: string; query: Record<string, string>; body: unknown; apiKey: string | null; status: number }
interface MutableDelivery { eventType: string; reference: string; body: string; signature: string; statuses: Array<number> }

/** B2's ReservedAccountDetails, in the sample's key order; optional request fields echoed when given. */
const reservationJson = (r: Reservation) => ({
  contractCode: r.contractCode, accountReference: r.accountReference, accountName: r.accountName, currencyCode: r.currencyCode,
  customerEmail: r.customerEmail, customerName: r.customerName, accounts: r.accounts, collectionChannel: "RESERVED_ACCOUNT",
  reservationReference: r.reservationReference, reservedAccountType: "GENERAL", status: "ACTIVE", createdOn: r.createdOn, ...r.extra
})
/** B3's SUCCESSFUL_TRANSACTION eventData, key for key in the sample's order. */
const creditEventData = (t: Txn) => ({
  product: { reference: t.reservation.accountReference, type: "RESERVED_ACCOUNT" },
  transactionReference: t.transactionReference, paymentReference: t.transactionReference, paidOn: dashWat(t.paidAt),
  paymentDescription: t.reservation.accountName, metaData: {}, // Assumption: the description is the account name (B3 sample "Adm")
  paymentSourceInformation: [{ bankCode: t.payerBankCode ?? "", amountPaid: naira(t.amountKobo), accountName: t.payerName, sessionId: t.sessionId, accountNumber: t.payerAccountNumber }],
  destinationAccountInformation: { bankCode: t.account.bankCode, bankName: t.account.bankName, accountNumber: t.account.accountNumber },
  amountPaid: naira(t.amountKobo), totalPayable: naira(t.amountKobo), cardDetails: {}, paymentMethod: "ACCOUNT_TRANSFER", currency: "NGN",
  settlementAmount: nairaString(t.amountKobo - t.feeKobo), paymentStatus: "PAID",
  customer: { name: t.reservation.customerName, email: t.reservation.customerEmail }
})
/**
 * B4's TransactionStatusResponse: string amounts, "dd/MM/yyyy h:mm:ss a", payer in accountDetails/accountPayments with a
 * NIP code and a masked number. Assumption (PROVIDERS.md silent): an unknown payer bank defaults to GTB (000013) here;
 * the payer rows carry no sessionId (the legacy samples have none); cardDetails is null for a transfer.
 */
const requeryJson = (t: Txn) => {
  const code = t.payerBankCode ?? "058"
  const payer = { accountName: t.payerName, accountNumber: mask(t.payerAccountNumber), bankCode: bankByCode(code)?.nipCode ?? code, amountPaid: nairaString(t.amountKobo) }
  return {
    transactionReference: t.transactionReference, paymentReference: t.transactionReference, amountPaid: nairaString(t.amountKobo),
    totalPayable: nairaString(t.amountKobo), settlementAmount: nairaString(t.amountKobo - t.feeKobo), paidOn: slashWat(t.paidAt),
    paymentStatus: "PAID", paymentDescription: t.reservation.accountName, currency: "NGN", paymentMethod: "ACCOUNT_TRANSFER",
    product: { type: "RESERVED_ACCOUNT", reference: t.reservation.accountReference }, cardDetails: null,
    accountDetails: payer, accountPayments: [payer],
    customer: { name: t.reservation.customerName, email: t.reservation.customerEmail }, metaData: {}
  }
}
/** B4 search row. Assumption (PROVIDERS.md silent): transactionDate is ISO UTC "+0000" like B6's dateCreated. */
const searchRow = (t: Txn) => ({
  transactionReference: t.transactionReference, paymentReference: t.transactionReference, amount: naira(t.amountKobo),
  customerName: t.reservation.customerName, customerEmail: t.reservation.customerEmail, paymentStatus: "PAID", transactionDate: isoUtc(t.paidAt)
})
/**
 * B4 reserved-account transaction row. Assumption (PROVIDERS.md silent): createdOn/completedOn in ISO UTC "+0000";
 * providerAmount equals the fee; merchantName is "Fake Merchant".
 */
const reservedTxnRow = (t: Txn) => ({
  customerDTO: { email: t.reservation.customerEmail, name: t.reservation.customerName, merchantCode: t.reservation.merchant.merchantCode },
  providerAmount: naira(t.feeKobo), paymentMethod: "ACCOUNT_TRANSFER", createdOn: isoUtc(t.paidAt), amount: naira(t.amountKobo), flagged: false,
  providerCode: "98271", fee: naira(t.feeKobo), currencyCode: "NGN", completedOn: isoUtc(t.paidAt), paymentDescription: t.reservation.accountName,
  paymentStatus: "PAID", transactionReference: t.transactionReference, paymentReference: t.transactionReference, merchantCode: t.reservation.merchant.merchantCode,
  merchantName: "Fake Merchant", payableAmount: naira(t.amountKobo), amountPaid: naira(t.amountKobo), completed: true, settleInstantly: false
})
/** B6 initiate / validate-otp body (sample key order); sessionId only once one exists, `comment` only on a synchronous failure. */
const disbursementJson = (d: Disbursement) => ({
  amount: naira(d.amountKobo), reference: d.reference, status: d.status, dateCreated: isoUtc(d.createdAt), totalFee: naira(d.feeKobo),
  ...(d.sessionId === null ? {} : { sessionId: d.sessionId }),
  destinationAccountName: d.destinationAccountName, destinationBankName: d.bank.name, destinationAccountNumber: d.destinationAccountNumber,
  destinationBankCode: d.bank.code, ...(d.comment === null ? {} : { comment: d.comment })
})
/** B6 summary. Assumption (PROVIDERS.md silent): createdOn in ISO UTC "+0000". */
const summaryJson = (d: Disbursement) => ({
  amount: naira(d.amountKobo), reference: d.reference, narration: d.narration, currency: d.currency, fee: naira(d.feeKobo), twoFaEnabled: d.twoFa,
  status: d.status, transactionDescription: d.description, transactionReference: d.transactionReference, createdOn: isoUtc(d.createdAt),
  sourceAccountNumber: d.sourceAccountNumber, destinationAccountNumber: d.destinationAccountNumber, destinationAccountName: d.destinationAccountName,
  destinationBankCode: d.bank.code, destinationBankName: d.bank.name
})
/** B6 webhooks, key for key in the samples' order: FAILED has sessionId ""; REVERSED has no description nor bank name. */
const disbursementEventData = (d: Disbursement) => {
  const createdOn = slashWat(d.createdAt)
  const completedOn = slashWat(d.completedAt ?? new Date())
  if (d.status === "REVERSED") {
    return {
      transactionReference: d.transactionReference, reference: d.reference, narration: d.narration, currency: d.currency, amount: naira(d.amountKobo),
      status: d.status, fee: naira(d.feeKobo), destinationAccountNumber: d.destinationAccountNumber, destinationAccountName: d.destinationAccountName,
      destinationBankCode: d.bank.code, sessionId: d.sessionId ?? "", createdOn, completedOn
    }
  }
  return {
    amount: naira(d.amountKobo), transactionReference: d.transactionReference, fee: naira(d.feeKobo), transactionDescription: d.description,
    destinationAccountNumber: d.destinationAccountNumber, sessionId: d.status === "SUCCESS" ? (d.sessionId ?? "") : "", createdOn,
    destinationAccountName: d.destinationAccountName, reference: d.reference, destinationBankCode: d.bank.code, completedOn,
    narration: d.narration, currency: d.currency, destinationBankName: d.bank.name, status: d.status
  }
}
/**
 * Assumption (PROVIDERS.md silent): summary/webhook descriptions per state. B6 gives only SUCCESS's
 * "Approved or completed successfully" and the insufficient-balance text; NIP-style texts for the rest.
 */
const DESCRIPTION = {
  pending: "Transaction is processing", awaiting: "Transaction awaiting authorization", success: "Approved or completed successfully",
  failed: "Beneficiary Bank not available", invalidAccount: "Invalid Account", reversed: "Transaction reversed"
} as const

// ---------------------------------------------------------------- the server

export const startMonnifyFake = async (opts: { port?: number; webhookRetryDelaysMs?: ReadonlyArray<number>; disbursementReportDelayMs?: number } = {}): Promise<MonnifyFake> => {
  // B3: collections are retried 12 times at 5-minute intervals; compressed for tests. Assumption (Q14): the same for disbursements.
  const retryDelays = opts.webhookRetryDelaysMs ?? [100, 200, 400]
  const reportDelay = opts.disbursementReportDelayMs ?? 50
  const merchants = new Map<string, Merchant>()
  const tokens = new Map<string, { merchant: Merchant; expiresAt: number }>()
  const directory = new Map<string, { accountName: string; outcome: Outcome }>()
  for (const a of MONNIFY_FAKE_DIRECTORY) directory.set(`${a.bankCode}:${a.accountNumber}`, a)
  const byNuban = new Map<string, { reservation: Reservation; account: ReservedAccount }>()
  const serials = new Map<string, number>()
  const faults = new Map<MonnifyOperation, { fault: Fault; left: number | null }>()
  const callLog: Array<MutableCall> = []
  const deliveryLog: Array<MutableDelivery> = []
  const deliveryOwner = new Map<MutableDelivery, Merchant>()
  const hung = new Set<net.Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const wakers = new Set<() => void>() // pending credit({deliver:{afterMs}}) calls, released by close()
  const outbound = new Set<http.ClientRequest>()
  let closed = false

  const later = (ms: number, f: () => void) => {
    const t = setTimeout(() => { timers.delete(t); if (!closed) f() }, ms)
    timers.add(t)
  }
  const merchantOf = (apiKey: string) => {
    const m = merchants.get(apiKey)
    if (m === undefined) throw new Error(`MonnifyFake: no merchant with key ${apiKey.slice(0, 10)}…`)
    return m
  }
  const allMerchants = (apiKey?: string) => [...merchants.values()].filter((m) => apiKey === undefined || m.apiKey === apiKey)

  // ---------------------------------------------------------------- webhook delivery (B3)

  /** One POST of exact bytes; 0 for a network error or timeout. Assumption: 5 s ("time out within a few seconds", B3). */
  const post = (url: string, body: string, signature: string | undefined) => new Promise<{ status: number; text: string }>((resolve) => {
    if (closed) return resolve({ status: 0, text: "" })
    const target = new URL(url)
    const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    if (signature !== undefined && signature !== "") headers["monnify-signature"] = signature
    const req = (target.protocol === "https:" ? https : http).request(target, { method: "POST", headers, agent: false, timeout: 5_000 }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => { outbound.delete(req); resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }) })
      res.on("error", () => { outbound.delete(req); resolve({ status: 0, text: "" }) })
    })
    outbound.add(req)
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", () => { outbound.delete(req); resolve({ status: 0, text: "" }) })
    req.end(body)
  })
  /** One attempt to the merchant's current URL; B3: anything but 200 is retried until the delays run out. */
  const attempt = async (d: MutableDelivery, retryIndex: number): Promise<void> => {
    const url = deliveryOwner.get(d)?.webhookUrl ?? null
    if (url === null || closed) return // Assumption: no webhook URL configured means nothing is sent.
    const { status } = await post(url, d.body, d.signature)
    if (closed) return
    d.statuses.push(status)
    const delay = retryDelays[retryIndex]
    if (status !== 200 && delay !== undefined) later(delay, () => void attempt(d, retryIndex + 1))
  }
  const makeDelivery = (m: Merchant, eventType: string, reference: string, eventData: unknown, signWith?: string): MutableDelivery => {
    const body = JSON.stringify({ eventType, eventData }) // serialised once, compactly: these bytes are signed and sent (B3)
    const d = { eventType, reference, body, signature: signMonnify(signWith ?? m.secretKey, body), statuses: [] }
    deliveryOwner.set(d, m)
    return d
  }
  const send = (d: MutableDelivery) => { deliveryLog.push(d); return attempt(d, 0) }
  const deliverAs = async (d: MutableDelivery, deliver: MonnifyCreditOptions["deliver"]): Promise<MutableDelivery> => {
    const how = deliver ?? "now"
    if (how === "never") return d
    if (typeof how === "object") {
      await new Promise<void>((r) => {
        const wake = () => { wakers.delete(wake); r() }
        wakers.add(wake)
        later(how.afterMs, wake)
      })
      if (closed) return d
    }
    await send(d)
    if (how === "twice") await attempt(d, retryDelays.length) // a second copy of the same bytes, not retried
    return d
  }

  // ---------------------------------------------------------------- auth (B1)

  const b64url = (x: unknown) => Buffer.from(JSON.stringify(x)).toString("base64url")
  /** A JWT-looking token; only its presence in `tokens` matters. */
  const issueToken = (m: Merchant) => {
    const now = Date.now()
    const exp = Math.floor(now / 1000) + m.tokenTtlSeconds
    const token = `${b64url({ alg: "RS256", typ: "JWT" })}.${b64url({ aud: ["api-resource"], scope: ["profile"], exp, authorities: ["MPAYMENTS_DEFAULT"], jti: randomUUID(), client_id: m.apiKey })}.${randomBytes(48).toString("base64url")}`
    tokens.set(token, { merchant: m, expiresAt: now + m.tokenTtlSeconds * 1000 })
    m.logins++
    return { accessToken: token, expiresIn: m.tokenTtlSeconds }
  }
  const basicKey = (authorization: string | undefined): { key: string; secret: string } | undefined => {
    const match = /^Basic\s+(\S+)$/i.exec(authorization ?? "")
    if (match === null) return undefined
    const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8")
    const at = decoded.indexOf(":")
    return at < 0 ? { key: decoded, secret: "" } : { key: decoded.slice(0, at), secret: decoded.slice(at + 1) }
  }
  /** Assumption (PROVIDERS.md silent): a non-Basic Authorization header on login is treated as missing. */
  const login = (authorization: string | undefined): Reply => {
    const basic = basicKey(authorization)
    if (basic === undefined) return MISSING_AUTH
    const m = merchants.get(basic.key)
    if (m === undefined || m.secretKey !== basic.secret) return BAD_CREDENTIALS
    return ok(issueToken(m))
  }

  // ---------------------------------------------------------------- handlers

  type Ctx = { readonly m: Merchant; readonly params: ReadonlyArray<string>; readonly q: Record<string, string>; readonly b: Record<string, unknown> }

  const banksList = (): Reply => ok(BANKS.map(bankJson))

  /** B5. Assumption (Q12): the texts; a non-10-digit number is a 400 like an unknown bank. */
  const validate = ({ q }: Ctx): Reply => {
    const accountNumber = q["accountNumber"] ?? ""
    const bankCode = q["bankCode"] ?? ""
    if (accountNumber === "") return missing("accountNumber")
    if (bankCode === "") return missing("bankCode")
    if (bankByCode(bankCode) === undefined) return err(400, "Invalid bank code")
    if (!/^\d{10}$/.test(accountNumber)) return err(400, "Invalid account number")
    const own = byNuban.get(accountNumber)
    const name = directory.get(`${bankCode}:${accountNumber}`)?.accountName ?? (own?.account.bankCode === bankCode ? own.account.accountName : undefined)
    return name === undefined ? err(404, "Could not find account with the provided details") : ok({ accountNumber, accountName: name, bankCode })
  }

  const nextNuban = (bankCode: string): string => {
    for (;;) {
      const n = (serials.get(bankCode) ?? 0) + 1
      serials.set(bankCode, n)
      const account = makeNuban(bankCode, (SERIAL_BASE[bankCode] ?? 600_000_000) + n)
      if (!byNuban.has(account) && !directory.has(`${bankCode}:${account}`)) return account
    }
  }
  /** Assumption (PROVIDERS.md silent): the email check and the BVN/NIN shape check (11 digits each). */
  const reservedCreateErrors = (m: Merchant, b: Record<string, unknown>): Reply | undefined => {
    for (const f of ["accountReference", "accountName", "currencyCode", "contractCode", "customerEmail", "customerName"]) if (str(b, f) === undefined) return missing(f)
    if (str(b, "currencyCode") !== "NGN") return err(400, "Invalid currency code")
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(str(b, "customerEmail") ?? "")) return err(400, "Invalid customer email")
    for (const f of ["bvn", "nin"]) if (b[f] !== undefined && !/^\d{11}$/.test(str(b, f) ?? "")) return err(400, `Invalid ${f.toUpperCase()}`)
    if (str(b, "contractCode") !== m.contractCode) return err(422, "Invalid contract code") // Assumption: text and 422
    // Assumption (Q10): text and 422 for a duplicate reference.
    if (m.reservations.some((r) => r.accountReference === str(b, "accountReference"))) return err(422, "There is an existing reserved account with this account reference")
    return undefined
  }
  /**
   * B2, synchronous. Assumption (Q10): `bvn` is not required (B2 shows a nin-only request); an unknown preferred bank is a
   * 422. Assumption (Q9): the returned name is the first 3 characters of the requested accountName, "-", the customer
   * name ("Karokart Ada" + "Ada Obi" → "Kar-Ada Obi"), the same on every account.
   */
  const reservedCreate = ({ m, b }: Ctx): Reply => {
    const refused = reservedCreateErrors(m, b)
    if (refused !== undefined) return refused
    const preferred = Array.isArray(b["preferredBanks"]) ? [...new Set((b["preferredBanks"] as Array<unknown>).map(String))] : []
    const codes = b["getAllAvailableBanks"] === true ? ALL_AVAILABLE : preferred.length > 0 ? preferred : ["50515"] // B2: defaults to 50515
    const bad = codes.find((c) => !RESERVABLE.has(c))
    if (bad !== undefined) return err(422, `Invalid preferred bank code: ${bad}`)
    const accountName = `${(str(b, "accountName") ?? "").slice(0, 3)}-${str(b, "customerName") ?? ""}`
    const extra: Record<string, unknown> = { incomeSplitConfig: Array.isArray(b["incomeSplitConfig"]) ? b["incomeSplitConfig"] : [] }
    if (str(b, "bvn") !== undefined) extra["bvn"] = str(b, "bvn")
    if (str(b, "nin") !== undefined) extra["nin"] = str(b, "nin")
    extra["restrictPaymentSource"] = b["restrictPaymentSource"] === true // Assumption: echoed, default false, not enforced
    if (b["allowedPaymentSources"] !== undefined) extra["allowedPaymentSources"] = b["allowedPaymentSources"]
    const r: Reservation = {
      merchant: m, accountReference: str(b, "accountReference") ?? "", accountName, currencyCode: "NGN", contractCode: m.contractCode,
      customerEmail: str(b, "customerEmail") ?? "", customerName: str(b, "customerName") ?? "",
      accounts: codes.map((code) => ({ bankCode: code, bankName: bankByCode(code)?.name ?? code, accountNumber: nextNuban(code), accountName })),
      reservationReference: randomString(UPPER, 20), createdOn: dashWat(new Date()), extra
    }
    m.reservations.push(r)
    for (const account of r.accounts) byNuban.set(account.accountNumber, { reservation: r, account })
    return ok(reservationJson(r))
  }
  /** Assumption (PROVIDERS.md silent): the 404 text. */
  const reservationOf = (m: Merchant, ref: string) => m.reservations.find((r) => r.accountReference === ref)
  const reservedGet = ({ m, params }: Ctx): Reply => {
    const r = reservationOf(m, decodeURIComponent(params[0] ?? ""))
    return r === undefined ? err(404, "Cannot find reserved account") : ok(reservationJson(r))
  }

  const transactionsGet = ({ m, params }: Ctx): Reply => {
    const t = m.txns.find((x) => x.transactionReference === decodeURIComponent(params[0] ?? ""))
    return t === undefined ? err(404, "Could not find transaction with the specified transaction reference") : ok(requeryJson(t)) // Assumption: text
  }
  const newestFirst = (a: Txn, b: Txn) => b.paidAt.getTime() - a.paidAt.getTime()
  /** B4 search: 0-based page; filters inclusive. Assumption: rows newest first; an unreadable from/to is a 400. */
  const transactionsSearch = ({ m, q }: Ctx): Reply => {
    const from = q["from"] === undefined || q["from"] === "" ? null : instantOf(q["from"])
    const to = q["to"] === undefined || q["to"] === "" ? null : instantOf(q["to"])
    if (from === undefined || to === undefined) return err(400, "Invalid date: use an ISO-8601 date-time or epoch milliseconds")
    const amountOf = (k: string) => (q[k] === undefined || q[k] === "" ? null : koboOfNaira(q[k]) ?? -1)
    const [amount, fromAmount, toAmount] = [amountOf("amount"), amountOf("fromAmount"), amountOf("toAmount")]
    const eq = (k: string, v: string) => q[k] === undefined || q[k] === "" || q[k] === v
    const rows = m.txns
      .filter((t) => (from === null || t.paidAt.getTime() >= from) && (to === null || t.paidAt.getTime() <= to))
      .filter((t) => eq("paymentStatus", "PAID") && eq("transactionReference", t.transactionReference) && eq("paymentReference", t.transactionReference))
      .filter((t) => eq("customerEmail", t.reservation.customerEmail) && eq("customerName", t.reservation.customerName))
      .filter((t) => (amount === null || t.amountKobo === amount) && (fromAmount === null || t.amountKobo >= fromAmount) && (toAmount === null || t.amountKobo <= toAmount))
      .sort(newestFirst)
    const page = springPage(rows.map(searchRow), q)
    return isReply(page) ? page : ok(page.page)
  }
  /** B4. Assumption (PROVIDERS.md silent): a missing accountReference is a 400, an unknown one a 404. */
  const reservedTransactions = ({ m, q }: Ctx): Reply => {
    const ref = q["accountReference"]
    if (ref === undefined || ref === "") return missing("accountReference")
    const r = reservationOf(m, ref)
    if (r === undefined) return err(404, "Cannot find reserved account")
    const page = springPage(m.txns.filter((t) => t.reservation === r).sort(newestFirst).map(reservedTxnRow), q)
    return isReply(page) ? page : ok(page.page)
  }

  // ---------------------------------------------------------------- disbursements (B6)

  const report = (m: Merchant, d: Disbursement, eventType: string) => void send(makeDelivery(m, eventType, d.reference, disbursementEventData(d)))
  const refund = (m: Merchant, d: Disbursement) => {
    if (d.debited) m.balanceKobo += d.amountKobo + d.feeKobo // Assumption: the fee comes back with the amount
    d.debited = false
  }
  const fail = (m: Merchant, d: Disbursement, description: string) => {
    Object.assign(d, { status: "FAILED", description, sessionId: null, completedAt: new Date() })
    refund(m, d)
    report(m, d, "FAILED_DISBURSEMENT")
  }
  const succeed = (d: Disbursement) => {
    const at = new Date()
    Object.assign(d, { status: "SUCCESS", description: DESCRIPTION.success, sessionId: nipSessionId(at), completedAt: at })
  }
  /** Assumption (PROVIDERS.md silent): a reversal first reports success, then REVERSED one more delay later. */
  const reportSuccess = (m: Merchant, d: Disbursement) => {
    report(m, d, "SUCCESSFUL_DISBURSEMENT")
    if (d.outcome !== "reversed") return
    later(reportDelay, () => {
      Object.assign(d, { status: "REVERSED", description: DESCRIPTION.reversed, completedAt: new Date() })
      refund(m, d)
      report(m, d, "REVERSED_DISBURSEMENT")
    })
  }
  const failureText = (d: Disbursement) => (d.outcome === "unknown" ? DESCRIPTION.invalidAccount : DESCRIPTION.failed)
  /** Debit, then: async → PENDING and a webhook later; success/reversed → SUCCESS now; failed/unknown → PENDING then FAILED. */
  const execute = (m: Merchant, d: Disbursement) => {
    m.balanceKobo -= d.amountKobo + d.feeKobo
    d.debited = true
    const succeeds = d.outcome === "success" || d.outcome === "reversed"
    if (succeeds && !d.async) {
      succeed(d)
      return later(reportDelay, () => reportSuccess(m, d))
    }
    Object.assign(d, { status: "PENDING", description: DESCRIPTION.pending })
    later(reportDelay, () => {
      if (!succeeds) return fail(m, d, failureText(d))
      succeed(d)
      reportSuccess(m, d)
    })
  }
  /**
   * B6: a synchronous failure in a 200 with `comment`. Assumption (PROVIDERS.md silent): a FAILED_DISBURSEMENT follows
   * (B6's FAILED sample carries this very text); the request does not count for D07.
   */
  const insufficient = (m: Merchant, d: Disbursement) => {
    Object.assign(d, { status: "FAILED", comment: INSUFFICIENT, description: INSUFFICIENT, d07: false })
    later(reportDelay, () => fail(m, d, INSUFFICIENT))
  }

  const singleErrors = (m: Merchant, b: Record<string, unknown>): Reply | undefined => {
    if (b["amount"] === undefined) return missing("amount")
    if (koboOfNaira(b["amount"]) === undefined) return err(400, "Invalid amount")
    for (const f of ["narration", "destinationBankCode", "destinationAccountNumber", "sourceAccountNumber"]) if (str(b, f) === undefined) return missing(f)
    if ((str(b, "currency") ?? "NGN") !== "NGN") return err(400, "Invalid currency") // Assumption: currency defaults to NGN
    if (str(b, "sourceAccountNumber") !== m.wallet) return err(400, "Invalid source account number") // Assumption: text
    if (bankByCode(str(b, "destinationBankCode") ?? "") === undefined) return err(400, "Invalid destination bank code") // Assumption
    if (!/^\d{10}$/.test(str(b, "destinationAccountNumber") ?? "")) return err(400, "Invalid destination account number") // Assumption
    return undefined
  }
  /**
   * B6 initiate. Assumption (Q13): a reused reference returns that disbursement as it now stands, whatever the body.
   * Assumption (Q13): D07 (same bank, account and amount within 2 minutes, any other reference) is a 400 ErrorResponse.
   * Assumption (PROVIDERS.md silent): an account neither in the directory nor reserved here is accepted, then fails
   * like a NIP "Invalid Account" (PENDING, then FAILED_DISBURSEMENT); its name is the one sent, or "".
   * B1: MFA (default on) answers PENDING_AUTHORIZATION without debit nor webhook.
   */
  const single = ({ m, b }: Ctx): Reply => {
    const reference = str(b, "reference")
    if (reference === undefined) return missing("reference")
    const same = m.disbursements.find((d) => d.reference === reference)
    if (same !== undefined) return ok(disbursementJson(same))
    const refused = singleErrors(m, b)
    if (refused !== undefined) return refused
    const amountKobo = koboOfNaira(b["amount"]) ?? 0
    const bank = bankByCode(str(b, "destinationBankCode") ?? "") as Bank
    const account = str(b, "destinationAccountNumber") ?? ""
    const now = Date.now()
    const dup = m.disbursements.some((d) => d.d07 && d.bank === bank && d.destinationAccountNumber === account && d.amountKobo === amountKobo && now - d.createdAt.getTime() < 120_000)
    if (dup) return err(400, D07)
    const known = directory.get(`${bank.code}:${account}`)
    const own = byNuban.get(account)
    const ownName = own?.account.bankCode === bank.code ? own.account.accountName : undefined
    const createdAt = new Date(now)
    const d: Disbursement = {
      reference, amountKobo, feeKobo: monnifyDisbursementFeeKobo(amountKobo), narration: str(b, "narration") ?? "", currency: "NGN", bank,
      destinationAccountNumber: account, destinationAccountName: known?.accountName ?? ownName ?? str(b, "destinationAccountName") ?? "",
      sourceAccountNumber: m.wallet, outcome: known?.outcome ?? (ownName !== undefined ? "success" : "unknown"), async: b["async"] === true,
      twoFa: m.mfa, createdAt, transactionReference: `MFDS${stampWat(createdAt)}${randomString(UPPER, 6)}`,
      status: "PENDING", comment: null, description: DESCRIPTION.pending, sessionId: null, completedAt: null, debited: false, d07: true
    }
    m.disbursements.push(d)
    if (d.amountKobo + d.feeKobo > m.balanceKobo) insufficient(m, d) // Assumption: checked at initiation, MFA or not
    else if (m.mfa) Object.assign(d, { status: "PENDING_AUTHORIZATION", description: DESCRIPTION.awaiting })
    else execute(m, d)
    return ok(disbursementJson(d))
  }
  /** B6 validate-otp. Assumption (PROVIDERS.md silent): unknown reference 404; not awaiting authorisation 400; balance re-checked. */
  const validateOtp = ({ m, b }: Ctx): Reply => {
    const reference = str(b, "reference")
    if (reference === undefined) return missing("reference")
    if (str(b, "authorizationCode") === undefined) return missing("authorizationCode")
    const d = m.disbursements.find((x) => x.reference === reference)
    if (d === undefined) return err(404, "Could not find transfer with the specified reference")
    if (d.status !== "PENDING_AUTHORIZATION") return err(400, "Transfer is not awaiting authorization")
    if (str(b, "authorizationCode") !== OTP) return err(400, "Invalid authorization code") // Assumption: text
    if (d.amountKobo + d.feeKobo > m.balanceKobo) insufficient(m, d)
    else execute(m, d)
    return ok(disbursementJson(d))
  }
  const summary = ({ m, q }: Ctx): Reply => {
    const reference = q["reference"]
    if (reference === undefined || reference === "") return missing("reference")
    const d = m.disbursements.find((x) => x.reference === reference)
    return d === undefined ? err(404, "Could not find transfer with the specified reference") : ok(summaryJson(d)) // Assumption: text
  }

  const ROUTES: ReadonlyArray<readonly [string, RegExp, MonnifyOperation]> = [
    ["POST", /^\/api\/v1\/auth\/login$/, "auth.login"],
    ["GET", /^\/api\/v1\/banks$/, "banks.list"],
    ["GET", /^\/api\/v1\/disbursements\/account\/validate$/, "account.validate"],
    ["POST", /^\/api\/v2\/bank-transfer\/reserved-accounts$/, "reserved.create"],
    ["GET", /^\/api\/v2\/bank-transfer\/reserved-accounts\/([^/]+)$/, "reserved.get"],
    ["GET", /^\/api\/v1\/transactions\/search$/, "transactions.search"],
    ["GET", /^\/api\/v2\/transactions\/([^/]+)$/, "transactions.get"],
    ["GET", /^\/api\/v1\/bank-transfer\/reserved-accounts\/transactions$/, "reserved.transactions"],
    ["POST", /^\/api\/v2\/disbursements\/single$/, "disbursement.single"],
    ["GET", /^\/api\/v2\/disbursements\/single\/summary$/, "disbursement.summary"],
    ["POST", /^\/api\/v2\/disbursements\/single\/validate-otp$/, "disbursement.validateOtp"]
  ]
  const HANDLERS: Record<Exclude<MonnifyOperation, "auth.login">, (c: Ctx) => Reply> = {
    "banks.list": banksList, "account.validate": validate, "reserved.create": reservedCreate, "reserved.get": reservedGet,
    "transactions.search": transactionsSearch, "transactions.get": transactionsGet, "reserved.transactions": reservedTransactions,
    "disbursement.single": single, "disbursement.summary": summary, "disbursement.validateOtp": validateOtp
  }

  // ---------------------------------------------------------------- credits and rejections (B3)

  const ownerOfNuban = (accountNumber: string, what: string) => {
    const hit = byNuban.get(accountNumber)
    if (hit === undefined) throw new Error(`MonnifyFake.${what}: no merchant reserved account ${accountNumber}`)
    return hit
  }
  const credit = async (o: MonnifyCreditOptions): Promise<Delivery> => {
    if (closed) throw new Error("MonnifyFake.credit: the fake is closed")
    const { reservation, account } = ownerOfNuban(o.accountNumber, "credit")
    const amountKobo = koboOfNaira(o.amountNaira)
    if (amountKobo === undefined) throw new Error("MonnifyFake.credit: amountNaira must be positive with at most 2 decimals")
    const m = reservation.merchant
    const paidAt = o.paidOn ?? new Date()
    const transactionReference = o.transactionReference ?? `MNFY|${digits(2)}|${stampWat(paidAt)}|${digits(6)}`
    for (const x of merchants.values()) {
      if (x.txns.some((t) => t.transactionReference === transactionReference)) throw new Error(`MonnifyFake.credit: reference ${transactionReference} already used; use redeliver()`)
    }
    const t: Txn = {
      transactionReference, reservation, account, amountKobo, feeKobo: monnifyCollectionFeeKobo(amountKobo), paidAt,
      payerName: o.payerName ?? "Monnify Limited", payerAccountNumber: o.payerAccountNumber ?? "0065432190", payerBankCode: o.payerBankCode, // B3 sample payer
      sessionId: o.sessionId ?? nipSessionId(paidAt)
    }
    m.txns.push(t)
    return deliverAs(makeDelivery(m, "SUCCESSFUL_TRANSACTION", transactionReference, creditEventData(t), o.signWith), o.deliver)
  }
  /**
   * B3's REJECTED_PAYMENT sample, key for key, for a reserved account. Assumption (PROVIDERS.md silent): `amount` and
   * `expectedAmount` are the amount paid (a reserved account expects none); metaData is the string "{}" (the sample's
   * is a string); the default reason is "RESTRICTED_PAYMENT_SOURCE"; the payer is the sample's.
   */
  const rejectPayment = async (o: { accountNumber: string; amountNaira: number; reason?: string }): Promise<Delivery> => {
    if (closed) throw new Error("MonnifyFake.rejectPayment: the fake is closed")
    const { reservation: r, account } = ownerOfNuban(o.accountNumber, "rejectPayment")
    const amountKobo = koboOfNaira(o.amountNaira)
    if (amountKobo === undefined) throw new Error("MonnifyFake.rejectPayment: amountNaira must be positive with at most 2 decimals")
    const at = new Date()
    const ref = `MNFY|${digits(2)}|${stampWat(at)}|${digits(6)}`
    const eventData = {
      metaData: "{}", product: { reference: r.accountReference, type: "RESERVED_ACCOUNT" }, amount: naira(amountKobo),
      paymentSourceInformation: { bankCode: "50515", amountPaid: naira(amountKobo), accountName: "MARVELOUS BENJI", sessionId: nipSessionId(at), accountNumber: "5141901487" },
      transactionReference: ref, created_on: dashZeroWat(at), paymentReference: ref,
      paymentRejectionInformation: {
        bankCode: account.bankCode, destinationAccountNumber: account.accountNumber, bankName: account.bankName,
        rejectionReason: o.reason ?? "RESTRICTED_PAYMENT_SOURCE", expectedAmount: naira(amountKobo)
      },
      paymentDescription: r.accountName, customer: { name: r.customerName, email: r.customerEmail }
    }
    const d = makeDelivery(r.merchant, "REJECTED_PAYMENT", ref, eventData)
    await send(d)
    return d
  }

  // ---------------------------------------------------------------- HTTP plumbing

  const reply = (res: http.ServerResponse, r: Reply, call?: MutableCall) => {
    if (call !== undefined) call.status = r.status
    res.writeHead(r.status, { "content-type": "application/json;charset=UTF-8" })
    res.end(JSON.stringify(r.body))
  }
  const hang = (res: http.ServerResponse) => { if (res.socket !== null) hung.add(res.socket) }
  const takeFault = (op: MonnifyOperation): Fault | undefined => {
    const f = faults.get(op)
    if (f === undefined) return undefined
    if (f.left !== null && --f.left <= 0) faults.delete(op)
    return f.fault
  }

  const control = async (path: string, method: string, b: Record<string, unknown>): Promise<Reply> => {
    const view = (d: MutableDelivery) => ({ eventType: d.eventType, reference: d.reference, signature: d.signature, statuses: d.statuses })
    const opt = (k: string) => (str(b, k) === undefined ? {} : { [k]: str(b, k) as string })
    if (method === "POST" && path === "/_fake/credit") {
      const deliver = str(b, "deliver")
      const amount = b["amountNaira"]
      const o: MonnifyCreditOptions = {
        accountNumber: str(b, "accountNumber") ?? "", amountNaira: typeof amount === "number" || typeof amount === "string" ? amount : NaN,
        ...opt("transactionReference"), ...opt("payerName"), ...opt("payerAccountNumber"), ...opt("payerBankCode"), ...opt("sessionId"), ...opt("signWith"),
        ...(deliver === "now" || deliver === "never" || deliver === "twice" ? { deliver } : {})
      }
      return { status: 200, body: view((await credit(o)) as MutableDelivery) }
    }
    if (method === "POST" && path === "/_fake/reject") {
      const o = { accountNumber: str(b, "accountNumber") ?? "", amountNaira: Number(b["amountNaira"]), ...opt("reason") }
      return { status: 200, body: view((await rejectPayment(o)) as MutableDelivery) }
    }
    if (method === "POST" && path === "/_fake/redeliver") {
      const d = [...deliveryLog].reverse().find((x) => x.reference === str(b, "reference"))
      return d === undefined ? { status: 404, body: { error: "no such delivery" } } : { status: 200, body: { status: await api.redeliver(d) } }
    }
    if (method === "POST" && path === "/_fake/fault") {
      api.fault(str(b, "op") as MonnifyOperation, str(b, "fault") as Fault, ...(b["times"] === undefined ? [] : [Number(b["times"])]))
      return { status: 200, body: { ok: true } }
    }
    if (method === "POST" && path === "/_fake/clear-faults") return (api.clearFaults(), { status: 200, body: { ok: true } })
    if (method === "GET" && path === "/_fake/state") {
      return {
        status: 200,
        body: {
          merchants: [...merchants.values()].map((m) => ({
            keyPrefix: m.apiKey.slice(0, 12), mode: m.mode, contractCode: m.contractCode, walletAccountNumber: m.wallet, webhookUrl: m.webhookUrl,
            walletBalanceKobo: m.balanceKobo, mfa: m.mfa, tokenTtlSeconds: m.tokenTtlSeconds, logins: m.logins
          })),
          reservedAccounts: api.reservedAccounts(), disbursements: api.disbursements(), deliveries: deliveryLog.map(view)
        }
      }
    }
    return { status: 404, body: { error: "unknown control route" } }
  }

  /** B1: Bearer calls. The merchant, or the 401 to answer (with the key for the log when the token was known). */
  const bearer = (authorization: string | undefined): { m: Merchant } | { reply: Reply; apiKey: string | null } => {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")
    if (match === null) return { reply: MISSING_AUTH, apiKey: null }
    const t = tokens.get(match[1] ?? "")
    if (t === undefined) return { reply: INVALID_TOKEN, apiKey: null }
    if (Date.now() >= t.expiresAt) return { reply: EXPIRED_TOKEN, apiKey: t.merchant.apiKey }
    return { m: t.merchant }
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const url = new URL(req.url ?? "/", "http://fake")
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname
    const method = req.method ?? "GET"
    const parsed = parseBody(Buffer.concat(chunks).toString("utf8"))
    if (path.startsWith("/_fake/")) {
      try {
        return reply(res, await control(path, method, asRecord(parsed.value)))
      } catch (e) {
        return reply(res, { status: 400, body: { error: e instanceof Error ? e.message : String(e) } })
      }
    }
    const route = ROUTES.map(([m, re, op]) => ({ m, op, match: re.exec(path) })).find((r) => r.m === method && r.match !== null)
    const call: MutableCall = { op: route?.op ?? "unknown", method, path, query: Object.fromEntries(url.searchParams), body: parsed.value, apiKey: null, status: 0 }
    callLog.push(call)
    let run: () => Reply
    if (route?.op === "auth.login") {
      call.apiKey = basicKey(req.headers.authorization)?.key ?? null
      run = () => login(req.headers.authorization)
    } else {
      const auth = bearer(req.headers.authorization)
      if ("reply" in auth) {
        call.apiKey = auth.apiKey
        return reply(res, auth.reply, call)
      }
      call.apiKey = auth.m.apiKey
      if (route === undefined || route.match === null) return reply(res, NOT_FOUND_ROUTE, call) // Assumption: unknown routes
      const handler = HANDLERS[route.op as Exclude<MonnifyOperation, "auth.login">]
      const ctx: Ctx = { m: auth.m, params: route.match.slice(1), q: call.query, b: asRecord(parsed.value) }
      run = () => handler(ctx)
    }
    const fault = takeFault(route.op) // after auth for every call but login
    if (fault === "5xx") return reply(res, INTERNAL, call)
    if (fault === "429") return reply(res, RATE_LIMITED, call)
    if (fault === "expiredToken") return reply(res, EXPIRED_TOKEN, call)
    if (fault === "hang") return hang(res)
    // Assumption (PROVIDERS.md silent): a body that is not JSON is a 400.
    const r = parsed.ok ? run() : err(400, "Invalid request body")
    if (fault === "acceptThenHang") return hang(res)
    if (fault === "acceptThen5xx") return reply(res, INTERNAL, call)
    return reply(res, r, call)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => { if (!res.headersSent) reply(res, err(500, String(e))) })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve())
  })
  const address = server.address() as net.AddressInfo

  const api: MonnifyFake = {
    url: `http://127.0.0.1:${address.port}`,
    addMerchant: (o) => {
      const mode = /^MK_(TEST|PROD)_\S+$/.exec(o.apiKey)
      if (mode === null) throw new Error("MonnifyFake.addMerchant: the API key must be MK_TEST_… or MK_PROD_…") // B1
      if (merchants.has(o.apiKey)) throw new Error("MonnifyFake.addMerchant: key already registered")
      merchants.set(o.apiKey, {
        apiKey: o.apiKey, secretKey: o.secretKey, contractCode: o.contractCode, wallet: o.walletAccountNumber, mode: mode[1] === "TEST" ? "sandbox" : "live",
        merchantCode: randomString(UPPER, 10), webhookUrl: o.webhookUrl ?? null,
        balanceKobo: o.walletBalanceKobo ?? 100_000_000, // Assumption: ₦1,000,000 by default
        mfa: o.mfa ?? true, // B1: MFA is on by default in sandbox and live
        tokenTtlSeconds: o.tokenTtlSeconds ?? 3600, logins: 0, reservations: [], txns: [], disbursements: []
      })
    },
    setWebhookUrl: (key, url) => { merchantOf(key).webhookUrl = url },
    setMfa: (key, on) => { merchantOf(key).mfa = on },
    setTokenTtl: (key, seconds) => { merchantOf(key).tokenTtlSeconds = seconds },
    addAccount: (a) => { directory.set(`${a.bankCode}:${a.accountNumber}`, { accountName: a.accountName, outcome: a.outcome ?? "success" }) },
    credit,
    rejectPayment,
    redeliver: async (d) => {
      const owner = deliveryOwner.get(d as MutableDelivery)
      if (owner === undefined) throw new Error("MonnifyFake.redeliver: not a delivery of this fake")
      if (owner.webhookUrl === null) throw new Error("MonnifyFake.redeliver: the merchant has no webhook URL")
      const { status } = await post(owner.webhookUrl, d.body, d.signature)
      ;(d as MutableDelivery).statuses.push(status)
      return status
    },
    sendRaw: (key, body, signature) => {
      const m = merchantOf(key)
      if (m.webhookUrl === null) return Promise.reject(new Error("MonnifyFake.sendRaw: the merchant has no webhook URL"))
      // undefined: signed correctly with the merchant's secret; "": no signature header; anything else: sent as given.
      return post(m.webhookUrl, body, signature ?? signMonnify(m.secretKey, body))
    },
    fault: (op, f, times) => {
      if (times !== undefined && times <= 0) faults.delete(op)
      else faults.set(op, { fault: f, left: times ?? null })
    },
    clearFaults: () => faults.clear(),
    calls: (op) => callLog.filter((c) => op === undefined || c.op === op).map((c) => ({ ...c })),
    // Counts tokens issued, including one whose answer an accept* fault then lost.
    logins: (key) => allMerchants(key).reduce((n, m) => n + m.logins, 0),
    reservedAccounts: (key) =>
      allMerchants(key).flatMap((m) => m.reservations).flatMap((r) =>
        r.accounts.map((a) => ({ accountReference: r.accountReference, accountNumber: a.accountNumber, bankCode: a.bankCode, customerEmail: r.customerEmail }))),
    disbursements: (key) =>
      allMerchants(key).flatMap((m) => m.disbursements).map((d) => ({
        reference: d.reference, amountNaira: naira(d.amountKobo), status: d.status, destinationAccountNumber: d.destinationAccountNumber, destinationBankCode: d.bank.code
      })),
    deliveries: () => [...deliveryLog],
    close: async () => {
      if (closed) return
      closed = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
      for (const w of [...wakers]) w()
      for (const r of outbound) r.destroy()
      for (const s of hung) s.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
  return api
}
