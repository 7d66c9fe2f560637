/**
 * The Paystack fake as a standalone server, for a local rehearsal:
 *
 *   node --import tsx test/fakes/paystack-server.ts --port 4010 --secret-key sk_test_xxx \
 *     --webhook-url http://127.0.0.1:8080/webhooks/paystack [--business-name "Karokart"] [--balance-kobo 100000000] [--transfer-otp]
 *
 * Point the service at the printed URL instead of https://api.paystack.co. `--secret-key` may be repeated
 * (each registers an integration; sk_test_ → domain "test", sk_live_ → "live"), all sharing the webhook URL.
 *
 * Control routes (not part of Paystack's API, no auth):
 *   curl -XPOST localhost:4010/_fake/credit -H 'content-type: application/json' \
 *        -d '{"accountNumber":"9930000015","amountKobo":500000,"senderName":"ADA OBI"}'
 *        optional: "reference", "senderBank", "narration", "deliver": "now"|"never"|"twice"
 *   curl -XPOST localhost:4010/_fake/redeliver -d '{"reference":"qTPrJoy9Bx"}' -H 'content-type: application/json'
 *   curl -XPOST localhost:4010/_fake/fault -d '{"op":"transfer.create","fault":"5xx","times":1}' -H 'content-type: application/json'
 *        faults: 5xx | hang | 429 | acceptThenHang | acceptThen5xx
 *   curl -XPOST localhost:4010/_fake/clear-faults
 *   curl localhost:4010/_fake/state
 *
 * Stdin commands (one a line):
 *   credit <accountNumber> <amountKobo> [sender name…]    deliver a charge.success
 *   accounts | transfers | deliveries | calls              print the fake's state
 *   fault <op> <fault> [times] | clear                      fault injection
 *   quit
 */
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { startPaystackFake, type Fault, type FakeOperation } from "./PaystackFake.js"

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4010" },
    "secret-key": { type: "string", multiple: true },
    "webhook-url": { type: "string" },
    "business-name": { type: "string" },
    "balance-kobo": { type: "string" },
    "transfer-otp": { type: "boolean", default: false }
  }
})

const keys = values["secret-key"] ?? []
if (keys.length === 0) {
  console.error("usage: paystack-server.ts --secret-key sk_test_… [--port 4010] [--webhook-url URL] [--business-name NAME] [--balance-kobo N] [--transfer-otp]")
  process.exit(2)
}

const fake = await startPaystackFake({ port: Number(values.port), webhookRetryDelaysMs: [5_000, 15_000, 60_000, 180_000], transferReportDelayMs: 2_000 })
for (const secretKey of keys) {
  fake.addIntegration({
    secretKey, transferOtp: values["transfer-otp"] ?? false,
    ...(values["webhook-url"] === undefined ? {} : { webhookUrl: values["webhook-url"] }),
    ...(values["business-name"] === undefined ? {} : { businessName: values["business-name"] }),
    ...(values["balance-kobo"] === undefined ? {} : { balanceKobo: Number(values["balance-kobo"]) })
  })
}
console.log(`Paystack fake listening on ${fake.url} (${keys.length} integration(s); webhooks → ${values["webhook-url"] ?? "none"})`)
console.log(`  credit a DVA:  curl -XPOST ${fake.url}/_fake/credit -H 'content-type: application/json' -d '{"accountNumber":"…","amountKobo":500000}'`)
console.log("  or type `credit <accountNumber> <amountKobo> [sender name]` here; `help` for more")

const print = (x: unknown) => console.log(JSON.stringify(x, null, 2))
const HELP = "credit <account> <kobo> [sender name] | accounts | transfers | deliveries | calls | fault <op> <fault> [times] | clear | quit"

const command = async (line: string) => {
  const [cmd, ...args] = line.trim().split(/\s+/)
  switch (cmd) {
    case undefined:
    case "":
      return
    case "credit": {
      const [accountNumber, amount, ...name] = args
      const d = await fake.credit({ accountNumber: accountNumber ?? "", amountKobo: Number(amount), ...(name.length > 0 ? { senderName: name.join(" ") } : {}) })
      return print({ event: d.event, reference: d.reference, statuses: d.statuses })
    }
    case "accounts":
      return print(fake.dedicatedAccounts())
    case "transfers":
      return print(fake.transfers())
    case "deliveries":
      return print(fake.deliveries().map(({ body: _body, ...d }) => d))
    case "calls":
      return print(fake.calls().map((c) => `${c.status} ${c.method} ${c.path} (${c.op})`))
    case "fault":
      fake.fault(args[0] as FakeOperation, args[1] as Fault, ...(args[2] === undefined ? [] : [Number(args[2])]))
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
