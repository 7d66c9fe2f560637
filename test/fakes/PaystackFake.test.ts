import { createHmac } from "node:crypto"
import http from "node:http"
import type net from "node:net"
import { describe, expect, it } from "vitest"
import { isValidNuban } from "../../src/domain/Nuban.js"
import { PAYSTACK_FAKE_DIRECTORY, signPaystack, startPaystackFake, type PaystackFake } from "./PaystackFake.js"
import { waitForPromise } from "../support/Wait.js"

const TEST_KEY = "sk_test_0123456789abcdef0123456789abcdef"
const LIVE_KEY = "sk_live_fedcba9876543210fedcba9876543210"

// ---------------------------------------------------------------- helpers

interface Received { readonly body: string; readonly signature: string | undefined; readonly contentType: string | undefined }

/** A tiny webhook receiver; `answer` picks the status for the n-th request (0-based). */
const startReceiver = async (answer: (n: number) => number = () => 200) => {
  const received: Array<Received> = []
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const sig = req.headers["x-paystack-signature"]
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: typeof sig === "string" ? sig : undefined, contentType: req.headers["content-type"] })
      res.writeHead(answer(received.length - 1)).end("ok")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const port = (server.address() as net.AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/webhooks/paystack`,
    received,
    events: () => received.map((r) => JSON.parse(r.body) as { event: string; data: Record<string, any> }),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) })
  }
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>

const hmac = (key: string, body: string) => createHmac("sha512", key).update(body).digest("hex")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A fake with one test and one live integration, both pointing at a fresh receiver; everything closed afterwards. */
const withFake = async (
  body: (ctx: { fake: PaystackFake; rx: Receiver; api: (path: string, init?: { method?: string; body?: unknown; key?: string | null; form?: boolean }) => Promise<{ status: number; json: any }> }) => Promise<void>,
  opts: { answer?: (n: number) => number; dvaCap?: number; balanceKobo?: number; transferReportDelayMs?: number } = {}
) => {
  const rx = await startReceiver(opts.answer)
  const fake = await startPaystackFake({ webhookRetryDelaysMs: [30, 30, 30, 30], transferReportDelayMs: opts.transferReportDelayMs ?? 20, ...(opts.dvaCap === undefined ? {} : { dvaCap: opts.dvaCap }) })
  fake.addIntegration({ secretKey: TEST_KEY, webhookUrl: rx.url, businessName: "Karokart", ...(opts.balanceKobo === undefined ? {} : { balanceKobo: opts.balanceKobo }) })
  fake.addIntegration({ secretKey: LIVE_KEY, webhookUrl: rx.url, businessName: "Karokart" })
  const api = async (path: string, init: { method?: string; body?: unknown; key?: string | null; form?: boolean } = {}) => {
    const headers: Record<string, string> = {}
    const key = init.key === undefined ? TEST_KEY : init.key
    if (key !== null) headers["authorization"] = `Bearer ${key}`
    let payload: string | undefined
    if (init.body !== undefined) {
      headers["content-type"] = init.form === true ? "application/x-www-form-urlencoded" : "application/json"
      payload = init.form === true ? new URLSearchParams(init.body as Record<string, string>).toString() : JSON.stringify(init.body)
    }
    const res = await fetch(`${fake.url}${path}`, { method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, ...(payload === undefined ? {} : { body: payload }) })
    return { status: res.status, json: (await res.json()) as any }
  }
  try {
    await body({ fake, rx, api })
  } finally {
    await fake.close()
    await rx.close()
  }
}

const newDva = async (api: Parameters<Parameters<typeof withFake>[0]>[0]["api"], email = "rhoda@example.com", bank = "test-bank", key?: string) => {
  const k = key === undefined ? {} : { key }
  const c = await api("/customer", { body: { email, first_name: "Rhoda", last_name: "Church", phone: "+2349053267565" }, ...k })
  const d = await api("/dedicated_account", { body: { customer: c.json.data.customer_code, preferred_bank: bank }, ...k })
  expect(d.status).toBe(200)
  return { customerCode: c.json.data.customer_code as string, accountNumber: d.json.data.account_number as string, dva: d.json.data }
}
const balanceOf = async (fake: PaystackFake, domain: "test" | "live" = "test") => {
  const state = (await (await fetch(`${fake.url}/_fake/state`)).json()) as { integrations: Array<{ domain: string; balanceKobo: number }> }
  return state.integrations.find((i) => i.domain === domain)!.balanceKobo
}
const recipient = async (api: Parameters<Parameters<typeof withFake>[0]>[0]["api"], accountNumber: string, bankCode: string, key?: string) => {
  const r = await api("/transferrecipient", { body: { type: "nuban", name: "Someone", account_number: accountNumber, bank_code: bankCode, currency: "NGN" }, ...(key === undefined ? {} : { key }) })
  return r.json.data.recipient_code as string
}

// ---------------------------------------------------------------- tests

describe("PaystackFake: auth and envelopes (A1, A8 §1-2)", () => {
  it("answers 401 Invalid key without or with an unknown key, and records the calls", () =>
    withFake(async ({ fake, api }) => {
      expect(await api("/bank", { key: null })).toEqual({ status: 401, json: { status: false, message: "Invalid key" } })
      expect(await api("/bank", { key: "sk_test_unknown" })).toEqual({ status: 401, json: { status: false, message: "Invalid key" } })
      expect(fake.calls("bank.list").map((c) => [c.secretKey, c.status])).toEqual([[null, 401], ["sk_test_unknown", 401]])
      expect(await api("/nope")).toEqual({ status: 404, json: { status: false, message: "Entity not found" } })
      expect(fake.calls().at(-1)?.op).toBe("unknown")
    }))

  it("refuses keys that are neither sk_test_ nor sk_live_", async () => {
    const fake = await startPaystackFake()
    try {
      expect(() => fake.addIntegration({ secretKey: "pk_test_abc" })).toThrow()
    } finally {
      await fake.close()
    }
  })
})

describe("PaystackFake: banks and name enquiry (A5)", () => {
  it("pages the bank list by offset with perPage or per_page", () =>
    withFake(async ({ api }) => {
      const p1 = await api("/bank?country=nigeria&perPage=3")
      expect(p1.status).toBe(200)
      expect(p1.json.message).toBe("Banks retrieved")
      expect(p1.json.data).toHaveLength(3)
      expect(Object.keys(p1.json.data[0]).sort()).toEqual(
        ["name", "slug", "code", "longcode", "gateway", "pay_with_bank", "supports_transfer", "available_for_direct_debit", "active", "is_deleted", "country", "currency", "type", "id", "createdAt", "updatedAt"].sort()
      )
      expect(p1.json.meta).toEqual({ total: 10, skipped: 0, perPage: 3, page: 1, pageCount: 4 })
      const all: Array<any> = []
      for (let page = 1; page <= 4; page++) all.push(...(await api(`/bank?currency=NGN&per_page=3&page=${page}`)).json.data)
      expect(all.map((b) => b.slug)).toEqual((await api("/bank?country=nigeria")).json.data.map((b: any) => b.slug))
      expect(all.map((b) => `${b.code} ${b.slug}`)).toEqual(expect.arrayContaining([
        "044 access-bank", "035 wema-bank", "058 guaranty-trust-bank", "057 zenith-bank", "033 united-bank-for-africa",
        "011 first-bank-of-nigeria", "50515 moniepoint-mfb-ng", "100039 titan-paystack", "001 test-bank"
      ]))
      expect((await api("/bank?perPage=500")).json.meta.perPage).toBe(100)
      expect((await api("/bank?country=ghana")).json.data).toEqual([])
    }))

  it("pages the bank list by cursor, forwards and back", () =>
    withFake(async ({ api }) => {
      const seen: Array<string> = []
      let res = await api("/bank?country=nigeria&use_cursor=true&perPage=3")
      expect(res.json.meta.previous).toBeNull()
      const pages = [res]
      seen.push(...res.json.data.map((b: any) => b.slug))
      while (res.json.meta.next !== null) {
        res = await api(`/bank?country=nigeria&use_cursor=true&perPage=3&next=${encodeURIComponent(res.json.meta.next)}`)
        expect(res.json.meta.perPage).toBe(3)
        pages.push(res)
        seen.push(...res.json.data.map((b: any) => b.slug))
      }
      expect(pages).toHaveLength(4)
      expect(new Set(seen).size).toBe(10)
      const back = await api(`/bank?use_cursor=true&perPage=3&previous=${encodeURIComponent(pages[2]!.json.meta.previous)}`)
      expect(back.json.data).toEqual(pages[1]!.json.data)
      expect((await api("/bank?use_cursor=true&next=garbage")).status).toBe(400)
    }))

  it("resolves directory accounts and DVAs, 422 for a known bank without the account, 400 for an unknown bank", () =>
    withFake(async ({ api }) => {
      for (const row of PAYSTACK_FAKE_DIRECTORY) expect(isValidNuban(row.accountNumber, row.bankCode)).toBe(true)
      expect(await api("/bank/resolve?account_number=0123456785&bank_code=058")).toEqual({
        status: 200, json: { status: true, message: "Account number resolved", data: { account_number: "0123456785", account_name: "ADAEZE OKAFOR", bank_id: 9 } }
      })
      expect(await api("/bank/resolve?account_number=0123456785&bank_code=044")).toEqual({
        status: 422,
        json: {
          status: false, message: "Could not resolve account name. Check parameters or try again.",
          meta: { nextStep: "Ensure that you're passing the correct bank code. Use the List Banks Endpoint to get the list of all available banks and their corresponding bank codes" },
          type: "validation_error", code: "invalid_bank_code"
        }
      })
      expect(await api("/bank/resolve?account_number=0123456785&bank_code=059")).toEqual({
        status: 400,
        json: { status: false, message: "Unknown bank code: 059", meta: { nextStep: "Ensure that the value(s) you're passing are valid." }, type: "validation_error", code: "invalid_params" }
      })
      const { accountNumber, dva } = await newDva(api)
      const r = await api(`/bank/resolve?account_number=${accountNumber}&bank_code=001`)
      expect(r.json.data).toEqual({ account_number: accountNumber, account_name: dva.account_name, bank_id: dva.bank.id })
    }))
})

describe("PaystackFake: customers and dedicated accounts (A2)", () => {
  it("creates a customer once per email (JSON or form) and fetches by code or email", () =>
    withFake(async ({ api }) => {
      const a = await api("/customer", { body: { email: "Ada@Example.com", first_name: "Ada" } })
      expect(a.status).toBe(200)
      expect(a.json.message).toBe("Customer created")
      expect(a.json.data).toMatchObject({ email: "ada@example.com", domain: "test", identified: false, identifications: null })
      expect(a.json.data.customer_code).toMatch(/^CUS_[a-z0-9]{15}$/)
      const b = await api("/customer", { body: { email: "ada@example.com" }, form: true })
      expect(b.json.data.customer_code).toBe(a.json.data.customer_code)
      const byCode = await api(`/customer/${a.json.data.customer_code}`)
      expect(byCode.json).toMatchObject({ status: true, message: "Customer retrieved", data: { email: "ada@example.com", dedicated_account: null, dedicated_accounts: [] } })
      expect((await api("/customer/ada%40example.com")).json.data.id).toBe(a.json.data.id)
      expect(await api("/customer/CUS_nobody")).toEqual({ status: 404, json: { status: false, message: "Customer not found" } })
      expect((await api("/customer/x@example.com", { key: LIVE_KEY })).status).toBe(404)
    }))

  it("creates a DVA synchronously with a valid NUBAN and refuses a second one at the same bank", () =>
    withFake(async ({ fake, api }) => {
      const { customerCode, accountNumber, dva } = await newDva(api, "rhoda@example.com", "wema-bank")
      expect(isValidNuban(accountNumber, "035")).toBe(true)
      expect(dva).toMatchObject({
        bank: { name: "Wema Bank", id: 20, slug: "wema-bank" }, account_name: "KAROKART / RHODA CHURCH", assigned: true, currency: "NGN", active: true,
        assignment: { assignee_type: "Customer", expired: false, account_type: "PAY-WITH-TRANSFER-RECURRING" },
        customer: { customer_code: customerCode, email: "rhoda@example.com", first_name: "Rhoda", last_name: "Church" }
      })
      expect(Object.keys(dva)).toEqual(expect.arrayContaining(["id", "created_at", "updated_at", "metadata"]))
      const again = await api("/dedicated_account", { body: { customer: customerCode, preferred_bank: "wema-bank" } })
      expect(again.status).toBe(400)
      expect(again.json).toMatchObject({ status: false, type: "validation_error", message: "Customer already has a dedicated account at this bank" })
      const test = await api("/dedicated_account", { body: { customer: dva.customer.id, preferred_bank: "test-bank" } })
      expect(test.json.data.account_name).toBe("PAYSTACK/Rhoda Church")
      expect(isValidNuban(test.json.data.account_number, "001")).toBe(true)
      expect((await api("/dedicated_account", { body: { customer: customerCode, preferred_bank: "kuda-bank" } })).json.type).toBe("validation_error")
      expect((await api("/dedicated_account", { body: { customer: "CUS_nobody", preferred_bank: "wema-bank" } })).json).toEqual({ status: false, message: "Customer not found" })
      const fetched = await api(`/customer/${customerCode}`)
      expect(fetched.json.data.dedicated_account).toEqual(dva)
      expect(fetched.json.data.dedicated_accounts).toHaveLength(2)
      expect(fake.dedicatedAccounts(TEST_KEY).map((d) => d.bankSlug)).toEqual(["wema-bank", "test-bank"])
      expect(fake.dedicatedAccounts(LIVE_KEY)).toEqual([])
    }))

  it("stops at the DVA cap", () =>
    withFake(async ({ api }) => {
      await newDva(api, "a@example.com")
      const c = await api("/customer", { body: { email: "b@example.com", first_name: "B", last_name: "C" } })
      const refused = await api("/dedicated_account", { body: { customer: c.json.data.customer_code, preferred_bank: "test-bank" } })
      expect(refused.status).toBe(400)
      expect(refused.json.type).toBe("validation_error")
    }, { dvaCap: 1 }))
})

describe("PaystackFake: transfers (A6)", () => {
  it("dedupes recipients by account and refuses unknown bank codes", () =>
    withFake(async ({ api }) => {
      const body = { type: "nuban", name: "Adaeze", account_number: "0123456785", bank_code: "058", currency: "NGN" }
      const a = await api("/transferrecipient", { body })
      expect(a.status).toBe(201)
      expect(a.json.message).toBe("Transfer recipient created successfully")
      expect(a.json.data.recipient_code).toMatch(/^RCP_/)
      expect(a.json.data.details).toEqual({ authorization_code: null, account_number: "0123456785", account_name: "ADAEZE OKAFOR", bank_code: "058", bank_name: "Guaranty Trust Bank" })
      expect((await api("/transferrecipient", { body: { ...body, name: "Other" } })).json.data.recipient_code).toBe(a.json.data.recipient_code)
      const bad = await api("/transferrecipient", { body: { ...body, bank_code: "999" } })
      expect(bad.status).toBe(400)
      expect(bad.json.code).toBe("invalid_params")
    }))

  it("validates references, refuses unknown recipients (exact body) and a low balance without debiting", () =>
    withFake(async ({ fake, api }) => {
      const rcp = await recipient(api, "0123456785", "058")
      for (const reference of ["short-ref", "UPPER-case-reference-123", "has spaces in the reference"]) {
        const r = await api("/transfer", { body: { source: "balance", amount: 1000, recipient: rcp, reference } })
        expect(r.status).toBe(400)
        expect(r.json.type).toBe("validation_error")
      }
      expect(await api("/transfer", { body: { source: "balance", amount: 1000, recipient: "RCP_unknown", reference: "ref_unknown_recipient_1" } })).toEqual({
        status: 400,
        json: {
          status: false, message: "Recipient specified is invalid",
          meta: { nextStep: "Provide a valid recipient. Ensure you are passing the recipient code in the recipient param" },
          type: "validation_error", code: "invalid_transfer_recipient"
        }
      })
      const low = await api("/transfer", { body: { source: "balance", amount: 5_000, recipient: rcp, reference: "ref-too-much-money-01" } })
      expect(low.status).toBe(400)
      expect(low.json.message).toBe("Your balance is not enough to fulfil this request")
      expect(await balanceOf(fake)).toBe(4_000)
      expect(fake.transfers()).toEqual([])
    }, { balanceKobo: 4_000 }))

  it("returns the existing transfer for a reused reference and debits once; test mode answers success then sends transfer.success", () =>
    withFake(async ({ fake, rx, api }) => {
      const rcp = await recipient(api, "0123456785", "058")
      const before = await balanceOf(fake)
      const first = await api("/transfer", { body: { source: "balance", amount: "37800", recipient: rcp, reference: "payout_0001_abcdefgh", reason: "Payout" } })
      expect(first.status).toBe(200)
      expect(first.json).toMatchObject({ status: true, message: "Transfer has been queued", data: { status: "success", amount: 37800, domain: "test", reference: "payout_0001_abcdefgh" } })
      expect(first.json.data.transfer_code).toMatch(/^TRF_/)
      const second = await api("/transfer", { body: { source: "balance", amount: 99, recipient: "RCP_whatever", reference: "payout_0001_abcdefgh" } })
      expect(second.status).toBe(200)
      expect(second.json.data.transfer_code).toBe(first.json.data.transfer_code)
      expect(second.json.data.amount).toBe(37800)
      expect(await balanceOf(fake)).toBe(before - 37800)
      await waitForPromise("the receiver to get 1 webhook", () => rx.received.length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
      const [event] = rx.events()
      expect(event!.event).toBe("transfer.success")
      expect(rx.received[0]!.signature).toBe(hmac(TEST_KEY, rx.received[0]!.body))
      expect(event!.data).toMatchObject({ status: "success", reference: "payout_0001_abcdefgh", recipient: { details: { account_number: "0123456785", bank_code: "058" } } })
      expect(event!.data["createdAt"]).toBeDefined()
      expect(event!.data["session"]).toMatchObject({ provider: "nip" })
      expect(event!.data["session"].id).toMatch(/^\d{30}$/)
      const verify = await api("/transfer/verify/payout_0001_abcdefgh")
      expect(verify.json).toMatchObject({ status: true, message: "Transfer retrieved", data: { status: "success", fee_charged: 0, recipient: { recipient_code: rcp } } })
      expect(await api("/transfer/verify/payout_unknown_reference")).toEqual({ status: 404, json: { status: false, message: "Transfer not found" } })
      expect(fake.transfers(TEST_KEY)).toEqual([{ reference: "payout_0001_abcdefgh", amountKobo: 37800, status: "success", accountNumber: "0123456785", bankCode: "058" }])
    }))

  it("live mode answers pending, then reports success", () =>
    withFake(async ({ rx, api }) => {
      const rcp = await recipient(api, "2000000015", "057", LIVE_KEY)
      const r = await api("/transfer", { key: LIVE_KEY, body: { source: "balance", amount: 5000, recipient: rcp, reference: "live-payout-000000001" } })
      expect(r.json.data).toMatchObject({ status: "pending", domain: "live" })
      await waitForPromise("the receiver to get 1 webhook", () => rx.received.length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
      expect(rx.received[0]!.signature).toBe(hmac(LIVE_KEY, rx.received[0]!.body))
      expect(rx.events()[0]!.data).toMatchObject({ status: "success", domain: "live", integration: { is_live: true } })
      expect((await api("/transfer/verify/live-payout-000000001", { key: LIVE_KEY })).json.data.status).toBe("success")
    }))

  it("fails and reverses with signed webhooks, giving the money back", () =>
    withFake(async ({ fake, rx, api }) => {
      const before = await balanceOf(fake)
      const failRcp = await recipient(api, "9999999907", "058")
      const revRcp = await recipient(api, "9999999913", "044")
      const f = await api("/transfer", { body: { source: "balance", amount: 1000, recipient: failRcp, reference: "payout-will-fail-0001" } })
      expect(f.json.data.status).toBe("pending")
      const r = await api("/transfer", { body: { source: "balance", amount: 2000, recipient: revRcp, reference: "payout-will-reverse-01" } })
      expect(r.json.data.status).toBe("pending")
      expect(await balanceOf(fake)).toBe(before - 3000)
      await waitForPromise("the receiver to get 3 webhooks", () => rx.received.length, { until: (n) => n === 3, timeoutMs: 10_000, intervalMs: 10 })
      for (const x of rx.received) expect(x.signature).toBe(hmac(TEST_KEY, x.body))
      const events = rx.events().map((e) => `${e.event} ${e.data["reference"]}`)
      expect(events).toEqual(expect.arrayContaining(["transfer.failed payout-will-fail-0001", "transfer.success payout-will-reverse-01", "transfer.reversed payout-will-reverse-01"]))
      expect(events.indexOf("transfer.success payout-will-reverse-01")).toBeLessThan(events.indexOf("transfer.reversed payout-will-reverse-01"))
      const failed = rx.events().find((e) => e.event === "transfer.failed")!.data
      expect(failed).toMatchObject({ status: "failed", session: { provider: null, id: null } })
      expect(failed["created_at"]).toBeDefined()
      expect(failed["createdAt"]).toBeUndefined()
      const reversed = rx.events().find((e) => e.event === "transfer.reversed")!.data
      expect(reversed["session"].id).toMatch(/^\d{30}$/)
      expect(reversed["updated_at"]).toBeDefined()
      expect(await balanceOf(fake)).toBe(before)
      expect((await api("/transfer/verify/payout-will-reverse-01")).json.data.status).toBe("reversed")
      expect((await api("/transfer/verify/payout-will-fail-0001")).json.data.status).toBe("failed")
      // The reports come 500 ms after each transfer, so both debits are seen before the failure gives one back (at 20 ms
      // a loaded machine saw the failed transfer's refund land between the two requests).
    }, { transferReportDelayMs: 500 }))

  it("with OTP on, answers otp and never reports", () =>
    withFake(async ({ fake, rx, api }) => {
      fake.setTransferOtp(TEST_KEY, true)
      const rcp = await recipient(api, "0123456785", "058")
      const r = await api("/transfer", { body: { source: "balance", amount: 1000, recipient: rcp, reference: "payout-needs-otp-0001" } })
      expect(r.json).toMatchObject({ status: true, message: "Transfer requires OTP to continue", data: { status: "otp" } })
      await sleep(150)
      expect(rx.received).toEqual([])
      expect(fake.transfers()[0]!.status).toBe("otp")
    }))
})

describe("PaystackFake: credits (A3) and the transaction list (A4)", () => {
  it("signs charge.success over the exact bytes it sends", () =>
    withFake(async ({ fake, rx, api }) => {
      const { accountNumber, customerCode } = await newDva(api)
      const d = await fake.credit({ accountNumber, amountKobo: 5_000_000, reference: "qTPrJoy9Bx", senderName: "JOHN DOE" })
      expect(d.statuses).toEqual([200])
      expect(rx.received).toHaveLength(1)
      const got = rx.received[0]!
      expect(got.body).toBe(d.body)
      expect(got.contentType).toBe("application/json")
      expect(got.signature).toBe(hmac(TEST_KEY, got.body))
      expect(d.signature).toBe(signPaystack(TEST_KEY, d.body))
      const { event, data } = rx.events()[0]!
      expect(event).toBe("charge.success")
      expect(data).toMatchObject({
        domain: "test", status: "success", reference: "qTPrJoy9Bx", amount: 5_000_000, channel: "dedicated_nuban", currency: "NGN", fees: 30_000,
        customer: { customer_code: customerCode },
        authorization: { channel: "dedicated_nuban", receiver_bank_account_number: accountNumber, receiver_bank: "Test Bank", sender_name: "JOHN DOE", sender_bank: "First City Monument Bank", sender_bank_account_number: "XXXXXX0011" }
      })
      expect(Object.keys(data)).toEqual(["id", "domain", "status", "reference", "amount", "message", "gateway_response", "paid_at", "created_at", "channel", "currency", "ip_address", "metadata", "fees", "customer", "authorization", "plan"])
      const verify = await api("/transaction/verify/qTPrJoy9Bx")
      expect(verify.json).toEqual({ status: true, message: "Verification successful", data })
      expect((await api("/transaction/verify/nope")).status).toBe(404)
      const small = await fake.credit({ accountNumber, amountKobo: 10_000 })
      expect(JSON.parse(small.body).data.fees).toBe(100)
      expect(small.reference).toMatch(/^[A-Za-z0-9]{10}$/)
      await expect(fake.credit({ accountNumber: "0000000000", amountKobo: 1 })).rejects.toThrow()
    }))

  it("delivers twice, never, late, and forged", () =>
    withFake(async ({ fake, rx, api }) => {
      const { accountNumber } = await newDva(api)
      const twice = await fake.credit({ accountNumber, amountKobo: 1000, deliver: "twice" })
      expect(twice.statuses).toEqual([200, 200])
      expect(rx.received.map((r) => r.body)).toEqual([twice.body, twice.body])
      const never = await fake.credit({ accountNumber, amountKobo: 2000, deliver: "never" })
      expect(never.signature).toBe(hmac(TEST_KEY, never.body))
      expect(rx.received).toHaveLength(2)
      expect((await api(`/transaction/verify/${never.reference}`)).status).toBe(200)
      const started = Date.now()
      const late = fake.credit({ accountNumber, amountKobo: 3000, deliver: { afterMs: 150 } })
      await sleep(50)
      expect(rx.received).toHaveLength(2)
      expect((await late).statuses).toEqual([200])
      expect(Date.now() - started).toBeGreaterThanOrEqual(140)
      expect(rx.received).toHaveLength(3)
      expect(await fake.redeliver(never)).toBe(200)
      expect(rx.received[3]!.body).toBe(never.body)
      const forged = await fake.credit({ accountNumber, amountKobo: 4000, signWith: "sk_test_attacker" })
      expect(rx.received[4]!.signature).toBe(hmac("sk_test_attacker", forged.body))
      expect(rx.received[4]!.signature).not.toBe(hmac(TEST_KEY, forged.body))
      expect(await fake.sendRaw(TEST_KEY, '{"event":"odd"}', "deadbeef")).toEqual({ status: 200, text: "ok" })
      expect(rx.received[5]).toMatchObject({ body: '{"event":"odd"}', signature: "deadbeef" })
      await fake.sendRaw(TEST_KEY, '{"event":"signed"}')
      expect(rx.received[6]!.signature).toBe(hmac(TEST_KEY, '{"event":"signed"}'))
      await fake.sendRaw(TEST_KEY, "{}", "")
      expect(rx.received[7]!.signature).toBeUndefined()
      expect(fake.deliveries().map((d) => d.reference)).toEqual([twice.reference, (await late).reference, forged.reference])
    }))

  it("retries a non-200 answer until 200, and gives up when the delays run out", () =>
    withFake(async ({ fake, rx, api }) => {
      const { accountNumber } = await newDva(api)
      const d = await fake.credit({ accountNumber, amountKobo: 1000 })
      expect(d.statuses).toEqual([500])
      await waitForPromise("the deposit's 3 webhook attempts", () => d.statuses.length, { until: (n) => n === 3, timeoutMs: 3_000, intervalMs: 10 })
      expect(d.statuses).toEqual([500, 503, 200])
      expect(new Set(rx.received.map((r) => r.body)).size).toBe(1)
      fake.setWebhookUrl(TEST_KEY, "http://127.0.0.1:1/unreachable")
      const lost = await fake.credit({ accountNumber, amountKobo: 2000 })
      await waitForPromise("the lost deposit's 5 webhook attempts", () => lost.statuses.length, { until: (n) => n === 5, timeoutMs: 3_000, intervalMs: 10 })
      await sleep(100)
      expect(lost.statuses).toEqual([0, 0, 0, 0, 0])
    }, { answer: (n) => (n === 0 ? 500 : n === 1 ? 503 : 200) }))

  it("lists credits with channel/status/from/to filters, offset and cursor paging", () =>
    withFake(async ({ fake, api }) => {
      const { accountNumber } = await newDva(api)
      const base = Date.parse("2026-03-01T10:00:00.000Z")
      for (let n = 0; n < 5; n++) await fake.credit({ accountNumber, amountKobo: 1000 * (n + 1), paidAt: new Date(base + n * 60_000), reference: `REF00000${n}`, deliver: "never" })
      const all = await api("/transaction?channel=dedicated_nuban")
      expect(all.json.message).toBe("Transactions retrieved")
      expect(all.json.data.map((t: any) => t.reference)).toEqual(["REF000004", "REF000003", "REF000002", "REF000001", "REF000000"])
      expect(all.json.data[0].authorization.receiver_bank_account_number).toBe(accountNumber)
      expect((await api("/transaction?channel=card")).json.data).toEqual([])
      expect((await api("/transaction?status=failed")).json.data).toEqual([])
      const window = await api(`/transaction?from=${new Date(base + 60_000).toISOString()}&to=${new Date(base + 180_000).toISOString()}`)
      expect(window.json.data.map((t: any) => t.reference)).toEqual(["REF000003", "REF000002", "REF000001"])
      const p2 = await api("/transaction?perPage=2&page=2")
      expect(p2.json.meta).toEqual({ total: 5, skipped: 2, perPage: 2, page: 2, pageCount: 3 })
      expect(p2.json.data.map((t: any) => t.reference)).toEqual(["REF000002", "REF000001"])
      expect((await api("/transaction?per_page=4")).json.data).toHaveLength(4)
      const refs: Array<string> = []
      let next: string | null = null
      do {
        const res: { json: any } = await api(`/transaction?use_cursor=true&perPage=2${next === null ? "" : `&next=${encodeURIComponent(next)}`}`)
        refs.push(...res.json.data.map((t: any) => t.reference))
        next = res.json.meta.next
      } while (next !== null)
      expect(refs).toEqual(["REF000004", "REF000003", "REF000002", "REF000001", "REF000000"])
      expect((await api(`/transaction?virtual_account_number=${accountNumber}`)).json.data).toHaveLength(5)
      expect((await api("/transaction", { key: LIVE_KEY })).json.data).toEqual([])
      expect((await api("/transaction?from=yesterday")).status).toBe(400)
    }))
})

describe("PaystackFake: faults and close()", () => {
  it("5xx and 429 do nothing; acceptThen5xx does the operation; times counts down", () =>
    withFake(async ({ fake, api }) => {
      fake.fault("customer.create", "5xx", 1)
      const a = await api("/customer", { body: { email: "f@example.com" } })
      expect(a.status).toBe(500)
      expect(a.json).toMatchObject({ status: false, message: "Internal server error" })
      expect((await api("/customer/f@example.com")).status).toBe(404)
      fake.fault("customer.create", "429")
      for (let n = 0; n < 2; n++) {
        expect(await api("/customer", { body: { email: "f@example.com" } })).toEqual({
          status: 429,
          json: { status: false, message: "Rate limit exceeded!", meta: { nextStep: "Wait a few minutes and try the API call again" }, type: "api_error", code: "rate_limited" }
        })
      }
      expect((await api("/customer/f@example.com")).status).toBe(404)
      fake.clearFaults()
      fake.fault("customer.create", "acceptThen5xx", 1)
      expect((await api("/customer", { body: { email: "f@example.com" } })).status).toBe(500)
      expect((await api("/customer/f@example.com")).status).toBe(200)
      expect((await api("/customer", { body: { email: "g@example.com" } })).status).toBe(200)
      expect(fake.calls("customer.create").map((c) => c.status)).toEqual([500, 429, 429, 500, 200])
      fake.fault("bank.list", "5xx")
      expect((await api("/bank", { key: null })).status).toBe(401) // faults apply after auth
      expect((await api("/bank")).status).toBe(500)
    }))

  it("hang does nothing, acceptThenHang creates; both are recorded with status 0", () =>
    withFake(async ({ fake, api }) => {
      const { customerCode } = await newDva(api, "h@example.com", "test-bank")
      const post = (bank: string) => fetch(`${fake.url}/dedicated_account`, {
        method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ customer: customerCode, preferred_bank: bank }), signal: AbortSignal.timeout(200)
      })
      fake.fault("dedicated_account.create", "hang", 1)
      await expect(post("wema-bank")).rejects.toThrow()
      expect(fake.dedicatedAccounts()).toHaveLength(1)
      fake.fault("dedicated_account.create", "acceptThenHang", 1)
      await expect(post("access-bank")).rejects.toThrow()
      expect(fake.dedicatedAccounts().map((d) => d.bankSlug)).toEqual(["test-bank", "access-bank"])
      expect(fake.calls("dedicated_account.create").map((c) => c.status)).toEqual([200, 0, 0])
      expect((await api("/dedicated_account", { body: { customer: customerCode, preferred_bank: "wema-bank" } })).status).toBe(200)
    }))

  it("close() does not wait for a hung request nor a late delivery", async () => {
    const rx = await startReceiver()
    const fake = await startPaystackFake()
    fake.addIntegration({ secretKey: TEST_KEY, webhookUrl: rx.url })
    const c = await fetch(`${fake.url}/customer`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: JSON.stringify({ email: "l@example.com" }) })
    const code = ((await c.json()) as { data: { customer_code: string } }).data.customer_code
    const d = await fetch(`${fake.url}/dedicated_account`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: JSON.stringify({ customer: code }) })
    const accountNumber = ((await d.json()) as { data: { account_number: string } }).data.account_number
    const late = fake.credit({ accountNumber, amountKobo: 100, deliver: { afterMs: 60_000 } })
    fake.fault("bank.list", "hang")
    const pending = fetch(`${fake.url}/bank`, { headers: { authorization: `Bearer ${TEST_KEY}` } })
    await waitForPromise("the fake to see the bank.list call", () => fake.calls("bank.list").length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
    const started = Date.now()
    await fake.close()
    expect(Date.now() - started).toBeLessThan(1000)
    await expect(pending).rejects.toThrow()
    expect((await late).statuses).toEqual([])
    expect(rx.received).toEqual([])
    await expect(fake.credit({ accountNumber, amountKobo: 100 })).rejects.toThrow("closed")
    await rx.close()
  })
})
