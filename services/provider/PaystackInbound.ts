import { SqlClient } from "@effect/sql"
import { Effect, Either, Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import { BadRequest, Unauthorized } from "../../src/contract/Problems.js"
import type { Mode, Scope } from "../../src/domain/Mode.js"
import type { ReceiverAnswer } from "../deposits/Receiver.js"
import { TransferOutcomes } from "../transfers/Outcomes.js"
import { type Connection, Connections } from "./Connections.js"
import { ProviderCredits } from "./ProviderCredits.js"
import { Charge, creditOfCharge, DVA_CHANNEL, isDvaCredit, TransferEvent, WebhookHead } from "./PaystackWire.js"

export const PAYSTACK_SIGNATURE_HEADER = "x-paystack-signature"

/** Lower-case hex HMAC-SHA512 of the raw body, keyed with the secret key (PROVIDERS.md A3). */
export const signPaystackBody = (secretKey: string, rawBody: string) => crypto.createHmac("sha512", secretKey).update(rawBody, "utf8").digest("hex")

/** Constant-time check of `x-paystack-signature` against the connection's secret key. */
export const verifyPaystackSignature = (secretKey: Redacted.Redacted<string>, rawBody: string, signature: string | undefined) => {
  if (!signature || !/^[0-9a-fA-F]{128}$/.test(signature)) return false
  const expected = Buffer.from(signPaystackBody(Redacted.value(secretKey), rawBody), "hex")
  return crypto.timingSafeEqual(expected, Buffer.from(signature.toLowerCase(), "hex"))
}

const badSignature = () =>
  new Unauthorized({ code: "invalid_signature", message: "Missing or invalid x-paystack-signature: it must be the HMAC-SHA512 of the raw body keyed with the secret key of the Paystack connection that owns the account." })

const OUTCOMES = { "transfer.success": "success", "transfer.failed": "failed", "transfer.reversed": "reversed" } as const

/**
 * Paystack's webhooks at `/webhooks/paystack` (DESIGN.md, "Real bank providers"). The event names the tenant only
 * through what it is about: a credit through the receiving NUBAN (one of our Paystack accounts), a transfer outcome
 * through the reference we derived for the transfer. That tenant's connection's secret key must verify the
 * signature, else 401 with nothing recorded; so a webhook signed with tenant A's key about tenant B's account is
 * refused. An event that names nothing of ours (a NUBAN we never issued, another event type) is checked against the
 * mode's Paystack connections, and answered `unmatched` or `ignored` only when one of them signed it.
 *
 * A verified credit goes through the same inbox and pipeline as the sandbox's (Receiver.accept): `processed`, then
 * `duplicate` for any later delivery of the same transaction reference, however late.
 */
export class PaystackInbound extends Effect.Service<PaystackInbound>()("services/provider/PaystackInbound", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const connections = yield* Connections
    const outcomes = yield* TransferOutcomes
    const credits = yield* ProviderCredits

    /** Who the event is about, by our own records: the scope, or undefined when nothing of ours matches. */
    const routeOf = (head: typeof WebhookHead.Type) =>
      Effect.gen(function* () {
        if (head.event === "charge.success") {
          const nuban = head.data.authorization?.receiver_bank_account_number
          if (!nuban) return undefined
          const [row] = yield* sql<{ tenantId: string; mode: Mode; providerCustomerCode: string | null }>`
            SELECT tenant_id, mode, provider_customer_code FROM virtual_accounts WHERE provider = 'paystack' AND nuban = ${nuban} LIMIT 1`
          if (row && row.providerCustomerCode && head.data.customer?.customer_code && row.providerCustomerCode !== head.data.customer.customer_code) {
            yield* Effect.logWarning(`paystack credit to ${nuban}: its customer ${head.data.customer.customer_code} is not the account's ${row.providerCustomerCode}; routed by the NUBAN`)
          }
          return row ? ({ tenantId: row.tenantId, mode: row.mode } satisfies Scope) : undefined
        }
        if (head.event in OUTCOMES && head.data.reference) {
          const [row] = yield* sql<{ tenantId: string; mode: Mode }>`
            SELECT tenant_id, mode FROM transfers WHERE provider = 'paystack' AND provider_reference = ${head.data.reference} LIMIT 1`
          return row
        }
        return undefined
      }).pipe(Effect.orDie)

    /** The connection that signed the body: the routed scope's, else (nothing routed) any of the mode's. */
    const signerOf = (route: Scope | undefined, domain: string | undefined, rawBody: string, signature: string | undefined) =>
      Effect.gen(function* () {
        if (route) {
          const c = yield* connections.find(route)
          return c && c.provider === "paystack" && verifyPaystackSignature(c.secretKey, rawBody, signature) ? c : undefined
        }
        const modes: ReadonlyArray<Mode> = domain === "live" ? ["live"] : domain === "test" ? ["test"] : ["test", "live"]
        for (const mode of modes) {
          for (const c of yield* connections.allOf("paystack", mode)) {
            if (verifyPaystackSignature(c.secretKey, rawBody, signature)) return c
          }
        }
        return undefined
      })

    const credit = (c: Connection, data: unknown, reference: string | null) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(Charge)(data)
        if (Either.isLeft(decoded)) {
          yield* sql`INSERT INTO poison_messages ${sql.insert({ source: "receiver", subject: "paystack", streamSeq: null, reason: "signed charge.success failed validation", payload: JSON.stringify(data).slice(0, 8000) })}`.pipe(Effect.orDie)
          yield* Effect.logError(`signed paystack charge.success ${reference ?? "(no reference)"} failed validation; recorded in poison_messages`)
          return { result: "ignored" as const, reference }
        }
        if (!isDvaCredit(decoded.right)) return { result: "ignored" as const, reference: decoded.right.reference }
        return yield* credits.accept(c, creditOfCharge(decoded.right))
      })

    const transferOutcome = (c: Connection, body: unknown) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(TransferEvent)(body)
        if (Either.isLeft(decoded)) {
          yield* Effect.logError("a signed paystack transfer event failed validation; ignored")
          return { result: "ignored" as const, reference: null }
        }
        const e = decoded.right
        const [row] = yield* sql<{ merchantTxRef: string }>`SELECT merchant_tx_ref FROM transfers
          WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode} AND provider = 'paystack' AND provider_reference = ${e.data.reference}`.pipe(Effect.orDie)
        if (!row) return { result: "ignored" as const, reference: e.data.reference }
        const outcome = OUTCOMES[e.event]
        const reason = outcome === "failed"
          ? `Paystack reported the transfer failed${e.data.gateway_response ? `: ${e.data.gateway_response}` : ""}`
          : outcome === "reversed" ? "The beneficiary bank returned the funds (Paystack transfer.reversed)" : null
        const accountNumber = e.data.recipient?.details?.account_number ?? undefined
        const result = yield* outcomes.apply({ tenantId: c.tenantId, mode: c.mode }, row.merchantTxRef, outcome, e.data.reference, reason,
          accountNumber ? { amountKobo: e.data.amount, accountNumber } : undefined)
        return { result, reference: e.data.reference }
      })

    const receive = Effect.fn("PaystackInbound.receive")(function* (rawBody: string, signature: string | undefined) {
      let body: unknown
      try {
        body = JSON.parse(rawBody)
      } catch {
        return yield* new BadRequest({ code: "malformed_request", message: "The webhook body is not valid JSON." })
      }
      const head = Schema.decodeUnknownEither(WebhookHead)(body)
      if (Either.isLeft(head)) return yield* badSignature()
      const route = yield* routeOf(head.right)
      const signer = yield* signerOf(route, head.right.data.domain, rawBody, signature)
      if (!signer) return yield* badSignature()
      const reference = head.right.data.reference ?? null
      const event = head.right.event
      if (event === "charge.success") {
        if (head.right.data.channel !== DVA_CHANNEL) return { result: "ignored", reference } satisfies ReceiverAnswer
        return (yield* credit(signer, (body as { data: unknown }).data, reference)) satisfies ReceiverAnswer
      }
      if (event in OUTCOMES) return (yield* transferOutcome(signer, body)) satisfies ReceiverAnswer
      return { result: "ignored", reference } satisfies ReceiverAnswer
    })

    return { receive } as const
  })
}) {}
