import { createHmac } from "node:crypto"
import http from "node:http"
import type net from "node:net"
import { describe, expect, it } from "vitest"
import { isValidNuban } from "../../src/domain/Nuban.js"
import { MONNIFY_FAKE_DIRECTORY, signMonnify, startMonnifyFake, type MonnifyFake } from "./MonnifyFake.js"
import { waitForPromise } from "../support/Wait.js"

const TEST_KEY = "MK_TEST_8UBXGKTFSB"
const TEST_SECRET = "ENRC4FDYKSTUYQKA53YPXBFLUFXWYHG2"
const LIVE_KEY = "MK_PROD_FLX4P92EDF"
const LIVE_SECRET = "XXLKQ2J8W4NWPRAQ4JZ8B7N4ZWMD1DNS"
const CONTRACT = "7059707855"
const WALLET = "3934178936"

const DASH = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/
const SLASH = /^\d{2}\/\d{2}\/\d{4} (1[0-2]|[1-9]):\d{2}:\d{2} (AM|PM)$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/
const NIP_SESSION = /^090405\d{24}$/

// ---------------------------------------------------------------- helpers

interface Received { readonly body: string; readonly signature: string | undefined; readonly contentType: string | undefined }

/** A tiny webhook receiver; `answer` picks the status for the n-th request (0-based). */
const startReceiver = async (answer: (n: number) => number = () => 200) => {
  const received: Array<Received> = []
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const sig = req.headers["monnify-signature"]
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: typeof sig === "string" ? sig : undefined, contentType: req.headers["content-type"] })
      res.writeHead(answer(received.length - 1)).end("ok")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const port = (server.address() as net.AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/webhooks/monnify`,
    received,
    events: () => received.map((r) => JSON.parse(r.body) as { eventType: string; eventData: Record<string, any> }),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) })
  }
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>

const hmac = (key: string, body: string) => createHmac("sha512", key).update(body).digest("hex")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString("base64")}`

type Init = { method?: string; body?: unknown; key?: "test" | "live"; auth?: string | null }
type Api = (path: string, init?: Init) => Promise<{ status: number; json: any }>

/** A fake with a test (MFA off unless asked) and a live merchant, both pointing at a fresh receiver; everything closed afterwards. */
const withFake = async (
  body: (ctx: { fake: MonnifyFake; rx: Receiver; api: Api; login: (key?: "test" | "live") => Promise<string> }) => Promise<void>,
  opts: { answer?: (n: number) => number; mfa?: boolean; walletBalanceKobo?: number; tokenTtlSeconds?: number } = {}
) => {
  const rx = await startReceiver(opts.answer)
  const fake = await startMonnifyFake({ webhookRetryDelaysMs: [30, 30, 30], disbursementReportDelayMs: 20 })
  fake.addMerchant({
    apiKey: TEST_KEY, secretKey: TEST_SECRET, contractCode: CONTRACT, walletAccountNumber: WALLET, webhookUrl: rx.url, mfa: opts.mfa ?? false,
    ...(opts.walletBalanceKobo === undefined ? {} : { walletBalanceKobo: opts.walletBalanceKobo }),
    ...(opts.tokenTtlSeconds === undefined ? {} : { tokenTtlSeconds: opts.tokenTtlSeconds })
  })
  fake.addMerchant({ apiKey: LIVE_KEY, secretKey: LIVE_SECRET, contractCode: "5867418298", walletAccountNumber: "8016472829", webhookUrl: rx.url })
  const tokens = new Map<string, string>()
  const login = async (key: "test" | "live" = "test") => {
    const res = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: key === "test" ? basic(TEST_KEY, TEST_SECRET) : basic(LIVE_KEY, LIVE_SECRET) } })
    const json = (await res.json()) as any
    tokens.set(key, json.responseBody.accessToken)
    return json.responseBody.accessToken as string
  }
  const api: Api = async (path, init = {}) => {
    const key = init.key ?? "test"
    const headers: Record<string, string> = {}
    const auth = init.auth === undefined ? `Bearer ${tokens.get(key) ?? (await login(key))}` : init.auth
    if (auth !== null) headers["authorization"] = auth
    if (init.body !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(`${fake.url}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    return { status: res.status, json: (await res.json()) as any }
  }
  try {
    await body({ fake, rx, api, login })
  } finally {
    await fake.close()
    await rx.close()
  }
}

const reserve = async (api: Api, over: Record<string, unknown> = {}, key: "test" | "live" = "test") => {
  const r = await api("/api/v2/bank-transfer/reserved-accounts", {
    key,
    body: {
      accountReference: `ref-${Math.random().toString(36).slice(2)}`, accountName: "Karokart Ada", currencyCode: "NGN",
      contractCode: key === "test" ? CONTRACT : "5867418298", customerEmail: "ada@example.com", customerName: "Ada Obi", getAllAvailableBanks: false, ...over
    }
  })
  expect(r.status).toBe(200)
  return r.json.responseBody as { accountReference: string; accounts: Array<{ bankCode: string; bankName: string; accountNumber: string; accountName: string }>; [k: string]: any }
}
const walletKobo = async (fake: MonnifyFake, key = TEST_KEY) => {
  const state = (await (await fetch(`${fake.url}/_fake/state`)).json()) as { merchants: Array<{ keyPrefix: string; walletBalanceKobo: number }> }
  return state.merchants.find((m) => key.startsWith(m.keyPrefix))!.walletBalanceKobo
}
const payout = (over: Record<string, unknown> = {}) => ({
  amount: 20, reference: `payout-${Math.random().toString(36).slice(2)}`, narration: "Payout", destinationBankCode: "058",
  destinationAccountNumber: "0123456785", destinationAccountName: "Adaeze Okafor", currency: "NGN", sourceAccountNumber: WALLET, ...over
})

// ---------------------------------------------------------------- tests

describe("MonnifyFake: login, tokens and envelopes (B1, B8 §2-3)", () => {
  it("logs in with Basic auth; refuses bad credentials and a missing header with the exact bodies", () =>
    withFake(async ({ fake }) => {
      const good = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic(TEST_KEY, TEST_SECRET), "content-type": "application/json" }, body: "{}" })
      expect(good.status).toBe(200)
      const json = (await good.json()) as any
      expect(json).toMatchObject({ requestSuccessful: true, responseMessage: "success", responseCode: "0", responseBody: { expiresIn: 3600 } })
      expect(typeof json.responseCode).toBe("string")
      expect(json.responseBody.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
      expect(JSON.parse(Buffer.from(json.responseBody.accessToken.split(".")[1], "base64url").toString())).toMatchObject({ client_id: TEST_KEY })
      const bad = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic(TEST_KEY, "wrong") } })
      expect(bad.status).toBe(401)
      expect(await bad.json()).toEqual({ requestSuccessful: false, responseCode: 99, responseMessage: "" })
      const unknown = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic("MK_TEST_NOBODY", TEST_SECRET) } })
      expect(unknown.status).toBe(401)
      const none = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST" })
      expect(none.status).toBe(401)
      expect(await none.json()).toEqual({ requestSuccessful: false, responseCode: 99, responseMessage: "Unauthorized, supply authorization header" })
      expect(fake.logins(TEST_KEY)).toBe(1)
      expect(fake.logins()).toBe(1)
      expect(fake.calls("auth.login").map((c) => [c.apiKey, c.status])).toEqual([[TEST_KEY, 200], [TEST_KEY, 401], ["MK_TEST_NOBODY", 401], [null, 401]])
    }))

  it("needs a Bearer token elsewhere: missing, unknown and the secret itself are 401 ErrorResponses; unknown routes 404", () =>
    withFake(async ({ fake, api }) => {
      for (const auth of [null, "Bearer not-a-token", basic(TEST_KEY, TEST_SECRET)]) {
        const r = await api("/api/v1/banks", { auth })
        expect(r.status).toBe(401)
        expect(r.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
        expect(typeof r.json.responseCode).toBe("number")
        expect(r.json.responseBody).toBeUndefined()
      }
      expect(fake.calls("banks.list").every((c) => c.apiKey === null && c.status === 401)).toBe(true)
      const nope = await api("/api/v1/nothing-here")
      expect(nope).toEqual({ status: 404, json: { requestSuccessful: false, responseCode: 99, responseMessage: "Resource not found" } })
      expect(fake.calls().at(-1)).toMatchObject({ op: "unknown", apiKey: TEST_KEY, status: 404 })
    }))

  it("expires tokens after expiresIn seconds (401, as an expired token), and a fresh login works again", () =>
    withFake(async ({ fake, api, login }) => {
      const first = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic(TEST_KEY, TEST_SECRET) } })
      expect(((await first.json()) as any).responseBody.expiresIn).toBe(1)
      await login()
      expect((await api("/api/v1/banks")).status).toBe(200)
      await sleep(1100)
      const expired = await api("/api/v1/banks")
      expect(expired).toEqual({ status: 401, json: { requestSuccessful: false, responseCode: 99, responseMessage: "Access token expired" } })
      expect(fake.calls("banks.list").at(-1)).toMatchObject({ apiKey: TEST_KEY, status: 401 })
      await login()
      expect((await api("/api/v1/banks")).status).toBe(200)
      expect(fake.logins(TEST_KEY)).toBe(3)
      fake.setTokenTtl(TEST_KEY, 60)
      await login()
      expect(fake.logins(TEST_KEY)).toBe(4)
      expect(fake.logins(LIVE_KEY)).toBe(0)
    }, { tokenTtlSeconds: 1 }))

  it("refuses keys that are neither MK_TEST_ nor MK_PROD_", async () => {
    const fake = await startMonnifyFake()
    try {
      expect(() => fake.addMerchant({ apiKey: "sk_test_abc", secretKey: "s", contractCode: "c", walletAccountNumber: "w" })).toThrow()
      fake.addMerchant({ apiKey: LIVE_KEY, secretKey: "s", contractCode: "c", walletAccountNumber: "w" })
      expect(() => fake.addMerchant({ apiKey: LIVE_KEY, secretKey: "s", contractCode: "c", walletAccountNumber: "w" })).toThrow()
    } finally {
      await fake.close()
    }
  })
})

describe("MonnifyFake: banks and name enquiry (B5)", () => {
  it("lists banks as a flat array", () =>
    withFake(async ({ api }) => {
      const r = await api("/api/v1/banks")
      expect(r.status).toBe(200)
      expect(r.json.responseCode).toBe("0")
      expect(Array.isArray(r.json.responseBody)).toBe(true)
      for (const b of r.json.responseBody) expect(Object.keys(b)).toEqual(["name", "code", "ussdTemplate", "baseUssdCode", "transferUssdTemplate"])
      expect(r.json.responseBody.map((b: any) => `${b.code} ${b.name}`)).toEqual(expect.arrayContaining([
        "044 Access bank", "035 Wema bank", "058 Guaranty Trust Bank", "057 Zenith bank", "033 United Bank for Africa",
        "011 First Bank of Nigeria", "232 Sterling bank", "50515 Moniepoint Microfinance Bank", "305 OPAY"
      ]))
      expect(r.json.responseBody.find((b: any) => b.code === "044").ussdTemplate).toBe("*901*Amount*AccountNumber#")
    }))

  it("validates directory and reserved accounts: 200, 404 unknown account, 400 unknown bank", () =>
    withFake(async ({ api }) => {
      for (const row of MONNIFY_FAKE_DIRECTORY) expect(isValidNuban(row.accountNumber, row.bankCode)).toBe(true)
      expect(await api("/api/v1/disbursements/account/validate?accountNumber=2000000015&bankCode=057")).toEqual({
        status: 200, json: { requestSuccessful: true, responseMessage: "success", responseCode: "0", responseBody: { accountNumber: "2000000015", accountName: "BOLANLE ADEYEMI", bankCode: "057" } }
      })
      const notFound = await api("/api/v1/disbursements/account/validate?accountNumber=2000000015&bankCode=058")
      expect(notFound.status).toBe(404)
      expect(notFound.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      const badBank = await api("/api/v1/disbursements/account/validate?accountNumber=2000000015&bankCode=999")
      expect(badBank.status).toBe(400)
      expect(badBank.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v1/disbursements/account/validate?bankCode=057")).status).toBe(400)
      const ra = await reserve(api)
      const acct = ra.accounts[0]!
      const own = await api(`/api/v1/disbursements/account/validate?accountNumber=${acct.accountNumber}&bankCode=${acct.bankCode}`)
      expect(own.json.responseBody).toEqual({ accountNumber: acct.accountNumber, accountName: acct.accountName, bankCode: "50515" })
    }))
})

describe("MonnifyFake: reserved accounts (B2)", () => {
  it("reserves synchronously at 50515 by default with a valid NUBAN and a renamed account", () =>
    withFake(async ({ fake, api }) => {
      const r = await api("/api/v2/bank-transfer/reserved-accounts", {
        body: { accountReference: "cust-0001", accountName: "Karokart Ada", currencyCode: "NGN", contractCode: CONTRACT, customerEmail: "ada@example.com", customerName: "Ada Obi", getAllAvailableBanks: false }
      })
      expect(r.status).toBe(200)
      expect(r.json.responseCode).toBe("0")
      const body = r.json.responseBody
      expect(Object.keys(body).slice(0, 13)).toEqual([
        "contractCode", "accountReference", "accountName", "currencyCode", "customerEmail", "customerName", "accounts",
        "collectionChannel", "reservationReference", "reservedAccountType", "status", "createdOn", "incomeSplitConfig"
      ])
      expect(body).toMatchObject({
        contractCode: CONTRACT, accountReference: "cust-0001", accountName: "Kar-Ada Obi", currencyCode: "NGN", customerEmail: "ada@example.com",
        customerName: "Ada Obi", collectionChannel: "RESERVED_ACCOUNT", reservedAccountType: "GENERAL", status: "ACTIVE", restrictPaymentSource: false
      })
      expect(body.bvn).toBeUndefined()
      expect(body.reservationReference).toMatch(/^[A-Z0-9]{20}$/)
      expect(body.createdOn).toMatch(DASH)
      expect(body.accounts).toHaveLength(1)
      expect(body.accounts[0]).toMatchObject({ bankCode: "50515", bankName: "Moniepoint Microfinance Bank", accountName: "Kar-Ada Obi" })
      expect(isValidNuban(body.accounts[0].accountNumber, "50515")).toBe(true)
      expect(fake.reservedAccounts(TEST_KEY)).toEqual([{ accountReference: "cust-0001", accountNumber: body.accounts[0].accountNumber, bankCode: "50515", customerEmail: "ada@example.com" }])
      const got = await api("/api/v2/bank-transfer/reserved-accounts/cust-0001")
      expect(got.json).toEqual(r.json)
      const missing = await api("/api/v2/bank-transfer/reserved-accounts/cust-9999")
      expect(missing.status).toBe(404)
      expect(missing.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v2/bank-transfer/reserved-accounts/cust-0001", { key: "live" })).status).toBe(404)
    }))

  it("one account per preferred bank, all available banks, bvn/nin echoed; refuses duplicates, wrong contract, bad input", () =>
    withFake(async ({ fake, api }) => {
      const multi = await reserve(api, { accountReference: "multi", preferredBanks: ["035", "232", "50515", "058"], bvn: "21212121212" })
      expect(multi.accounts.map((a) => `${a.bankCode} ${a.bankName}`)).toEqual(["035 Wema bank", "232 Sterling bank", "50515 Moniepoint Microfinance Bank", "058 Guaranty Trust Bank"])
      for (const a of multi.accounts) expect(isValidNuban(a.accountNumber, a.bankCode)).toBe(true)
      expect(new Set(multi.accounts.map((a) => a.accountNumber)).size).toBe(4)
      expect(multi["bvn"]).toBe("21212121212")
      const all = await reserve(api, { accountReference: "all", getAllAvailableBanks: true, nin: "12345678901" })
      expect(all.accounts.map((a) => a.bankCode)).toEqual(["50515", "232", "035"])
      expect(all["nin"]).toBe("12345678901")
      const dup = await api("/api/v2/bank-transfer/reserved-accounts", {
        body: { accountReference: "multi", accountName: "X", currencyCode: "NGN", contractCode: CONTRACT, customerEmail: "b@example.com", customerName: "B" }
      })
      expect(dup).toEqual({ status: 422, json: { requestSuccessful: false, responseCode: 99, responseMessage: "There is an existing reserved account with this account reference" } })
      const base = { accountReference: "other", accountName: "X", currencyCode: "NGN", contractCode: CONTRACT, customerEmail: "b@example.com", customerName: "B" }
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: { ...base, contractCode: "0000000000" } })).status).toBe(422)
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: { ...base, preferredBanks: ["044"] } })).status).toBe(422)
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: { ...base, customerEmail: undefined } })).status).toBe(400)
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: { ...base, bvn: "123" } })).status).toBe(400)
      // The same reference under another merchant is fine.
      expect((await reserve(api, { accountReference: "multi" }, "live")).accounts).toHaveLength(1)
      expect(fake.reservedAccounts(TEST_KEY)).toHaveLength(7)
      expect(fake.reservedAccounts()).toHaveLength(8)
    }))
})

describe("MonnifyFake: credits (B3) and requery (B4)", () => {
  it("sends SUCCESSFUL_TRANSACTION in B3's shape, signed over the exact compact bytes", () =>
    withFake(async ({ rx, api, fake }) => {
      const ra = await reserve(api, { accountReference: "acct-7" })
      const acct = ra.accounts[0]!
      const d = await fake.credit({ accountNumber: acct.accountNumber, amountNaira: 3000, payerName: "JOHN DOE", payerAccountNumber: "0065432190", paidOn: new Date("2021-11-17T10:28:42.615Z") })
      expect(d.statuses).toEqual([200])
      expect(d.eventType).toBe("SUCCESSFUL_TRANSACTION")
      const got = rx.received[0]!
      expect(got.body).toBe(d.body)
      expect(got.body).toBe(JSON.stringify(JSON.parse(got.body)))
      expect(got.contentType).toBe("application/json")
      expect(got.signature).toBe(hmac(TEST_SECRET, got.body))
      expect(got.signature).toBe(signMonnify(TEST_SECRET, got.body))
      expect(got.signature).not.toBe(hmac(TEST_SECRET, JSON.stringify(JSON.parse(got.body), null, 2)))
      const { eventType, eventData: e } = rx.events()[0]!
      expect(eventType).toBe("SUCCESSFUL_TRANSACTION")
      expect(Object.keys(e)).toEqual([
        "product", "transactionReference", "paymentReference", "paidOn", "paymentDescription", "metaData", "paymentSourceInformation",
        "destinationAccountInformation", "amountPaid", "totalPayable", "cardDetails", "paymentMethod", "currency", "settlementAmount", "paymentStatus", "customer"
      ])
      expect(e).toMatchObject({
        product: { reference: "acct-7", type: "RESERVED_ACCOUNT" }, paidOn: "2021-11-17 11:28:42.615", metaData: {}, cardDetails: {},
        destinationAccountInformation: { bankCode: "50515", bankName: "Moniepoint Microfinance Bank", accountNumber: acct.accountNumber },
        amountPaid: 3000, totalPayable: 3000, paymentMethod: "ACCOUNT_TRANSFER", currency: "NGN", settlementAmount: "2990.00", paymentStatus: "PAID",
        customer: { name: "Ada Obi", email: "ada@example.com" }
      })
      expect(e["transactionReference"]).toBe(d.reference)
      expect(e["paymentReference"]).toBe(d.reference)
      expect(d.reference).toMatch(/^MNFY\|\d{2}\|20211117112842\|\d{6}$/)
      expect(e["paymentSourceInformation"]).toEqual([{ bankCode: "", amountPaid: 3000, accountName: "JOHN DOE", sessionId: expect.stringMatching(NIP_SESSION), accountNumber: "0065432190" }])
      const odd = await fake.credit({ accountNumber: acct.accountNumber, amountNaira: "1500.5", sessionId: "e6cV1smlpkwG38Cg6d5F9B2PRnIq5FqA", transactionReference: "MNFY|04|20211117112842|000170" })
      const oddData = JSON.parse(odd.body).eventData
      expect(oddData).toMatchObject({ amountPaid: 1500.5, totalPayable: 1500.5, settlementAmount: "1490.50", transactionReference: "MNFY|04|20211117112842|000170" })
      expect(oddData.paymentSourceInformation[0].sessionId).toBe("e6cV1smlpkwG38Cg6d5F9B2PRnIq5FqA")
      const small = await fake.credit({ accountNumber: acct.accountNumber, amountNaira: 500 })
      expect(JSON.parse(small.body).eventData.settlementAmount).toBe("495.00")
      await expect(fake.credit({ accountNumber: acct.accountNumber, amountNaira: 1, transactionReference: "MNFY|04|20211117112842|000170" })).rejects.toThrow("already used")
      await expect(fake.credit({ accountNumber: "0000000000", amountNaira: 1 })).rejects.toThrow()
      await expect(fake.credit({ accountNumber: acct.accountNumber, amountNaira: "1.234" })).rejects.toThrow()
    }))

  it("delivers twice, never, late and forged; sendRaw and redeliver send given bytes", () =>
    withFake(async ({ fake, rx, api }) => {
      const { accounts } = await reserve(api)
      const accountNumber = accounts[0]!.accountNumber
      const twice = await fake.credit({ accountNumber, amountNaira: 10, deliver: "twice" })
      expect(twice.statuses).toEqual([200, 200])
      expect(rx.received.map((r) => r.body)).toEqual([twice.body, twice.body])
      const never = await fake.credit({ accountNumber, amountNaira: 20, deliver: "never" })
      expect(never.signature).toBe(hmac(TEST_SECRET, never.body))
      expect(never.statuses).toEqual([])
      expect(rx.received).toHaveLength(2)
      expect((await api(`/api/v2/transactions/${encodeURIComponent(never.reference)}`)).status).toBe(200)
      const started = Date.now()
      const late = fake.credit({ accountNumber, amountNaira: 30, deliver: { afterMs: 150 } })
      await sleep(50)
      expect(rx.received).toHaveLength(2)
      expect((await late).statuses).toEqual([200])
      expect(Date.now() - started).toBeGreaterThanOrEqual(140)
      expect(await fake.redeliver(never)).toBe(200)
      expect(rx.received[3]!.body).toBe(never.body)
      const forged = await fake.credit({ accountNumber, amountNaira: 40, signWith: "attacker-secret" })
      expect(rx.received[4]!.signature).toBe(hmac("attacker-secret", forged.body))
      expect(rx.received[4]!.signature).not.toBe(hmac(TEST_SECRET, forged.body))
      expect(await fake.sendRaw(TEST_KEY, '{"eventType":"odd"}', "deadbeef")).toEqual({ status: 200, text: "ok" })
      expect(rx.received[5]).toMatchObject({ body: '{"eventType":"odd"}', signature: "deadbeef" })
      await fake.sendRaw(TEST_KEY, '{"eventType":"signed"}')
      expect(rx.received[6]!.signature).toBe(hmac(TEST_SECRET, '{"eventType":"signed"}'))
      await fake.sendRaw(TEST_KEY, "{}", "")
      expect(rx.received[7]!.signature).toBeUndefined()
      expect(fake.deliveries().map((d) => d.reference)).toEqual([twice.reference, (await late).reference, forged.reference])
    }))

  it("retries a non-200 answer until 200, and gives up when the delays run out", () =>
    withFake(async ({ fake, rx, api }) => {
      const { accounts } = await reserve(api)
      const accountNumber = accounts[0]!.accountNumber
      const d = await fake.credit({ accountNumber, amountNaira: 100 })
      expect(d.statuses).toEqual([500])
      await waitForPromise("the deposit's 3 webhook attempts", () => d.statuses.length, { until: (n) => n === 3, timeoutMs: 3_000, intervalMs: 10 })
      expect(d.statuses).toEqual([500, 503, 200])
      expect(new Set(rx.received.map((r) => r.body)).size).toBe(1)
      expect(new Set(rx.received.map((r) => r.signature)).size).toBe(1)
      fake.setWebhookUrl(TEST_KEY, "http://127.0.0.1:1/unreachable")
      const lost = await fake.credit({ accountNumber, amountNaira: 200 })
      await waitForPromise("the lost deposit's 4 webhook attempts", () => lost.statuses.length, { until: (n) => n === 4, timeoutMs: 3_000, intervalMs: 10 })
      await sleep(100)
      expect(lost.statuses).toEqual([0, 0, 0, 0])
    }, { answer: (n) => (n === 0 ? 500 : n === 1 ? 503 : 200) }))

  it("sends REJECTED_PAYMENT in B3's shape and records no transaction", () =>
    withFake(async ({ fake, rx, api }) => {
      const ra = await reserve(api, { accountReference: "restricted", preferredBanks: ["035"] })
      const acct = ra.accounts[0]!
      const d = await fake.rejectPayment({ accountNumber: acct.accountNumber, amountNaira: 40, reason: "UNDER_PAYMENT" })
      expect(d.eventType).toBe("REJECTED_PAYMENT")
      expect(rx.received[0]!.signature).toBe(hmac(TEST_SECRET, rx.received[0]!.body))
      const e = rx.events()[0]!.eventData
      expect(Object.keys(e)).toEqual([
        "metaData", "product", "amount", "paymentSourceInformation", "transactionReference", "created_on", "paymentReference",
        "paymentRejectionInformation", "paymentDescription", "customer"
      ])
      expect(Array.isArray(e["paymentSourceInformation"])).toBe(false)
      expect(e["paymentSourceInformation"]).toMatchObject({ bankCode: "50515", amountPaid: 40, sessionId: expect.stringMatching(NIP_SESSION) })
      expect(e["paymentRejectionInformation"]).toEqual({ bankCode: "035", destinationAccountNumber: acct.accountNumber, bankName: "Wema bank", rejectionReason: "UNDER_PAYMENT", expectedAmount: 40 })
      expect(e["created_on"]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.0$/)
      expect(e).toMatchObject({ product: { reference: "restricted", type: "RESERVED_ACCOUNT" }, customer: { name: "Ada Obi", email: "ada@example.com" } })
      expect(typeof e["metaData"]).toBe("string")
      expect((await api(`/api/v2/transactions/${encodeURIComponent(d.reference)}`)).status).toBe(404)
      expect((await api("/api/v1/transactions/search")).json.responseBody.totalElements).toBe(0)
      const dflt = await fake.rejectPayment({ accountNumber: acct.accountNumber, amountNaira: 100 })
      expect(JSON.parse(dflt.body).eventData.paymentRejectionInformation.rejectionReason).toBe("RESTRICTED_PAYMENT_SOURCE")
    }))

  it("answers the requery in B4's different shape: string amounts, dd/MM/yyyy h:mm:ss a, NIP codes, masked payer", () =>
    withFake(async ({ fake, api }) => {
      const ra = await reserve(api, { accountReference: "rq" })
      const d = await fake.credit({
        accountNumber: ra.accounts[0]!.accountNumber, amountNaira: 3000, payerName: "ADA OBI", payerAccountNumber: "0123454872", payerBankCode: "058",
        paidOn: new Date("2022-07-25T10:20:20.000Z"), transactionReference: "MNFY|67|20220725111957|000283"
      })
      expect(JSON.parse(d.body).eventData.paymentSourceInformation[0].bankCode).toBe("058")
      const r = await api("/api/v2/transactions/MNFY%7C67%7C20220725111957%7C000283")
      expect(r.status).toBe(200)
      expect(r.json.responseCode).toBe("0")
      expect(r.json.responseBody).toEqual({
        transactionReference: "MNFY|67|20220725111957|000283", paymentReference: "MNFY|67|20220725111957|000283",
        amountPaid: "3000.00", totalPayable: "3000.00", settlementAmount: "2990.00", paidOn: "25/07/2022 11:20:20 AM",
        paymentStatus: "PAID", paymentDescription: "Kar-Ada Obi", currency: "NGN", paymentMethod: "ACCOUNT_TRANSFER",
        product: { type: "RESERVED_ACCOUNT", reference: "rq" }, cardDetails: null,
        accountDetails: { accountName: "ADA OBI", accountNumber: "******4872", bankCode: "000013", amountPaid: "3000.00" },
        accountPayments: [{ accountName: "ADA OBI", accountNumber: "******4872", bankCode: "000013", amountPaid: "3000.00" }],
        customer: { name: "Ada Obi", email: "ada@example.com" }, metaData: {}
      })
      const midnight = await fake.credit({ accountNumber: ra.accounts[0]!.accountNumber, amountNaira: 1, paidOn: new Date("2022-07-24T23:05:09.000Z") })
      expect(JSON.parse(midnight.body).eventData.paidOn).toBe("2022-07-25 00:05:09.000")
      expect((await api(`/api/v2/transactions/${encodeURIComponent(midnight.reference)}`)).json.responseBody.paidOn).toBe("25/07/2022 12:05:09 AM")
      const pm = await fake.credit({ accountNumber: ra.accounts[0]!.accountNumber, amountNaira: 1, paidOn: new Date("2022-07-25T14:05:09.000Z") })
      expect((await api(`/api/v2/transactions/${encodeURIComponent(pm.reference)}`)).json.responseBody.paidOn).toBe("25/07/2022 3:05:09 PM")
      const missing = await api("/api/v2/transactions/MNFY%7C00%7C20220725111957%7C999999")
      expect(missing.status).toBe(404)
      expect(missing.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v2/transactions/MNFY%7C67%7C20220725111957%7C000283", { key: "live" })).status).toBe(404)
    }))

  it("searches with 0-based Spring pages and inclusive ISO or epoch from/to; lists a reserved account's transactions", () =>
    withFake(async ({ fake, api }) => {
      const ra = await reserve(api, { accountReference: "pages" })
      const other = await reserve(api, { accountReference: "other" })
      const base = Date.parse("2026-03-01T10:00:00.000Z")
      for (let n = 0; n < 5; n++) {
        await fake.credit({ accountNumber: ra.accounts[0]!.accountNumber, amountNaira: 100 * (n + 1), paidOn: new Date(base + n * 60_000), transactionReference: `MNFY|01|2026030111000${n}|00000${n}`, deliver: "never" })
      }
      await fake.credit({ accountNumber: other.accounts[0]!.accountNumber, amountNaira: 7, paidOn: new Date(base - 3_600_000), transactionReference: "MNFY|02|20260301100000|000009", deliver: "never" })
      const p0 = await api("/api/v1/transactions/search?page=0&size=2")
      expect(p0.status).toBe(200)
      const page = p0.json.responseBody
      expect(Object.keys(page)).toEqual(expect.arrayContaining(["content", "pageable", "last", "totalPages", "totalElements", "size", "number", "first", "numberOfElements", "empty"]))
      expect(page).toMatchObject({ totalElements: 6, totalPages: 3, size: 2, number: 0, first: true, last: false, numberOfElements: 2, empty: false })
      expect(page.content.map((t: any) => t.transactionReference)).toEqual(["MNFY|01|20260301110004|000004", "MNFY|01|20260301110003|000003"])
      expect(page.content[0]).toEqual({
        transactionReference: "MNFY|01|20260301110004|000004", paymentReference: "MNFY|01|20260301110004|000004", amount: 500,
        customerName: "Ada Obi", customerEmail: "ada@example.com", paymentStatus: "PAID", transactionDate: "2026-03-01T10:04:00.000+0000"
      })
      expect(page.content[0].transactionDate).toMatch(ISO_UTC)
      const last = (await api("/api/v1/transactions/search?page=2&size=2")).json.responseBody
      expect(last).toMatchObject({ number: 2, first: false, last: true, numberOfElements: 2 })
      expect(last.content.at(-1).transactionReference).toBe("MNFY|02|20260301100000|000009")
      expect((await api("/api/v1/transactions/search?page=3&size=2")).json.responseBody).toMatchObject({ empty: true, content: [] })
      const iso = await api(`/api/v1/transactions/search?from=${new Date(base + 60_000).toISOString()}&to=${new Date(base + 180_000).toISOString()}&paymentStatus=PAID`)
      expect(iso.json.responseBody.content.map((t: any) => t.amount)).toEqual([400, 300, 200])
      const epoch = await api(`/api/v1/transactions/search?from=${base + 60_000}&to=${base + 180_000}`)
      expect(epoch.json.responseBody.totalElements).toBe(3)
      const local = await api("/api/v1/transactions/search?from=2026-03-01T11:01:00&to=2026-03-01T11:03:00")
      expect(local.json.responseBody.totalElements).toBe(3)
      expect((await api("/api/v1/transactions/search?paymentStatus=FAILED")).json.responseBody.totalElements).toBe(0)
      expect((await api("/api/v1/transactions/search?from=yesterday")).status).toBe(400)
      expect((await api("/api/v1/transactions/search?page=-1")).status).toBe(400)
      expect((await api("/api/v1/transactions/search", { key: "live" })).json.responseBody.totalElements).toBe(0)

      const rt = await api("/api/v1/bank-transfer/reserved-accounts/transactions?accountReference=pages&page=1&size=2")
      expect(rt.status).toBe(200)
      expect(rt.json.responseBody).toMatchObject({ totalElements: 5, number: 1, size: 2, first: false, last: false })
      const row = rt.json.responseBody.content[0]
      expect(row).toMatchObject({
        customerDTO: { email: "ada@example.com", name: "Ada Obi" }, paymentMethod: "ACCOUNT_TRANSFER", amount: 300, amountPaid: 300, payableAmount: 300,
        fee: 3, currencyCode: "NGN", paymentStatus: "PAID", transactionReference: "MNFY|01|20260301110002|000002", completed: true, flagged: false
      })
      expect(row.paymentSourceInformation).toBeUndefined()
      expect((await api("/api/v1/bank-transfer/reserved-accounts/transactions?accountReference=pages")).json.responseBody.size).toBe(10)
      expect((await api("/api/v1/bank-transfer/reserved-accounts/transactions?accountReference=nobody")).status).toBe(404)
      expect((await api("/api/v1/bank-transfer/reserved-accounts/transactions")).status).toBe(400)
    }))
})

describe("MonnifyFake: disbursements (B6)", () => {
  it("pays a good account: SUCCESS at once with a NIP session, then a signed SUCCESSFUL_DISBURSEMENT; summary; reused reference", () =>
    withFake(async ({ fake, rx, api }) => {
      const before = await walletKobo(fake)
      const r = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-success-1", amount: 20 }) })
      expect(r.status).toBe(200)
      expect(r.json.responseCode).toBe("0")
      const b = r.json.responseBody
      expect(Object.keys(b)).toEqual(["amount", "reference", "status", "dateCreated", "totalFee", "sessionId", "destinationAccountName", "destinationBankName", "destinationAccountNumber", "destinationBankCode"])
      expect(b).toMatchObject({ amount: 20, reference: "ref-success-1", status: "SUCCESS", totalFee: 10, destinationAccountName: "ADAEZE OKAFOR", destinationBankName: "Guaranty Trust Bank", destinationAccountNumber: "0123456785", destinationBankCode: "058" })
      expect(b.dateCreated).toMatch(ISO_UTC)
      expect(b.sessionId).toMatch(NIP_SESSION)
      expect(await walletKobo(fake)).toBe(before - 3000)
      await waitForPromise("the receiver to get 1 webhook", () => rx.received.length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
      expect(rx.received[0]!.signature).toBe(hmac(TEST_SECRET, rx.received[0]!.body))
      const { eventType, eventData: e } = rx.events()[0]!
      expect(eventType).toBe("SUCCESSFUL_DISBURSEMENT")
      expect(Object.keys(e)).toEqual([
        "amount", "transactionReference", "fee", "transactionDescription", "destinationAccountNumber", "sessionId", "createdOn", "destinationAccountName",
        "reference", "destinationBankCode", "completedOn", "narration", "currency", "destinationBankName", "status"
      ])
      expect(e).toMatchObject({ amount: 20, fee: 10, transactionDescription: "Approved or completed successfully", sessionId: b.sessionId, reference: "ref-success-1", status: "SUCCESS", currency: "NGN", narration: "Payout" })
      expect(e["transactionReference"]).toMatch(/^MFDS\d{14}[A-Z0-9]{6}$/)
      expect(e["createdOn"]).toMatch(SLASH)
      expect(e["completedOn"]).toMatch(SLASH)
      const again = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-success-1", amount: 999 }) })
      expect(again.json.responseBody).toEqual(b)
      expect(await walletKobo(fake)).toBe(before - 3000)
      const s = await api("/api/v2/disbursements/single/summary?reference=ref-success-1")
      expect(s.json.responseBody).toEqual({
        amount: 20, reference: "ref-success-1", narration: "Payout", currency: "NGN", fee: 10, twoFaEnabled: false, status: "SUCCESS",
        transactionDescription: "Approved or completed successfully", transactionReference: e["transactionReference"], createdOn: b.dateCreated,
        sourceAccountNumber: WALLET, destinationAccountNumber: "0123456785", destinationAccountName: "ADAEZE OKAFOR", destinationBankCode: "058", destinationBankName: "Guaranty Trust Bank"
      })
      const none = await api("/api/v2/disbursements/single/summary?reference=nope")
      expect(none.status).toBe(404)
      expect(none.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect(fake.disbursements(TEST_KEY)).toEqual([{ reference: "ref-success-1", amountNaira: 20, status: "SUCCESS", destinationAccountNumber: "0123456785", destinationBankCode: "058" }])
    }))

  it("fails (PENDING then FAILED_DISBURSEMENT, sessionId \"\") and reverses (SUCCESS, then REVERSED_DISBURSEMENT), refunding the wallet", () =>
    withFake(async ({ fake, rx, api }) => {
      const before = await walletKobo(fake)
      const f = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-fail", amount: 100, destinationAccountNumber: "9999999907", destinationBankCode: "058" }) })
      expect(f.json.responseBody.status).toBe("PENDING")
      expect(f.json.responseBody.sessionId).toBeUndefined()
      const v = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-rev", amount: 200, destinationAccountNumber: "9999999913", destinationBankCode: "044" }) })
      expect(v.json.responseBody.status).toBe("SUCCESS")
      expect(await walletKobo(fake)).toBe(before - 11_000 - 21_000)
      await waitForPromise("the receiver to get 3 webhooks", () => rx.received.length, { until: (n) => n === 3, timeoutMs: 3_000, intervalMs: 10 })
      for (const x of rx.received) expect(x.signature).toBe(hmac(TEST_SECRET, x.body))
      const events = rx.events().map((e) => `${e.eventType} ${e.eventData["reference"]}`)
      expect(events).toEqual(expect.arrayContaining(["FAILED_DISBURSEMENT ref-fail", "SUCCESSFUL_DISBURSEMENT ref-rev", "REVERSED_DISBURSEMENT ref-rev"]))
      expect(events.indexOf("SUCCESSFUL_DISBURSEMENT ref-rev")).toBeLessThan(events.indexOf("REVERSED_DISBURSEMENT ref-rev"))
      const failed = rx.events().find((e) => e.eventType === "FAILED_DISBURSEMENT")!.eventData
      expect(failed).toMatchObject({ status: "FAILED", sessionId: "", amount: 100, fee: 10, destinationBankName: "Guaranty Trust Bank" })
      const reversed = rx.events().find((e) => e.eventType === "REVERSED_DISBURSEMENT")!.eventData
      expect(Object.keys(reversed)).toEqual([
        "transactionReference", "reference", "narration", "currency", "amount", "status", "fee", "destinationAccountNumber",
        "destinationAccountName", "destinationBankCode", "sessionId", "createdOn", "completedOn"
      ])
      expect(reversed).toMatchObject({ status: "REVERSED", amount: 200, sessionId: v.json.responseBody.sessionId })
      expect(await walletKobo(fake)).toBe(before)
      expect((await api("/api/v2/disbursements/single/summary?reference=ref-fail")).json.responseBody.status).toBe("FAILED")
      expect((await api("/api/v2/disbursements/single/summary?reference=ref-rev")).json.responseBody.status).toBe("REVERSED")
    }))

  it("async:true answers PENDING and reports by webhook; an unknown account fails as Invalid Account; the wrong wallet is a 400", () =>
    withFake(async ({ rx, api }) => {
      const a = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-async", async: true, amount: 30 }) })
      expect(a.json.responseBody.status).toBe("PENDING")
      const u = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-unknown", destinationAccountNumber: "2000000015", destinationBankCode: "058", destinationAccountName: "Somebody" }) })
      expect(u.json.responseBody).toMatchObject({ status: "PENDING", destinationAccountName: "Somebody" })
      await waitForPromise("the receiver to get 2 webhooks", () => rx.received.length, { until: (n) => n === 2, timeoutMs: 3_000, intervalMs: 10 })
      const byRef = Object.fromEntries(rx.events().map((e) => [e.eventData["reference"], e]))
      expect(byRef["ref-async"]).toMatchObject({ eventType: "SUCCESSFUL_DISBURSEMENT", eventData: { status: "SUCCESS", sessionId: expect.stringMatching(NIP_SESSION) } })
      expect(byRef["ref-unknown"]).toMatchObject({ eventType: "FAILED_DISBURSEMENT", eventData: { transactionDescription: "Invalid Account", sessionId: "" } })
      expect((await api("/api/v2/disbursements/single/summary?reference=ref-async")).json.responseBody.status).toBe("SUCCESS")
      const wrong = await api("/api/v2/disbursements/single", { body: payout({ sourceAccountNumber: "1111111111" }) })
      expect(wrong.status).toBe(400)
      expect(wrong.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v2/disbursements/single", { body: payout({ destinationBankCode: "999" }) })).status).toBe(400)
      expect((await api("/api/v2/disbursements/single", { body: payout({ amount: -5 }) })).status).toBe(400)
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: undefined }) })).status).toBe(400)
    }))

  it("with MFA on answers PENDING_AUTHORIZATION without debit or webhook; validate-otp refuses a wrong code and proceeds with 123456", () =>
    withFake(async ({ fake, rx, api }) => {
      const before = await walletKobo(fake)
      const r = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-mfa", amount: 50 }) })
      expect(r.status).toBe(200)
      expect(r.json.responseBody).toMatchObject({ status: "PENDING_AUTHORIZATION", amount: 50 })
      expect(r.json.responseBody.sessionId).toBeUndefined()
      expect((await api("/api/v2/disbursements/single/summary?reference=ref-mfa")).json.responseBody).toMatchObject({ status: "PENDING_AUTHORIZATION", twoFaEnabled: true })
      await sleep(100)
      expect(rx.received).toEqual([])
      expect(await walletKobo(fake)).toBe(before)
      const wrong = await api("/api/v2/disbursements/single/validate-otp", { body: { reference: "ref-mfa", authorizationCode: "491763" } })
      expect(wrong.status).toBe(400)
      expect(wrong.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v2/disbursements/single/validate-otp", { body: { reference: "nope", authorizationCode: "123456" } })).status).toBe(404)
      const right = await api("/api/v2/disbursements/single/validate-otp", { body: { reference: "ref-mfa", authorizationCode: "123456" } })
      expect(right.status).toBe(200)
      expect(right.json.responseBody).toMatchObject({ reference: "ref-mfa", status: "SUCCESS", sessionId: expect.stringMatching(NIP_SESSION) })
      expect(await walletKobo(fake)).toBe(before - 6000)
      await waitForPromise("the receiver to get 1 webhook", () => rx.received.length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
      expect(rx.events()[0]).toMatchObject({ eventType: "SUCCESSFUL_DISBURSEMENT", eventData: { reference: "ref-mfa" } })
      expect((await api("/api/v2/disbursements/single/validate-otp", { body: { reference: "ref-mfa", authorizationCode: "123456" } })).status).toBe(400)
      fake.setMfa(TEST_KEY, false)
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-nomfa", amount: 51 }) })).json.responseBody.status).toBe("SUCCESS")
    }, { mfa: true }))

  it("answers insufficient balance as FAILED in a 200 with comment, no debit, then FAILED_DISBURSEMENT", () =>
    withFake(async ({ fake, rx, api }) => {
      const r = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-broke", amount: 100 }) })
      expect(r.status).toBe(200)
      expect(r.json.responseCode).toBe("0")
      expect(r.json.responseBody).toMatchObject({
        status: "FAILED", reference: "ref-broke", comment: "You do not have sufficient balance to process this request. Please fund your account and try again."
      })
      expect(await walletKobo(fake)).toBe(5000)
      await waitForPromise("the receiver to get 1 webhook", () => rx.received.length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
      expect(rx.events()[0]).toMatchObject({
        eventType: "FAILED_DISBURSEMENT",
        eventData: { status: "FAILED", sessionId: "", transactionDescription: "You do not have sufficient balance to process this request. Please fund your account and try again." }
      })
      expect(await walletKobo(fake)).toBe(5000)
      // Not a D07: the refused request does not count.
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-broke-2", amount: 100 }) })).status).toBe(200)
    }, { walletBalanceKobo: 5000 }))

  it("refuses the same account and amount within 2 minutes under another reference (D07)", () =>
    withFake(async ({ api }) => {
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-d07-a", amount: 75 }) })).json.responseBody.status).toBe("SUCCESS")
      const dup = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-d07-b", amount: 75 }) })
      expect(dup.status).toBe(400)
      expect(dup.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect(dup.json.responseMessage).toMatch(/^DUPLICATE REQUEST \(D07\)/)
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-d07-c", amount: 76 }) })).status).toBe(200)
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-d07-d", amount: 75, destinationAccountNumber: "2000000015", destinationBankCode: "057" }) })).status).toBe(200)
      expect((await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-d07-a", amount: 75 }) })).status).toBe(200) // same reference: the original
    }))
})

describe("MonnifyFake: faults and close()", () => {
  it("5xx, 429 and expiredToken do nothing; acceptThen5xx does the operation; times counts down; faults come after auth", () =>
    withFake(async ({ fake, api }) => {
      const body = (ref: string) => ({ accountReference: ref, accountName: "X", currencyCode: "NGN", contractCode: CONTRACT, customerEmail: "f@example.com", customerName: "F" })
      fake.fault("reserved.create", "5xx", 1)
      const a = await api("/api/v2/bank-transfer/reserved-accounts", { body: body("f1") })
      expect(a.status).toBe(500)
      expect(a.json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect((await api("/api/v2/bank-transfer/reserved-accounts/f1")).status).toBe(404)
      fake.fault("reserved.create", "429", 2)
      for (let n = 0; n < 2; n++) expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: body("f1") })).json).toMatchObject({ requestSuccessful: false, responseCode: 99 })
      expect(fake.calls("reserved.create").map((c) => c.status)).toEqual([500, 429, 429])
      fake.fault("reserved.create", "expiredToken", 1)
      expect(await api("/api/v2/bank-transfer/reserved-accounts", { body: body("f1") })).toEqual({ status: 401, json: { requestSuccessful: false, responseCode: 99, responseMessage: "Access token expired" } })
      expect((await api("/api/v2/bank-transfer/reserved-accounts/f1")).status).toBe(404)
      fake.fault("reserved.create", "acceptThen5xx", 1)
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: body("f1") })).status).toBe(500)
      expect((await api("/api/v2/bank-transfer/reserved-accounts/f1")).status).toBe(200)
      expect((await api("/api/v2/bank-transfer/reserved-accounts", { body: body("f1") })).status).toBe(422)
      expect(fake.calls("reserved.create").map((c) => c.status)).toEqual([500, 429, 429, 401, 500, 422])
      fake.fault("banks.list", "5xx")
      expect((await api("/api/v1/banks", { auth: null })).status).toBe(401) // faults apply after auth
      expect((await api("/api/v1/banks")).status).toBe(500)
      expect((await api("/api/v1/banks")).status).toBe(500)
      fake.clearFaults()
      expect((await api("/api/v1/banks")).status).toBe(200)
    }))

  it("faults the login too: acceptThen5xx issues a token (counted) the client never sees", () =>
    withFake(async ({ fake }) => {
      const login = () => fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic(TEST_KEY, TEST_SECRET) } })
      fake.fault("auth.login", "5xx", 1)
      expect((await login()).status).toBe(500)
      expect(fake.logins(TEST_KEY)).toBe(0)
      fake.fault("auth.login", "acceptThen5xx", 1)
      expect((await login()).status).toBe(500)
      expect(fake.logins(TEST_KEY)).toBe(1)
      fake.fault("auth.login", "429", 1)
      expect((await login()).status).toBe(429)
      expect((await login()).status).toBe(200)
      expect(fake.logins(TEST_KEY)).toBe(2)
    }))

  it("hang does nothing, acceptThenHang pays; both are recorded with status 0", () =>
    withFake(async ({ fake, api, login }) => {
      const token = await login()
      const post = (ref: string) => fetch(`${fake.url}/api/v2/disbursements/single`, {
        method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(payout({ reference: ref })), signal: AbortSignal.timeout(200)
      })
      fake.fault("disbursement.single", "hang", 1)
      await expect(post("ref-hang-1")).rejects.toThrow()
      expect(fake.disbursements()).toEqual([])
      fake.fault("disbursement.single", "acceptThenHang", 1)
      await expect(post("ref-hang-2")).rejects.toThrow()
      expect(fake.disbursements().map((d) => d.reference)).toEqual(["ref-hang-2"])
      expect(fake.calls("disbursement.single").map((c) => c.status)).toEqual([0, 0])
      const again = await api("/api/v2/disbursements/single", { body: payout({ reference: "ref-hang-2" }) })
      expect(again.json.responseBody).toMatchObject({ reference: "ref-hang-2", status: "SUCCESS" })
    }))

  it("close() does not wait for a hung request nor a late delivery", async () => {
    const rx = await startReceiver()
    const fake = await startMonnifyFake()
    fake.addMerchant({ apiKey: TEST_KEY, secretKey: TEST_SECRET, contractCode: CONTRACT, walletAccountNumber: WALLET, webhookUrl: rx.url })
    const l = await fetch(`${fake.url}/api/v1/auth/login`, { method: "POST", headers: { authorization: basic(TEST_KEY, TEST_SECRET) } })
    const token = ((await l.json()) as any).responseBody.accessToken as string
    const res = await fetch(`${fake.url}/api/v2/bank-transfer/reserved-accounts`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ accountReference: "late", accountName: "Late", currencyCode: "NGN", contractCode: CONTRACT, customerEmail: "l@example.com", customerName: "L" })
    })
    const accountNumber = ((await res.json()) as any).responseBody.accounts[0].accountNumber as string
    const late = fake.credit({ accountNumber, amountNaira: 100, deliver: { afterMs: 60_000 } })
    fake.fault("banks.list", "hang")
    const pending = fetch(`${fake.url}/api/v1/banks`, { headers: { authorization: `Bearer ${token}` } })
    await waitForPromise("the fake to see the banks.list call", () => fake.calls("banks.list").length, { until: (n) => n === 1, timeoutMs: 3_000, intervalMs: 10 })
    const started = Date.now()
    await fake.close()
    expect(Date.now() - started).toBeLessThan(1000)
    await expect(pending).rejects.toThrow()
    expect((await late).statuses).toEqual([])
    expect(rx.received).toEqual([])
    await expect(fake.credit({ accountNumber, amountNaira: 100 })).rejects.toThrow("closed")
    await expect(fake.rejectPayment({ accountNumber, amountNaira: 100 })).rejects.toThrow("closed")
    await rx.close()
  })
})

describe("MonnifyFake: control routes", () => {
  it("credits, rejects, redelivers, faults and reports state over HTTP", () =>
    withFake(async ({ fake, rx, api }) => {
      const ra = await reserve(api, { accountReference: "ctl" })
      const accountNumber = ra.accounts[0]!.accountNumber
      const post = async (path: string, body: unknown) => {
        const r = await fetch(`${fake.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
        return { status: r.status, json: (await r.json()) as any }
      }
      const c = await post("/_fake/credit", { accountNumber, amountNaira: 3000, payerName: "ADA OBI" })
      expect(c.json).toMatchObject({ eventType: "SUCCESSFUL_TRANSACTION", statuses: [200] })
      expect(rx.events()[0]!.eventData["paymentSourceInformation"][0].accountName).toBe("ADA OBI")
      expect((await post("/_fake/reject", { accountNumber, amountNaira: 50 })).json.eventType).toBe("REJECTED_PAYMENT")
      expect((await post("/_fake/redeliver", { reference: c.json.reference })).json).toEqual({ status: 200 })
      expect(rx.received[2]!.body).toBe(rx.received[0]!.body)
      expect((await post("/_fake/redeliver", { reference: "nope" })).status).toBe(404)
      expect((await post("/_fake/credit", { accountNumber: "0000000000", amountNaira: 1 })).status).toBe(400)
      await post("/_fake/fault", { op: "banks.list", fault: "429", times: 1 })
      expect((await api("/api/v1/banks")).status).toBe(429)
      await post("/_fake/fault", { op: "banks.list", fault: "5xx" })
      await post("/_fake/clear-faults", {})
      expect((await api("/api/v1/banks")).status).toBe(200)
      const state = (await (await fetch(`${fake.url}/_fake/state`)).json()) as any
      expect(state.merchants.map((m: any) => m.mode)).toEqual(["sandbox", "live"])
      expect(state.reservedAccounts).toEqual([{ accountReference: "ctl", accountNumber, bankCode: "50515", customerEmail: "ada@example.com" }])
      expect(state.deliveries.map((d: any) => d.eventType)).toEqual(["SUCCESSFUL_TRANSACTION", "REJECTED_PAYMENT"])
      expect(state.deliveries[0].body).toBeUndefined()
      expect(fake.calls().some((c) => c.path.startsWith("/_fake/"))).toBe(false)
    }))
})
