import { Effect, Layer, Queue, Stream } from "effect"
import { DepositBus, type Delivery, type DepositEnvelope } from "./DepositBus.js"

/**
 * The embedded default's deposit stream: a bounded in-memory queue. It holds nothing durable; the Postgres inbox
 * does, and the sweeper re-feeds any inbox row not reconciled in time, so a restart loses nothing.
 */
export const InProcessDepositBusLive = Layer.effect(
  DepositBus,
  Effect.gen(function* () {
    type Item = { envelope: DepositEnvelope; deliveryCount: number; traceparent?: string | undefined }
    const queue = yield* Queue.dropping<Item>(50_000)
    const toDelivery = (item: Item): Delivery => ({
      envelope: item.envelope,
      subject: `deposits.${item.envelope.tenantId}.${item.envelope.mode}.${item.envelope.accountNumber}`,
      streamSeq: null,
      deliveryCount: item.deliveryCount,
      ack: Effect.void,
      nak: (delayMs) =>
        Effect.sleep(delayMs).pipe(Effect.zipRight(Queue.offer(queue, { ...item, deliveryCount: item.deliveryCount + 1 })), Effect.forkDaemon, Effect.asVoid),
      term: Effect.void,
      traceparent: item.traceparent
    })
    return DepositBus.of({
      kind: "in-process",
      maxDeliver: 8,
      publish: (envelopes, traceparents) =>
        Queue.offerAll(queue, envelopes.map((envelope, i) => ({ envelope, deliveryCount: 1, traceparent: traceparents?.[i] }))).pipe(Effect.asVoid),
      deliveries: Stream.fromQueue(queue).pipe(Stream.map(toDelivery))
    })
  })
)
