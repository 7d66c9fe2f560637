import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Schema } from "effect"
import { BadRequest, Unauthorized } from "../../src/contract/Problems.js"
import { nairaToKobo } from "../../src/domain/Naira.js"
import type { ReceiverAnswer } from "../deposits/Receiver.js"
import { TransferOutcomes } from "../transfers/Outcomes.js"
import { type Connection, Connections } from "./Connections.js"
import { Collection, creditOfCollection, DisbursementEvent, RejectedPayment, WebhookHead } from "./MonnifyWire.js"
import { ProviderCredits } from "./ProviderCredits.js"
import { accountAt, signerOf, transferAt } from "./SignedWebhook.js"

export const MONNIFY_SIGNATURE_HEADER = "monnify-signature"

const badSignature = () =>
  new Unauthorized({ code: "invalid_signature", message: "Missing or invalid monnify-signature: it must be the HMAC-SHA512 of the raw body keyed with the client secret of the Monnify connection that owns the account." })

const OUTCOMES = { SUCCESSFUL_DISBURSEMENT: "success", FAILED_DISBURSEMENT: "failed", REVERSED_DISBURSEMENT: "reversed" } as const

/**
 * Monnify's webhooks at `/webhooks/monnify` (DESIGN.md, "Real bank providers"; PROVIDERS.md B3, B6). As with
 * Paystack, the event names its tenant only through what it is about (the credited NUBAN, cross-checked with
 * `product.reference`; a disbursement's reference), and that tenant's connection's client secret must verify the
 * signature, else 401 with nothing recorded.
 * - `SUCCESSFUL_TRANSACTION` of a reserved account: the pipeline's credit, amounts converted to kobo exactly from
 *   their decimal text (a fraction finer than a kobo is refused and logged, never rounded); the payer and the NIP
 *   session id kept.
 * - `SUCCESSFUL_|FAILED_|REVERSED_DISBURSEMENT`: finish our transfers.
 * - `REJECTED_PAYMENT`: money that never arrived: recorded in `rejected_payments`, never credited; answered `ignored`.
 * - anything else signed: `ignored`.
 */
export class MonnifyInbound extends Effect.Service<MonnifyInbound>()("services/providers/MonnifyInbound", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const connections = yield* Connections
    const outcomes = yield* TransferOutcomes
    const credits = yield* ProviderCredits

    /** Who the event is about, by our own records: the scope (and a transfer's merchantTxRef), or undefined. */
    const routeOf = (head: typeof WebhookHead.Type) =>
      Effect.gen(function* () {
        const d = head.eventData
        if (head.eventType in OUTCOMES) return d.reference ? yield* transferAt("monnify", d.reference) : undefined
        const nuban = head.eventType === "REJECTED_PAYMENT" ? d.paymentRejectionInformation?.destinationAccountNumber : d.destinationAccountInformation?.accountNumber
        if (!nuban) return undefined
        const row = yield* accountAt("monnify", nuban)
        if (row && head.eventType === "SUCCESSFUL_TRANSACTION" && d.product?.reference && row.reference && d.product.reference !== row.reference) {
          yield* Effect.logWarning(`monnify credit to ${nuban}: its product.reference ${d.product.reference} is not the account's ${row.reference}; routed by the NUBAN`)
        }
        return row
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    const poison = (reason: string, rawBody: string) =>
      sql`INSERT INTO poison_messages ${sql.insert({ source: "receiver", subject: "monnify", streamSeq: null, reason, payload: rawBody.slice(0, 8000) })}`.pipe(Effect.orDie)

    const collection = (c: Connection, data: unknown, rawBody: string, reference: string | null) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(Collection)(data)
        if (Either.isLeft(decoded)) {
          yield* poison("signed SUCCESSFUL_TRANSACTION failed validation", rawBody)
          yield* Effect.logError(`signed monnify SUCCESSFUL_TRANSACTION ${reference ?? "(no reference)"} failed validation; recorded in poison_messages`)
          return { result: "ignored" as const, reference }
        }
        const credit = creditOfCollection(decoded.right, new Date(yield* Clock.currentTimeMillis))
        if (Either.isLeft(credit)) {
          // Not a reserved-account credit we take (another product), or an amount we cannot hold exactly.
          if (/amountPaid/.test(credit.left)) {
            yield* poison(`signed SUCCESSFUL_TRANSACTION refused: ${credit.left}`, rawBody)
            yield* Effect.logError(`monnify credit ${decoded.right.transactionReference} refused: ${credit.left}; recorded in poison_messages`)
          }
          return { result: "ignored" as const, reference: decoded.right.transactionReference }
        }
        return yield* credits.accept(c, credit.right)
      })

    const rejected = (c: Connection, data: unknown, reference: string | null) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(RejectedPayment)(data)
        if (Either.isLeft(decoded)) return { result: "ignored" as const, reference }
        const r = decoded.right
        const payer = Array.isArray(r.paymentSourceInformation) ? r.paymentSourceInformation[0] : r.paymentSourceInformation
        const amount = nairaToKobo(payer?.amountPaid ?? r.amount)
        const reason = r.paymentRejectionInformation?.rejectionReason ?? null
        yield* sql`INSERT INTO rejected_payments ${sql.insert({
          tenantId: c.tenantId, mode: c.mode, provider: "monnify", transactionReference: r.transactionReference,
          accountNumber: r.paymentRejectionInformation?.destinationAccountNumber ?? null, amountKobo: Either.getOrNull(amount), reason, payload: JSON.stringify(data)
        })} ON CONFLICT (tenant_id, mode, provider, transaction_reference) DO NOTHING`.pipe(Effect.orDie)
        yield* Effect.logInfo(`monnify rejected payment ${r.transactionReference} to tenant ${c.tenantId} (${c.mode}): ${reason ?? "no reason"}; the money never arrived, nothing credited`)
        return { result: "ignored" as const, reference: r.transactionReference }
      })

    /** `merchantTxRef`: the transfer routeOf found by its reference (undefined: not ours, ignored). */
    const disbursement = (c: Connection, body: unknown, merchantTxRef: string | undefined) =>
      Effect.gen(function* () {
        const decoded = Schema.decodeUnknownEither(DisbursementEvent)(body)
        if (Either.isLeft(decoded)) {
          yield* Effect.logError("a signed monnify disbursement event failed validation; ignored")
          return { result: "ignored" as const, reference: null }
        }
        const e = decoded.right
        if (merchantTxRef === undefined) return { result: "ignored" as const, reference: e.eventData.reference }
        const outcome = OUTCOMES[e.eventType]
        const amount = nairaToKobo(e.eventData.amount)
        const reason = outcome === "failed"
          ? `Monnify reported the transfer failed${e.eventData.transactionDescription ? `: ${e.eventData.transactionDescription}` : ""}`
          : outcome === "reversed" ? "The beneficiary bank returned the funds (Monnify REVERSED_DISBURSEMENT)" : null
        const reported = Either.isRight(amount) && e.eventData.destinationAccountNumber ? { amountKobo: amount.right, accountNumber: e.eventData.destinationAccountNumber } : undefined
        const result = yield* outcomes.apply({ tenantId: c.tenantId, mode: c.mode }, merchantTxRef, outcome, e.eventData.reference, reason, reported)
        return { result, reference: e.eventData.reference }
      })

    const receive = Effect.fn("MonnifyInbound.receive")(function* (rawBody: string, signature: string | undefined) {
      let body: unknown
      try {
        body = JSON.parse(rawBody)
      } catch {
        return yield* new BadRequest({ code: "malformed_request", message: "The webhook body is not valid JSON." })
      }
      const head = Schema.decodeUnknownEither(WebhookHead)(body)
      if (Either.isLeft(head)) return yield* badSignature()
      const route = yield* routeOf(head.right)
      const signer = yield* signerOf("monnify", route, ["test", "live"], rawBody, signature).pipe(Effect.provideService(Connections, connections))
      if (!signer) return yield* badSignature()
      const data = (body as { eventData: unknown }).eventData
      const reference = head.right.eventData.transactionReference ?? head.right.eventData.reference ?? null
      switch (head.right.eventType) {
        case "SUCCESSFUL_TRANSACTION": return (yield* collection(signer, data, rawBody, reference)) satisfies ReceiverAnswer
        case "REJECTED_PAYMENT": return (yield* rejected(signer, data, reference)) satisfies ReceiverAnswer
        case "SUCCESSFUL_DISBURSEMENT":
        case "FAILED_DISBURSEMENT":
        case "REVERSED_DISBURSEMENT": return (yield* disbursement(signer, body, route && "merchantTxRef" in route ? route.merchantTxRef : undefined)) satisfies ReceiverAnswer
        default: return { result: "ignored", reference } satisfies ReceiverAnswer
      }
    })

    return { receive } as const
  })
}) {}
