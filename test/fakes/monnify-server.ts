/**
 * The Monnify fake as a standalone server, for a local rehearsal:
 *
 *   node --import tsx test/fakes/monnify-server.ts --port 4020 --api-key MK_TEST_XXXXXXXXXX --secret-key SECRET \
 *     --contract-code 1234567890 --wallet 3934178936 --webhook-url http://127.0.0.1:8080/webhooks/monnify \
 *     [--balance-kobo 100000000] [--mfa on|off] [--token-ttl 3600]
 *
 * Point the service at the printed URL instead of https://sandbox.monnify.com or https://api.monnify.com (one server
 * stands for both; the key prefix MK_TEST_ / MK_PROD_ decides the mode). MFA is on by default, as Monnify's is: a
 * disbursement then waits for validate-otp with code 123456.
 *
 * Control routes (not part of Monnify's API, no auth):
 *   curl -XPOST localhost:4020/_fake/credit -H 'content-type: application/json' \
 *        -d '{"accountNumber":"6106000015","amountNaira":3000,"payerName":"ADA OBI"}'
 *        optional: "transactionReference", "payerAccountNumber", "payerBankCode", "sessionId", "signWith", "deliver": "now"|"never"|"twice"
 *   curl -XPOST localhost:4020/_fake/reject -d '{"accountNumber":"6106000015","amountNaira":500}' -H 'content-type: application/json'
 *   curl -XPOST localhost:4020/_fake/redeliver -d '{"reference":"MNFY|04|20211117112842|000170"}' -H 'content-type: application/json'
 *   curl -XPOST localhost:4020/_fake/fault -d '{"op":"disbursement.single","fault":"5xx","times":1}' -H 'content-type: application/json'
 *        faults: 5xx | hang | 429 | acceptThenHang | acceptThen5xx | expiredToken
 *   curl -XPOST localhost:4020/_fake/clear-faults
 *   curl localhost:4020/_fake/state
 *
 * Stdin commands (one a line):
 *   credit <accountNumber> <amountNaira> [payer name…]     deliver a SUCCESSFUL_TRANSACTION
 *   reject <accountNumber> <amountNaira> [reason]          deliver a REJECTED_PAYMENT
 *   accounts | disbursements | deliveries | calls          print the fake's state
 *   mfa on|off | fault <op> <fault> [times] | clear
 *   quit
 */
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { startMonnifyFake, type Fault, type MonnifyOperation } from "./MonnifyFake.js"

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4020" },
    "api-key": { type: "string" },
    "secret-key": { type: "string" },
    "contract-code": { type: "string" },
    wallet: { type: "string" },
    "webhook-url": { type: "string" },
    "balance-kobo": { type: "string" },
    mfa: { type: "string", default: "on" },
    "token-ttl": { type: "string" }
  }
})

const apiKey = values["api-key"]
const secretKey = values["secret-key"]
const contractCode = values["contract-code"]
const wallet = values.wallet
if (apiKey === undefined || secretKey === undefined || contractCode === undefined || wallet === undefined) {
  console.error("usage: monnify-server.ts --api-key MK_TEST_… --secret-key S --contract-code C --wallet W [--port 4020] [--webhook-url URL] [--balance-kobo N] [--mfa on|off] [--token-ttl SECONDS]")
  process.exit(2)
}

// Webhook retries at 5 s, 15 s, 1 min, 3 min: Monnify's 12 × 5 min (B3), compressed for a rehearsal.
const fake = await startMonnifyFake({ port: Number(values.port), webhookRetryDelaysMs: [5_000, 15_000, 60_000, 180_000], disbursementReportDelayMs: 2_000 })
fake.addMerchant({
  apiKey, secretKey, contractCode, walletAccountNumber: wallet, mfa: values.mfa !== "off",
  ...(values["webhook-url"] === undefined ? {} : { webhookUrl: values["webhook-url"] }),
  ...(values["balance-kobo"] === undefined ? {} : { walletBalanceKobo: Number(values["balance-kobo"]) }),
  ...(values["token-ttl"] === undefined ? {} : { tokenTtlSeconds: Number(values["token-ttl"]) })
})
console.log(`Monnify fake listening on ${fake.url} (${apiKey.startsWith("MK_PROD_") ? "live" : "sandbox"}; MFA ${values.mfa !== "off" ? "on" : "off"}; webhooks → ${values["webhook-url"] ?? "none"})`)
console.log(`  credit a reserved account:  curl -XPOST ${fake.url}/_fake/credit -H 'content-type: application/json' -d '{"accountNumber":"…","amountNaira":3000}'`)
console.log("  or type `credit <accountNumber> <amountNaira> [payer name]` here; `help` for more")

const print = (x: unknown) => console.log(JSON.stringify(x, null, 2))
const HELP = "credit <account> <naira> [payer name] | reject <account> <naira> [reason] | accounts | disbursements | deliveries | calls | mfa on|off | fault <op> <fault> [times] | clear | quit"

const command = async (line: string) => {
  const [cmd, ...args] = line.trim().split(/\s+/)
  switch (cmd) {
    case undefined:
    case "":
      return
    case "credit": {
      const [accountNumber, amount, ...name] = args
      const d = await fake.credit({ accountNumber: accountNumber ?? "", amountNaira: amount ?? "", ...(name.length > 0 ? { payerName: name.join(" ") } : {}) })
      return print({ eventType: d.eventType, reference: d.reference, statuses: d.statuses })
    }
    case "reject": {
      const [accountNumber, amount, reason] = args
      const d = await fake.rejectPayment({ accountNumber: accountNumber ?? "", amountNaira: Number(amount), ...(reason === undefined ? {} : { reason }) })
      return print({ eventType: d.eventType, reference: d.reference, statuses: d.statuses })
    }
    case "accounts":
      return print(fake.reservedAccounts())
    case "disbursements":
      return print(fake.disbursements())
    case "deliveries":
      return print(fake.deliveries().map(({ body: _body, ...d }) => d))
    case "calls":
      return print(fake.calls().map((c) => `${c.status} ${c.method} ${c.path} (${c.op})`))
    case "mfa":
      fake.setMfa(apiKey, args[0] !== "off")
      return console.log(`MFA ${args[0] !== "off" ? "on" : "off"}`)
    case "fault":
      fake.fault(args[0] as MonnifyOperation, args[1] as Fault, ...(args[2] === undefined ? [] : [Number(args[2])]))
      return console.log("ok")
    case "clear":
      fake.clearFaults()
      return console.log("ok")
    case "quit":
    case "exit":
      return shutdown()
    default:
      return console.log(HELP)
  }
}

const shutdown = async () => {
  await fake.close()
  process.exit(0)
}
process.on("SIGINT", () => void shutdown())
process.on("SIGTERM", () => void shutdown())

createInterface({ input: process.stdin }).on("line", (line) => {
  command(line).catch((e: unknown) => console.error(e instanceof Error ? e.message : String(e)))
})
