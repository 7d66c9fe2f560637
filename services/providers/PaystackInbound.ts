import { SqlClient } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import { BadRequest, Unauthorized } from "../../src/contract/Problems.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { ReceiverAnswer } from "../deposits/Receiver.js"
import { TransferOutcomes } from "../transfers/Outcomes.js"
import { type Connection, Connections } from "./Connections.js"
import { ProviderCredits } from "./ProviderCredits.js"
import { accountAt, signerOf, transferAt } from "./SignedWebhook.js"
import { Charge, creditOfCharge, DVA_CHANNEL, isDvaCredit, TransferEvent, WebhookHead } from "./PaystackWire.js"

export const PAYSTACK_SIGNATURE_HEADER = "x-paystack-signature"

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
export class PaystackInbound extends Effect.Service<PaystackInbound>()("services/providers/PaystackInbound", {
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
          const row = yield* accountAt("paystack", nuban)
          const code = head.data.customer?.customer_code
          if (row?.reference && code && row.reference !== code) {
            yield* Effect.logWarning(`paystack credit to ${nuban}: its customer ${code} is not the account's ${row.reference}; routed by the NUBAN`)
          }
          return row
        }
        return head.event in OUTCOMES && head.data.reference ? yield* transferAt("paystack", head.data.reference) : undefined
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** The routed connection if it signed the body; else (nothing routed) any of the mode's the event's `domain` names. */
    const signedBy = (route: Scope | undefined, domain: string | undefined, rawBody: string, signature: string | undefined) =>
      signerOf("paystack", route, domain === "live" ? ["live"] : domain === "test" ? ["test"] : ["test", "live"], rawBody, signature).pipe(
        Effect.provideService(Connections, connections)
      )

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

    /** `merchantTxRef`: the transfer routeOf found by its provider reference (undefined: not ours, ignored). */
    const transferOutcome = (c: Connection, body: unknown, merchantTxRef: string | undefined) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(TransferEvent)(body)
        if (Either.isLeft(decoded)) {
          yield* Effect.logError("a signed paystack transfer event failed validation; ignored")
          return { result: "ignored" as const, reference: null }
        }
        const e = decoded.right
        if (merchantTxRef === undefined) return { result: "ignored" as const, reference: e.data.reference }
        const outcome = OUTCOMES[e.event]
        const reason = outcome === "failed"
          ? `Paystack reported the transfer failed${e.data.gateway_response ? `: ${e.data.gateway_response}` : ""}`
          : outcome === "reversed" ? "The beneficiary bank returned the funds (Paystack transfer.reversed)" : null
        const accountNumber = e.data.recipient?.details?.account_number ?? undefined
        const result = yield* outcomes.apply({ tenantId: c.tenantId, mode: c.mode }, merchantTxRef, outcome, e.data.reference, reason,
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
      const signer = yield* signedBy(route, head.right.data.domain, rawBody, signature)
      if (!signer) return yield* badSignature()
      const reference = head.right.data.reference ?? null
      const event = head.right.event
      if (event === "charge.success") {
        if (head.right.data.channel !== DVA_CHANNEL) return { result: "ignored", reference } satisfies ReceiverAnswer
        return (yield* credit(signer, (body as { data: unknown }).data, reference)) satisfies ReceiverAnswer
      }
      if (event in OUTCOMES) return (yield* transferOutcome(signer, body, route && "merchantTxRef" in route ? route.merchantTxRef : undefined)) satisfies ReceiverAnswer
      return { result: "ignored", reference } satisfies ReceiverAnswer
    })

    return { receive } as const
  })
}) {}
