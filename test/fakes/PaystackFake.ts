/**
 * A faithful fake of Paystack's HTTP API (one host, mode by key prefix), as a plain node:http server.
 * Source of truth: shared/PROVIDERS.md part A (sections cited as "A1".."A8"). Where that file is silent the
 * choice is marked "Assumption (PROVIDERS.md silent): …".
 *
 * Covered: GET /bank, GET /bank/resolve, POST /customer, GET /customer/{email|code|id}, POST /dedicated_account,
 * POST /transferrecipient, POST /transfer, GET /transfer/verify/{ref}, GET /transaction, GET /transaction/verify/{ref};
 * signed charge.success / transfer.* webhooks with retries; fault injection.
 * Not covered (answer 404 "Entity not found" like any unknown route): /dedicated_account/assign and requery,
 * /transfer/finalize_transfer, /balance, /refund.
 *
 * Control routes (not Paystack's API; no auth; not recorded in calls()):
 *   POST /_fake/credit        {accountNumber, amountKobo, senderName?, senderBank?, reference?, narration?, deliver?: "now"|"never"|"twice"}
 *   POST /_fake/redeliver     {reference}            re-sends the latest delivery with that reference
 *   POST /_fake/fault         {op, fault, times?}
 *   POST /_fake/clear-faults
 *   GET  /_fake/state         dedicated accounts, transfers, balances, deliveries (without bodies)
 */
import { createHmac, randomInt } from "node:crypto"
import http from "node:http"
import https from "node:https"
import type net from "node:net"
import { makeNuban } from "../../src/domain/Nuban.js"

// ---------------------------------------------------------------- exported types

export type FakeOperation =
  | "bank.list" | "bank.resolve" | "customer.create" | "customer.fetch" | "dedicated_account.create"
  | "transferrecipient.create" | "transfer.create" | "transfer.verify" | "transaction.list" | "transaction.verify"
export type Fault = "5xx" | "hang" | "429" | "acceptThenHang" | "acceptThen5xx"
export interface FakeCall { readonly op: FakeOperation | "unknown"; readonly method: string; readonly path: string; readonly query: Record<string, string>; readonly body: unknown; readonly secretKey: string | null; readonly status: number }
export interface CreditOptions {
  readonly accountNumber: string
  readonly amountKobo: number
  readonly reference?: string
  readonly senderName?: string
  readonly senderBank?: string
  readonly senderAccountNumber?: string
  readonly narration?: string
  readonly paidAt?: Date
  /** "now" (default): deliver once now; "never": record the transaction only (a webhook Paystack never sent); "twice": deliver the same bytes twice; {afterMs}: deliver later. */
  readonly deliver?: "now" | "never" | "twice" | { readonly afterMs: number }
  /** Sign with this key instead of the integration's (to forge). */
  readonly signWith?: string
}
export interface Delivery { readonly event: string; readonly reference: string; readonly body: string; readonly signature: string; readonly statuses: ReadonlyArray<number> }
export interface PaystackFake {
  readonly url: string
  addIntegration(opts: { secretKey: string; webhookUrl?: string; businessName?: string; balanceKobo?: number; transferOtp?: boolean }): void
  setWebhookUrl(secretKey: string, url: string): void
  setTransferOtp(secretKey: string, on: boolean): void
  addAccount(a: { bankCode: string; accountNumber: string; accountName: string; outcome?: "success" | "failed" | "reversed" }): void
  credit(opts: CreditOptions): Promise<Delivery>
  redeliver(d: Delivery): Promise<number>
  sendRaw(secretKey: string, body: string, signature?: string): Promise<{ status: number; text: string }>
  fault(op: FakeOperation, fault: Fault, times?: number): void
  clearFaults(): void
  calls(op?: FakeOperation): ReadonlyArray<FakeCall>
  dedicatedAccounts(secretKey?: string): ReadonlyArray<{ id: number; accountNumber: string; customerCode: string; email: string; bankSlug: string }>
  transfers(secretKey?: string): ReadonlyArray<{ reference: string; amountKobo: number; status: string; accountNumber: string; bankCode: string }>
  deliveries(): ReadonlyArray<Delivery>
  close(): Promise<void>
}

type Outcome = "success" | "failed" | "reversed"

/** Lower-case hex HMAC-SHA512 of the raw body under the secret key (A3). */
export const signPaystack = (secretKey: string, rawBody: string): string =>
  createHmac("sha512", secretKey).update(rawBody, "utf8").digest("hex")

/** The built-in name directory: check-digit-valid NUBANs (src/domain/Nuban.ts), shared with the sandbox's table. */
export const PAYSTACK_FAKE_DIRECTORY: ReadonlyArray<{ bankCode: string; accountNumber: string; accountName: string; outcome: Outcome }> = [
  { bankCode: "058", accountNumber: "0123456785", accountName: "ADAEZE OKAFOR", outcome: "success" },
  { bankCode: "044", accountNumber: "1234567895", accountName: "CHUKWUEMEKA NWOSU", outcome: "success" },
  { bankCode: "057", accountNumber: "2000000015", accountName: "BOLANLE ADEYEMI", outcome: "success" },
  { bankCode: "033", accountNumber: "2100000021", accountName: "IBRAHIM MUSA", outcome: "success" },
  { bankCode: "011", accountNumber: "3000000032", accountName: "NGOZI EZE ENTERPRISES", outcome: "success" },
  { bankCode: "50515", accountNumber: "9000000042", accountName: "TUNDE BAKARE", outcome: "success" },
  { bankCode: "058", accountNumber: "9999999907", accountName: "FAIL TRANSFER", outcome: "failed" },
  { bankCode: "044", accountNumber: "9999999913", accountName: "REVERSE TRANSFER", outcome: "reversed" }
]

// ---------------------------------------------------------------- banks (A5)

interface Bank { readonly id: number; readonly name: string; readonly slug: string; readonly code: string; readonly longcode: string }

/**
 * Sorted by name as Paystack lists them. Access (id 1) and Wema (id 20) ids come from the A2 provider sample; the
 * other ids and the longcodes are illustrative. "Test Bank" uses code 001, the test bank code Paystack's own error
 * text names (A1): a 3-digit CBN-style code, so NUBANs check against it. Paystack-Titan's 100039 is a NIP-style code:
 * no check digit is defined for it (NIGERIA.md §1), so its DVAs are plain sequence numbers.
 */
const BANKS: ReadonlyArray<Bank> = [
  { id: 1, name: "Access Bank", slug: "access-bank", code: "044", longcode: "044150149" },
  { id: 7, name: "First Bank of Nigeria", slug: "first-bank-of-nigeria", code: "011", longcode: "011151003" },
  { id: 6, name: "First City Monument Bank", slug: "first-city-monument-bank", code: "214", longcode: "214150018" },
  { id: 9, name: "Guaranty Trust Bank", slug: "guaranty-trust-bank", code: "058", longcode: "058152036" },
  { id: 169, name: "Moniepoint MFB", slug: "moniepoint-mfb-ng", code: "50515", longcode: "" },
  { id: 171, name: "Paystack-Titan", slug: "titan-paystack", code: "100039", longcode: "" },
  { id: 900, name: "Test Bank", slug: "test-bank", code: "001", longcode: "" },
  { id: 18, name: "United Bank For Africa", slug: "united-bank-for-africa", code: "033", longcode: "033153513" },
  { id: 20, name: "Wema Bank", slug: "wema-bank", code: "035", longcode: "035150103" },
  { id: 21, name: "Zenith Bank", slug: "zenith-bank", code: "057", longcode: "057150013" }
]
/** The DVA providers of A2 (`available_providers` plus titan-paystack) and test-bank (A1). */
const DVA_PROVIDERS = new Set(["access-bank", "wema-bank", "titan-paystack", "test-bank"])
const bankByCode = (code: string) => BANKS.find((b) => b.code === code)
const BANK_STAMP = "2016-07-14T10:04:29.000Z"
const bankJson = (b: Bank) => ({
  name: b.name, slug: b.slug, code: b.code, longcode: b.longcode, gateway: null, pay_with_bank: false,
  supports_transfer: true, available_for_direct_debit: false, active: true, is_deleted: false,
  country: "Nigeria", currency: "NGN", type: "nuban", id: b.id, createdAt: BANK_STAMP, updatedAt: BANK_STAMP
})

// ---------------------------------------------------------------- envelopes (A1)

interface Reply { readonly status: number; readonly body: unknown }
const VALID_VALUES = "Ensure that the value(s) you're passing are valid."
const ok = (message: string, data: unknown, meta?: unknown, status = 200): Reply =>
  ({ status, body: meta === undefined ? { status: true, message, data } : { status: true, message, data, meta } })
const err = (status: number, message: string, code: string, type = "validation_error", nextStep = VALID_VALUES): Reply =>
  ({ status, body: { status: false, message, meta: { nextStep }, type, code } })
/** Bare `{status:false,message}` bodies, as A1/A2/A6 give for 401 and the 404s. */
const bare = (status: number, message: string): Reply => ({ status, body: { status: false, message } })
/** Assumption (PROVIDERS.md silent): the shape of missing-field errors. */
const missing = (field: string) => err(400, `${field} is required`, "missing_params", "validation_error", "Provide all required params")
const unknownBank = (code: string) => err(400, `Unknown bank code: ${code}`, "invalid_params") // A5, exact
const RATE_LIMITED: Reply = err(429, "Rate limit exceeded!", "rate_limited", "api_error", "Wait a few minutes and try the API call again") // A1, exact
/** Assumption (PROVIDERS.md silent): the 500 body; Paystack's own is unpublished. */
const INTERNAL: Reply = err(500, "Internal server error", "unknown", "api_error", "Try again later")

// ---------------------------------------------------------------- small pure helpers

const LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
const MIXED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomString = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join("")
const nowIso = () => new Date().toISOString()
const asRecord = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {})
const str = (o: Record<string, unknown>, k: string): string | undefined => {
  const v = o[k]
  if (typeof v === "number" && Number.isFinite(v)) return String(v)
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined
}
/** Kobo from an integer or a numeric string (A6: docs send both). */
const koboOf = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}
/** A6: at least 16 characters, lowercase alphanumerics, `-` and `_` only. */
export const isValidTransferReference = (ref: string) => ref.length >= 16 && ref.length <= 100 && /^[a-z0-9_-]+$/.test(ref)
/** The DVA fee: 1% capped at ₦300 (A3, NIGERIA.md §3.2). */
export const dvaFeeKobo = (amountKobo: number) => Math.min(Math.round(amountKobo / 100), 30_000)
/** NIP session id: source NIP code + yyMMddHHmmss + 12-digit sequence (NIGERIA.md §4). 110006 is the prefix of A6's reversed sample. */
const sessionId = (at: Date, seq: number) => {
  const p = (n: number) => String(n).padStart(2, "0")
  const stamp = `${p(at.getUTCFullYear() % 100)}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`
  return `110006${stamp}${String(seq).padStart(12, "0")}`
}
const parseBody = (raw: string, contentType: string | undefined): { ok: true; value: unknown } | { ok: false; value: string } => {
  if (raw.trim() === "") return { ok: true, value: {} }
  if ((contentType ?? "").includes("application/x-www-form-urlencoded")) return { ok: true, value: Object.fromEntries(new URLSearchParams(raw)) }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown }
  } catch {
    return { ok: false, value: raw }
  }
}

// ---------------------------------------------------------------- paging (A4, A5)

const encodeCursor = (label: string, id: number) => Buffer.from(`${label}:${id}`).toString("base64")
const decodeCursor = (label: string, token: string): number | undefined => {
  const m = /^([a-z]+):(\d+)$/.exec(Buffer.from(token, "base64").toString("utf8"))
  return m !== null && m[1] === label ? Number(m[2]) : undefined
}
/** `perPage` (also `per_page`, A4/Q4): default 50, at most 100. Assumption (PROVIDERS.md silent): larger values are clamped, not refused. */
const perPageOf = (q: Record<string, string>) => {
  const n = Number(q["perPage"] ?? q["per_page"])
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 100) : 50
}
/**
 * Offset paging (`page`, 1-based; meta {total, skipped, perPage, page, pageCount}) or cursor paging (`use_cursor=true`,
 * `next`/`previous`; meta {next, previous, perPage}). Cursors are opaque base64 like Paystack's ("bank:169").
 * Assumption (PROVIDERS.md silent): /bank without use_cursor answers with offset meta; an unreadable cursor is a 400.
 */
const paginate = <T extends { readonly id: number }>(all: ReadonlyArray<T>, q: Record<string, string>, label: string):
  { items: ReadonlyArray<T>; meta: unknown } | Reply => {
  const perPage = perPageOf(q)
  if (q["use_cursor"] === "true" || q["next"] !== undefined || q["previous"] !== undefined) {
    let start = 0
    let end = Math.min(perPage, all.length)
    const token = q["next"] ?? q["previous"]
    if (token !== undefined && token !== "") {
      const id = decodeCursor(label, token)
      const at = id === undefined ? -1 : all.findIndex((x) => x.id === id)
      if (at < 0) return err(400, "Invalid cursor", "invalid_params")
      if (q["next"] !== undefined) [start, end] = [at + 1, Math.min(at + 1 + perPage, all.length)]
      else [start, end] = [Math.max(0, at - perPage), at]
    }
    const items = all.slice(start, end)
    const last = items[items.length - 1]
    const first = items[0]
    return {
      items,
      meta: {
        next: last !== undefined && end < all.length ? encodeCursor(label, last.id) : null,
        previous: first !== undefined && start > 0 ? encodeCursor(label, first.id) : null,
        perPage
      }
    }
  }
  const pageN = Number(q["page"])
  const page = Number.isInteger(pageN) && pageN >= 1 ? pageN : 1
  const skipped = (page - 1) * perPage
  return { items: all.slice(skipped, skipped + perPage), meta: { total: all.length, skipped, perPage, page, pageCount: Math.ceil(all.length / perPage) } }
}
const isReply = (x: unknown): x is Reply => typeof x === "object" && x !== null && "status" in x && "body" in x

// ---------------------------------------------------------------- state

interface Customer { id: number; code: string; email: string; firstName: string | null; lastName: string | null; phone: string | null; metadata: unknown; createdAt: string; updatedAt: string }
interface Dva { id: number; bank: Bank; accountNumber: string; accountName: string; customer: Customer; createdAt: string; integ: Integration }
interface Recipient { id: number; code: string; name: string; accountNumber: string; accountName: string | null; bank: Bank; createdAt: string }
interface Transfer {
  id: number; code: string; reference: string; amount: number; currency: string; reason: string | null; status: string; outcome: Outcome
  recipient: Recipient; createdAt: string; updatedAt: string; transferredAt: string | null; session: { provider: string | null; id: string | null }
}
interface Txn { id: number; reference: string; paidAt: number; data: Record<string, unknown>; receiver: string }
interface Integration {
  id: number; secretKey: string; domain: "test" | "live"; businessName: string; webhookUrl: string | null; balanceKobo: number; transferOtp: boolean
  customers: Array<Customer>; dvas: Array<Dva>; recipients: Array<Recipient>; transfers: Array<Transfer>; txns: Array<Txn>
}
interface MutableCall { op: FakeOperation | "unknown"; method: string; path: string; query: Record<string, string>; body: unknown; secretKey: string | null; status: number }
interface MutableDelivery { event: string; reference: string; body: string; signature: string; statuses: Array<number> }

const customerShort = (c: Customer) => ({
  id: c.id, first_name: c.firstName, last_name: c.lastName, email: c.email, customer_code: c.code, phone: c.phone, metadata: c.metadata, risk_action: "default"
})
/** A2's create response shape (also `dedicated_account` in GET /customer). */
const dvaJson = (d: Dva) => ({
  bank: { name: d.bank.name, id: d.bank.id, slug: d.bank.slug }, account_name: d.accountName, account_number: d.accountNumber,
  assigned: true, currency: "NGN", metadata: null, active: true, id: d.id, created_at: d.createdAt, updated_at: d.createdAt,
  assignment: { integration: d.integ.id, assignee_id: d.customer.id, assignee_type: "Customer", expired: false, account_type: "PAY-WITH-TRANSFER-RECURRING", assigned_at: d.createdAt },
  customer: { id: d.customer.id, first_name: d.customer.firstName, last_name: d.customer.lastName, email: d.customer.email, customer_code: d.customer.code, phone: d.customer.phone, risk_action: "default" }
})
const recipientJson = (i: Integration, r: Recipient) => ({
  active: true, createdAt: r.createdAt, currency: "NGN", description: null, domain: i.domain, email: null, id: r.id, integration: i.id, metadata: null,
  name: r.name, recipient_code: r.code, type: "nuban", updatedAt: r.createdAt, is_deleted: false,
  details: { authorization_code: null, account_number: r.accountNumber, account_name: r.accountName, bank_code: r.bank.code, bank_name: r.bank.name }
})
/** A6 initiate response: `recipient` is the integer id there. */
const transferJson = (i: Integration, t: Transfer) => ({
  transfersessionid: [], transfertrials: [], domain: i.domain, amount: t.amount, currency: t.currency, reference: t.reference, source: "balance",
  source_details: null, reason: t.reason, status: t.status, failures: null, transfer_code: t.code, titan_code: null, transferred_at: t.transferredAt,
  id: t.id, integration: i.id, request: t.id + 1000, recipient: t.recipient.id, createdAt: t.createdAt, updatedAt: t.updatedAt
})
/** A6 verify: the recipient object, session and fees. Assumption (PROVIDERS.md silent): no transfer fee (fee_charged 0, as A6's test sample). */
const transferVerifyJson = (i: Integration, t: Transfer) => ({
  ...transferJson(i, t), recipient: recipientJson(i, t.recipient), session: t.session, fee_charged: 0, fees_breakdown: null,
  gateway_response: t.status === "failed" ? "Transfer failed" : t.status === "reversed" ? "Transfer reversed" : t.status === "success" ? "Approved" : null
})
/** A6 webhooks: camelCase timestamps in the success sample, snake_case in the failed/reversed samples. */
const transferEventData = (i: Integration, t: Transfer) => {
  const { createdAt, updatedAt, ...rest } = {
    amount: t.amount, currency: t.currency, domain: i.domain, failures: null, id: t.id,
    integration: { id: i.id, is_live: i.domain === "live", business_name: i.businessName }, reason: t.reason, reference: t.reference,
    source: "balance", source_details: null, status: t.status, titan_code: null, transfer_code: t.code, transferred_at: t.transferredAt,
    recipient: recipientJson(i, t.recipient), session: t.session, fee_charged: 0, gateway_response: null, createdAt: t.createdAt, updatedAt: t.updatedAt
  }
  return t.status === "success" ? { ...rest, createdAt, updatedAt } : { ...rest, created_at: createdAt, updated_at: updatedAt }
}

// ---------------------------------------------------------------- the server

export const startPaystackFake = async (opts: { port?: number; webhookRetryDelaysMs?: ReadonlyArray<number>; transferReportDelayMs?: number; dvaCap?: number } = {}): Promise<PaystackFake> => {
  // A3: live retries every 3 min x4 then hourly; compressed for tests.
  const retryDelays = opts.webhookRetryDelaysMs ?? [100, 200, 400, 800]
  const reportDelay = opts.transferReportDelayMs ?? 50
  const dvaCap = opts.dvaCap ?? 1000 // A2: default 1,000 per integration
  const integrations = new Map<string, Integration>()
  const directory = new Map<string, { accountName: string; outcome: Outcome }>()
  for (const a of PAYSTACK_FAKE_DIRECTORY) directory.set(`${a.bankCode}:${a.accountNumber}`, a)
  const dvaByAccount = new Map<string, Dva>()
  const serials = new Map<string, number>()
  const faults = new Map<FakeOperation, { fault: Fault; left: number | null }>()
  const callLog: Array<MutableCall> = []
  const deliveryLog: Array<MutableDelivery> = []
  const deliveryOwner = new Map<MutableDelivery, Integration>()
  const hung = new Set<net.Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const wakers = new Set<() => void>() // pending credit({deliver:{afterMs}}) calls, released by close()
  const outbound = new Set<http.ClientRequest>()
  let closed = false
  let nextId = 1
  const id = (base: number) => base + nextId++

  const later = (ms: number, f: () => void) => {
    const t = setTimeout(() => { timers.delete(t); if (!closed) f() }, ms)
    timers.add(t)
  }
  const integrationOf = (secretKey: string) => {
    const i = integrations.get(secretKey)
    if (i === undefined) throw new Error(`PaystackFake: no integration with key ${secretKey.slice(0, 8)}…`)
    return i
  }

  // ---------------------------------------------------------------- webhook delivery (A3)

  /** One POST of exact bytes; 0 for a network error or timeout (30 s, A3's test-mode timeout). */
  const post = (url: string, body: string, signature: string | undefined) => new Promise<{ status: number; text: string }>((resolve) => {
    if (closed) return resolve({ status: 0, text: "" })
    const target = new URL(url)
    const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "Paystack" }
    if (signature !== undefined && signature !== "") headers["x-paystack-signature"] = signature
    const req = (target.protocol === "https:" ? https : http).request(target, { method: "POST", headers, agent: false, timeout: 30_000 }, (res) => {
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
  /** One attempt to the integration's current URL, then retries on anything but 200 until the delays run out. */
  const attempt = async (d: MutableDelivery, retryIndex: number): Promise<void> => {
    const url = deliveryOwner.get(d)?.webhookUrl ?? null
    if (url === null || closed) return // Assumption: no webhook URL configured means nothing is sent.
    const { status } = await post(url, d.body, d.signature)
    if (closed) return
    d.statuses.push(status)
    const delay = retryDelays[retryIndex]
    if (status !== 200 && delay !== undefined) later(delay, () => void attempt(d, retryIndex + 1))
  }
  const makeDelivery = (i: Integration, event: string, reference: string, data: unknown, signWith?: string): MutableDelivery => {
    const body = JSON.stringify({ event, data }) // serialised once: these bytes are signed and sent
    const d = { event, reference, body, signature: signPaystack(signWith ?? i.secretKey, body), statuses: [] }
    deliveryOwner.set(d, i)
    return d
  }
  const send = (d: MutableDelivery) => { deliveryLog.push(d); return attempt(d, 0) }

  // ---------------------------------------------------------------- transfers report (A6 §8)

  const report = (i: Integration, t: Transfer, status: "success" | "failed" | "reversed") => {
    const at = new Date()
    t.status = status
    t.updatedAt = at.toISOString()
    if (status === "success") {
      t.transferredAt = at.toISOString()
      t.session = { provider: "nip", id: sessionId(at, nextId++) }
    }
    if (status === "failed") t.session = { provider: null, id: null } // Assumption: no NIP session for a transfer that never left
    if (status !== "success") i.balanceKobo += t.amount // failed / reversed: money back (A6 §7)
    void send(makeDelivery(i, `transfer.${status}`, t.reference, transferEventData(i, t)))
  }
  const scheduleReport = (i: Integration, t: Transfer) => later(reportDelay, () => {
    if (t.outcome === "failed") return report(i, t, "failed")
    report(i, t, "success")
    if (t.outcome === "reversed") later(reportDelay, () => report(i, t, "reversed"))
  })

  // ---------------------------------------------------------------- handlers

  type Ctx = { readonly i: Integration; readonly params: ReadonlyArray<string>; readonly q: Record<string, string>; readonly b: Record<string, unknown> }

  const bankList = ({ q }: Ctx): Reply => {
    const country = q["country"]?.toLowerCase()
    const currency = q["currency"]?.toUpperCase()
    const banks = (country !== undefined && country !== "nigeria") || (currency !== undefined && currency !== "NGN") ? [] : BANKS
    const page = paginate(banks, q, "bank")
    return isReply(page) ? page : ok("Banks retrieved", page.items.map(bankJson), page.meta)
  }

  const resolve = ({ q }: Ctx): Reply => {
    const account = q["account_number"]
    const code = q["bank_code"]
    if (account === undefined || account === "") return missing("Account number")
    if (code === undefined || code === "") return missing("Bank code")
    const bank = bankByCode(code)
    if (bank === undefined) return unknownBank(code)
    const name = directory.get(`${code}:${account}`)?.accountName ?? (dvaByAccount.get(account)?.bank.code === code ? dvaByAccount.get(account)?.accountName : undefined)
    if (name === undefined) {
      return err(422, "Could not resolve account name. Check parameters or try again.", "invalid_bank_code", "validation_error",
        "Ensure that you're passing the correct bank code. Use the List Banks Endpoint to get the list of all available banks and their corresponding bank codes") // A5, exact
    }
    return ok("Account number resolved", { account_number: account, account_name: name, bank_id: bank.id })
  }

  const findCustomer = (i: Integration, key: string) =>
    i.customers.find((c) => c.code === key || c.email === key.toLowerCase() || String(c.id) === key)
  const customerCreate = ({ i, b }: Ctx): Reply => {
    const email = str(b, "email")?.toLowerCase()
    if (email === undefined) return missing("Email")
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) return err(400, "Invalid Email Address Passed", "invalid_params") // Assumption: message
    // Assumption (PROVIDERS.md silent): an email already known in the integration returns that customer, unchanged.
    const c = i.customers.find((x) => x.email === email) ?? (() => {
      const at = nowIso()
      const fresh: Customer = {
        id: id(7_454_000), code: `CUS_${randomString(LOWER, 15)}`, email, firstName: str(b, "first_name") ?? null, lastName: str(b, "last_name") ?? null,
        phone: str(b, "phone") ?? null, metadata: b["metadata"] ?? null, createdAt: at, updatedAt: at
      }
      i.customers.push(fresh)
      return fresh
    })()
    return ok("Customer created", {
      email: c.email, integration: i.id, domain: i.domain, customer_code: c.code, id: c.id, identified: false, identifications: null,
      first_name: c.firstName, last_name: c.lastName, phone: c.phone, metadata: c.metadata, risk_action: "default", createdAt: c.createdAt, updatedAt: c.updatedAt
    })
  }
  const customerFetch = ({ i, params }: Ctx): Reply => {
    const c = findCustomer(i, decodeURIComponent(params[0] ?? ""))
    if (c === undefined) return bare(404, "Customer not found")
    const dvas = i.dvas.filter((d) => d.customer === c).map(dvaJson)
    return ok("Customer retrieved", {
      ...customerShort(c), integration: i.id, domain: i.domain, identified: false, identifications: null, createdAt: c.createdAt, updatedAt: c.updatedAt,
      transactions: [], subscriptions: [], authorizations: [], dedicated_account: dvas[0] ?? null, dedicated_accounts: dvas
    })
  }

  const nextAccountNumber = (bank: Bank): string => {
    for (;;) {
      const n = (serials.get(bank.code) ?? 0) + 1
      serials.set(bank.code, n)
      // Wema-style "993…" serials (A2 sample 9930000737); a NIP-style code gets a plain sequence (no check digit defined).
      const account = /^\d{3}$|^\d{5}$/.test(bank.code) ? makeNuban(bank.code, 993_000_000 + n) : String(9_930_000_000 + n)
      if (!dvaByAccount.has(account) && !directory.has(`${bank.code}:${account}`)) return account
    }
  }
  const dvaCreate = ({ i, b }: Ctx): Reply => {
    const key = str(b, "customer")
    if (key === undefined) return missing("Customer")
    const c = findCustomer(i, key)
    if (c === undefined) return bare(404, "Customer not found")
    // Assumption (PROVIDERS.md silent): without preferred_bank, test mode gets test-bank and live gets wema-bank.
    const slug = str(b, "preferred_bank") ?? (i.domain === "test" ? "test-bank" : "wema-bank")
    const bank = BANKS.find((x) => x.slug === slug)
    // Assumption (PROVIDERS.md silent, Q2): unknown provider, second DVA at the same bank and the cap are 400 validation_error.
    if (bank === undefined || !DVA_PROVIDERS.has(slug)) return err(400, `Invalid preferred bank: ${slug}`, "invalid_params")
    if (i.dvas.some((d) => d.customer === c && d.bank === bank)) return err(400, "Customer already has a dedicated account at this bank", "invalid_params")
    if (i.dvas.length >= dvaCap) return err(400, "You have reached the maximum number of dedicated accounts for this integration", "limit_exceeded", "validation_error", "Contact support to raise the limit")
    c.firstName = str(b, "first_name") ?? c.firstName
    c.lastName = str(b, "last_name") ?? c.lastName
    c.phone = str(b, "phone") ?? c.phone
    // Assumption: a customer without names is named by their email.
    const person = [c.firstName, c.lastName].filter((x) => x !== null).join(" ") || c.email
    // A2: "Product Name / Customer Name" (upper case in the sample); A1: test-bank gives "PAYSTACK/John Doe".
    const accountName = slug === "test-bank" ? `PAYSTACK/${person}` : `${i.businessName.toUpperCase()} / ${person.toUpperCase()}`
    const d: Dva = { id: id(250), bank, accountNumber: nextAccountNumber(bank), accountName, customer: c, createdAt: nowIso(), integ: i }
    i.dvas.push(d)
    dvaByAccount.set(d.accountNumber, d)
    return ok("NUBAN successfully created", dvaJson(d))
  }

  const recipientCreate = ({ i, b }: Ctx): Reply => {
    const type = str(b, "type") ?? "nuban"
    if (type !== "nuban") return err(400, `Recipient type ${type} is not supported by this fake`, "invalid_params")
    const name = str(b, "name")
    const account = str(b, "account_number")
    const code = str(b, "bank_code")
    if (name === undefined) return missing("Name")
    if (account === undefined) return missing("Account number")
    if (code === undefined) return missing("Bank code")
    const bank = bankByCode(code)
    if (bank === undefined) return unknownBank(code)
    // A6: "A duplicate account number will lead to the retrieval of the existing record". Assumption: same 201 and message.
    const existing = i.recipients.find((r) => r.accountNumber === account && r.bank === bank)
    const r = existing ?? {
      id: id(56_824_000), code: `RCP_${randomString(LOWER, 15)}`, name, accountNumber: account, bank, createdAt: nowIso(),
      // Assumption (PROVIDERS.md silent): recipients are not name-checked; account_name is the directory's name or null (A6 sample).
      accountName: directory.get(`${code}:${account}`)?.accountName ?? (dvaByAccount.get(account)?.accountName ?? null)
    }
    if (existing === undefined) i.recipients.push(r)
    return ok("Transfer recipient created successfully", recipientJson(i, r), undefined, 201)
  }

  const transferMessage = (t: Transfer) => (t.status === "otp" ? "Transfer requires OTP to continue" : "Transfer has been queued")
  const transferCreate = ({ i, b }: Ctx): Reply => {
    const reference = str(b, "reference") ?? randomString(LOWER, 20)
    if (!isValidTransferReference(reference)) {
      return err(400, "Invalid transfer reference: use at least 16 characters of lowercase letters, digits, - and _", "invalid_params") // Assumption: message
    }
    // A6 §5: the same reference is the same transfer, whatever the body. Assumption (Q5): answer 200 with it as it stands.
    const same = i.transfers.find((t) => t.reference === reference)
    if (same !== undefined) return ok(transferMessage(same), transferJson(i, same))
    if (str(b, "source") !== "balance") return str(b, "source") === undefined ? missing("Source") : err(400, "Invalid source", "invalid_params")
    const amount = koboOf(b["amount"])
    if (amount === undefined) return b["amount"] === undefined ? missing("Amount") : err(400, "Invalid amount", "invalid_params")
    const recipient = i.recipients.find((r) => r.code === str(b, "recipient"))
    if (recipient === undefined) {
      return err(400, "Recipient specified is invalid", "invalid_transfer_recipient", "validation_error",
        "Provide a valid recipient. Ensure you are passing the recipient code in the recipient param") // A6, exact
    }
    // Assumption: shape of the balance error (message per A6; type/code unpublished).
    if (amount > i.balanceKobo) return err(400, "Your balance is not enough to fulfil this request", "insufficient_balance", "api_error", "Fund your balance and try again")
    const outcome = directory.get(`${recipient.bank.code}:${recipient.accountNumber}`)?.outcome
      ?? (dvaByAccount.get(recipient.accountNumber)?.bank === recipient.bank ? "success" : "failed") // Assumption: unknown accounts fail at NIP
    const at = nowIso()
    const t: Transfer = {
      id: id(860_703_000), code: `TRF_${randomString(LOWER, 16)}`, reference, amount, currency: str(b, "currency") ?? "NGN", reason: str(b, "reason") ?? null,
      status: "pending", outcome, recipient, createdAt: at, updatedAt: at, transferredAt: null, session: { provider: null, id: null }
    }
    i.transfers.push(t)
    if (i.transferOtp) {
      t.status = "otp" // Assumption: not debited while awaiting OTP; no webhook ever (finalize is not faked).
      return ok(transferMessage(t), transferJson(i, t))
    }
    i.balanceKobo -= amount
    if (i.domain === "test" && outcome === "success") t.status = "success" // A1/A6: test transfers answer success
    scheduleReport(i, t)
    return ok(transferMessage(t), transferJson(i, t))
  }
  const transferVerify = ({ i, params }: Ctx): Reply => {
    const t = i.transfers.find((x) => x.reference === decodeURIComponent(params[0] ?? ""))
    return t === undefined ? bare(404, "Transfer not found") : ok("Transfer retrieved", transferVerifyJson(i, t))
  }

  const dateParam = (q: Record<string, string>, k: string): number | null | undefined => {
    const v = q[k]
    if (v === undefined || v === "") return null
    const ms = Date.parse(v)
    return Number.isNaN(ms) ? undefined : ms
  }
  const transactionList = ({ i, q }: Ctx): Reply => {
    const from = dateParam(q, "from")
    const to = dateParam(q, "to")
    if (from === undefined || to === undefined) return err(400, "Invalid date: use an ISO 8601 date-time", "invalid_params") // Assumption: message
    const rows = i.txns
      .filter((t) => (q["channel"] === undefined || t.data["channel"] === q["channel"]) && (q["status"] === undefined || t.data["status"] === q["status"]))
      .filter((t) => (from === null || t.paidAt >= from) && (to === null || t.paidAt <= to))
      .filter((t) => q["virtual_account_number"] === undefined || t.receiver === q["virtual_account_number"])
      .sort((a, b) => b.paidAt - a.paidAt || b.id - a.id) // newest first
    const page = paginate(rows, q, "transaction")
    return isReply(page) ? page : ok("Transactions retrieved", page.items.map((t) => t.data), page.meta)
  }
  const transactionVerify = ({ i, params }: Ctx): Reply => {
    const t = i.txns.find((x) => x.reference === decodeURIComponent(params[0] ?? ""))
    // Assumption: the 404 text (A4 gives only "NotFound").
    return t === undefined ? bare(404, "Transaction reference not found") : ok("Verification successful", t.data)
  }

  const ROUTES: ReadonlyArray<readonly [string, RegExp, FakeOperation, (c: Ctx) => Reply]> = [
    ["GET", /^\/bank$/, "bank.list", bankList],
    ["GET", /^\/bank\/resolve$/, "bank.resolve", resolve],
    ["POST", /^\/customer$/, "customer.create", customerCreate],
    ["GET", /^\/customer\/([^/]+)$/, "customer.fetch", customerFetch],
    ["POST", /^\/dedicated_account$/, "dedicated_account.create", dvaCreate],
    ["POST", /^\/transferrecipient$/, "transferrecipient.create", recipientCreate],
    ["POST", /^\/transfer$/, "transfer.create", transferCreate],
    ["GET", /^\/transfer\/verify\/([^/]+)$/, "transfer.verify", transferVerify],
    ["GET", /^\/transaction$/, "transaction.list", transactionList],
    ["GET", /^\/transaction\/verify\/([^/]+)$/, "transaction.verify", transactionVerify]
  ]

  // ---------------------------------------------------------------- credits (A3)

  const credit = async (o: CreditOptions): Promise<Delivery> => {
    if (closed) throw new Error("PaystackFake.credit: the fake is closed")
    const dva = dvaByAccount.get(o.accountNumber)
    if (dva === undefined) throw new Error(`PaystackFake.credit: no integration owns account ${o.accountNumber}`)
    if (!Number.isSafeInteger(o.amountKobo) || o.amountKobo <= 0) throw new Error("PaystackFake.credit: amountKobo must be a positive integer")
    const i = dva.integ
    const reference = o.reference ?? randomString(MIXED, 10)
    for (const x of integrations.values()) if (x.txns.some((t) => t.reference === reference)) throw new Error(`PaystackFake.credit: reference ${reference} already used; use redeliver()`)
    const paidAt = o.paidAt ?? new Date()
    const senderName = o.senderName ?? "RANDALL AKANBI HORTON"
    const senderBank = o.senderBank ?? "First City Monument Bank"
    const senderAccount = o.senderAccountNumber ?? "XXXXXX0011"
    const data = {
      id: id(302_961_000), domain: i.domain, status: "success", reference, amount: o.amountKobo, message: null, gateway_response: "Approved",
      paid_at: paidAt.toISOString(), created_at: paidAt.toISOString(), channel: "dedicated_nuban", currency: "NGN", ip_address: null, metadata: null,
      fees: dvaFeeKobo(o.amountKobo), customer: customerShort(dva.customer),
      authorization: {
        authorization_code: `AUTH_${randomString(LOWER, 10)}`, bin: `${senderAccount.slice(0, 3)}XXX`, last4: `X${senderAccount.slice(-3)}`, exp_month: "01", exp_year: "2020",
        channel: "dedicated_nuban", card_type: "transfer", bank: senderBank, country_code: "NG", brand: "Managed Account", reusable: false, signature: null,
        sender_bank: senderBank, sender_bank_account_number: senderAccount, sender_country: "NG", sender_name: senderName,
        narration: o.narration ?? `NIP: ${senderName} -${senderAccount.slice(-4)}/${reference}`, receiver_bank_account_number: dva.accountNumber, receiver_bank: dva.bank.name
      },
      plan: {}
    }
    i.txns.push({ id: data.id, reference, paidAt: paidAt.getTime(), data, receiver: dva.accountNumber })
    const d = makeDelivery(i, "charge.success", reference, data, o.signWith)
    const deliver = o.deliver ?? "now"
    if (deliver === "never") return d
    if (typeof deliver === "object") {
      await new Promise<void>((r) => {
        const wake = () => { wakers.delete(wake); r() }
        wakers.add(wake)
        later(deliver.afterMs, wake)
      })
      if (closed) return d
    }
    await send(d)
    if (deliver === "twice") await attempt(d, 0)
    return d
  }

  // ---------------------------------------------------------------- HTTP plumbing

  const reply = (res: http.ServerResponse, r: Reply, call?: MutableCall) => {
    if (call !== undefined) call.status = r.status
    res.writeHead(r.status, { "content-type": "application/json; charset=utf-8" })
    res.end(JSON.stringify(r.body))
  }
  const hang = (res: http.ServerResponse) => { if (res.socket !== null) hung.add(res.socket) }
  const takeFault = (op: FakeOperation): Fault | undefined => {
    const f = faults.get(op)
    if (f === undefined) return undefined
    if (f.left !== null && --f.left <= 0) faults.delete(op)
    return f.fault
  }

  const control = async (path: string, method: string, b: Record<string, unknown>): Promise<Reply> => {
    const view = (d: MutableDelivery) => ({ event: d.event, reference: d.reference, signature: d.signature, statuses: d.statuses })
    if (method === "POST" && path === "/_fake/credit") {
      const deliver = str(b, "deliver")
      const o: CreditOptions = {
        accountNumber: str(b, "accountNumber") ?? "", amountKobo: Number(b["amountKobo"]),
        ...(str(b, "reference") !== undefined ? { reference: str(b, "reference") as string } : {}),
        ...(str(b, "senderName") !== undefined ? { senderName: str(b, "senderName") as string } : {}),
        ...(str(b, "senderBank") !== undefined ? { senderBank: str(b, "senderBank") as string } : {}),
        ...(str(b, "narration") !== undefined ? { narration: str(b, "narration") as string } : {}),
        ...(deliver === "now" || deliver === "never" || deliver === "twice" ? { deliver } : {})
      }
      return { status: 200, body: view((await credit(o)) as MutableDelivery) }
    }
    if (method === "POST" && path === "/_fake/redeliver") {
      const d = [...deliveryLog].reverse().find((x) => x.reference === str(b, "reference"))
      return d === undefined ? { status: 404, body: { error: "no such delivery" } } : { status: 200, body: { status: await api.redeliver(d) } }
    }
    if (method === "POST" && path === "/_fake/fault") {
      api.fault(str(b, "op") as FakeOperation, str(b, "fault") as Fault, ...(b["times"] === undefined ? [] : [Number(b["times"])]))
      return { status: 200, body: { ok: true } }
    }
    if (method === "POST" && path === "/_fake/clear-faults") return (api.clearFaults(), { status: 200, body: { ok: true } })
    if (method === "GET" && path === "/_fake/state") {
      return {
        status: 200,
        body: {
          integrations: [...integrations.values()].map((i) => ({ keyPrefix: i.secretKey.slice(0, 12), domain: i.domain, webhookUrl: i.webhookUrl, balanceKobo: i.balanceKobo })),
          dedicatedAccounts: api.dedicatedAccounts(), transfers: api.transfers(), deliveries: deliveryLog.map(view)
        }
      }
    }
    return { status: 404, body: { error: "unknown control route" } }
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const url = new URL(req.url ?? "/", "http://fake")
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname
    const method = req.method ?? "GET"
    const parsed = parseBody(Buffer.concat(chunks).toString("utf8"), req.headers["content-type"])
    if (path.startsWith("/_fake/")) {
      try {
        return reply(res, await control(path, method, asRecord(parsed.value)))
      } catch (e) {
        return reply(res, { status: 400, body: { error: e instanceof Error ? e.message : String(e) } })
      }
    }
    const route = ROUTES.map(([m, re, op, h]) => ({ m, op, h, match: re.exec(path) })).find((r) => r.m === method && r.match !== null)
    const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")
    const call: MutableCall = {
      op: route?.op ?? "unknown", method, path, query: Object.fromEntries(url.searchParams), body: parsed.value, secretKey: auth?.[1] ?? null, status: 0
    }
    callLog.push(call)
    const i = call.secretKey === null ? undefined : integrations.get(call.secretKey)
    if (i === undefined) return reply(res, bare(401, "Invalid key"), call) // A1
    // Assumption (PROVIDERS.md silent): an unknown route is the generic 404 of A2 / A8 §2.
    if (route === undefined || route.match === null) return reply(res, bare(404, "Entity not found"), call)
    const fault = takeFault(route.op)
    if (fault === "5xx") return reply(res, INTERNAL, call)
    if (fault === "429") return reply(res, RATE_LIMITED, call)
    if (fault === "hang") return hang(res)
    // Assumption (PROVIDERS.md silent): a body that is not JSON (nor a form) is a 400.
    const r = parsed.ok ? route.h({ i, params: route.match.slice(1), q: call.query, b: asRecord(parsed.value) }) : err(400, "Invalid JSON body", "invalid_params")
    if (fault === "acceptThenHang") return hang(res)
    if (fault === "acceptThen5xx") return reply(res, INTERNAL, call)
    return reply(res, r, call)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => { if (!res.headersSent) reply(res, { status: 500, body: { status: false, message: String(e) } }) })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve())
  })
  const address = server.address() as net.AddressInfo

  const api: PaystackFake = {
    url: `http://127.0.0.1:${address.port}`,
    addIntegration: (o) => {
      const m = /^sk_(test|live)_\S+$/.exec(o.secretKey)
      if (m === null) throw new Error("PaystackFake.addIntegration: secret key must be sk_test_… or sk_live_…") // A1
      if (integrations.has(o.secretKey)) throw new Error("PaystackFake.addIntegration: key already registered")
      integrations.set(o.secretKey, {
        id: id(100_043), secretKey: o.secretKey, domain: m[1] as "test" | "live", businessName: o.businessName ?? "Fake Business",
        webhookUrl: o.webhookUrl ?? null, balanceKobo: o.balanceKobo ?? 100_000_000, // Assumption: ₦1,000,000 test balance by default
        transferOtp: o.transferOtp ?? false, customers: [], dvas: [], recipients: [], transfers: [], txns: []
      })
    },
    setWebhookUrl: (key, url) => { integrationOf(key).webhookUrl = url },
    setTransferOtp: (key, on) => { integrationOf(key).transferOtp = on },
    addAccount: (a) => { directory.set(`${a.bankCode}:${a.accountNumber}`, { accountName: a.accountName, outcome: a.outcome ?? "success" }) },
    credit,
    redeliver: async (d) => {
      const owner = deliveryOwner.get(d as MutableDelivery)
      if (owner === undefined) throw new Error("PaystackFake.redeliver: not a delivery of this fake")
      if (owner.webhookUrl === null) throw new Error("PaystackFake.redeliver: the integration has no webhook URL")
      const { status } = await post(owner.webhookUrl, d.body, d.signature)
      ;(d as MutableDelivery).statuses.push(status)
      return status
    },
    sendRaw: (key, body, signature) => {
      const i = integrationOf(key)
      if (i.webhookUrl === null) return Promise.reject(new Error("PaystackFake.sendRaw: the integration has no webhook URL"))
      // undefined: signed correctly with the integration's key; "": no signature header; anything else: sent as given.
      return post(i.webhookUrl, body, signature ?? signPaystack(key, body))
    },
    fault: (op, f, times) => {
      if (times !== undefined && times <= 0) faults.delete(op)
      else faults.set(op, { fault: f, left: times ?? null })
    },
    clearFaults: () => faults.clear(),
    calls: (op) => callLog.filter((c) => op === undefined || c.op === op).map((c) => ({ ...c })),
    dedicatedAccounts: (key) =>
      [...integrations.values()].filter((i) => key === undefined || i.secretKey === key).flatMap((i) => i.dvas)
        .map((d) => ({ id: d.id, accountNumber: d.accountNumber, customerCode: d.customer.code, email: d.customer.email, bankSlug: d.bank.slug })),
    transfers: (key) =>
      [...integrations.values()].filter((i) => key === undefined || i.secretKey === key).flatMap((i) => i.transfers)
        .map((t) => ({ reference: t.reference, amountKobo: t.amount, status: t.status, accountNumber: t.recipient.accountNumber, bankCode: t.recipient.bank.code })),
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
