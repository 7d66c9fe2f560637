import { Context, Data, type Effect, type Stream } from "effect"
import type { Mode } from "../src/domain/Mode.js"

/** What travels on the deposit stream: a pointer to the inbox row plus the routing key. */
export interface DepositEnvelope {
  readonly inboxId: number
  readonly tenantId: string
  readonly mode: Mode
  readonly provider: string
  readonly reference: string
  readonly accountNumber: string
}

/** One delivery of a message to the reconciler, with the broker's acknowledgement verbs. */
export interface Delivery {
  /** Left: the raw payload that could not be decoded (a poison message). */
  readonly envelope: DepositEnvelope | { readonly undecodable: string }
  readonly subject: string
  readonly streamSeq: number | null
  readonly deliveryCount: number
  readonly ack: Effect.Effect<void>
  readonly nak: (delayMs: number) => Effect.Effect<void>
  readonly term: Effect.Effect<void>
  /** Tells the broker the message is still being worked on (resets its ack_wait); absent where there is no ack_wait. */
  readonly working?: () => void
  /** The publisher's W3C trace context (a `traceparent` header), when it sent one; read only with tracing on. */
  readonly traceparent?: string | undefined
}

export class BusError extends Data.TaggedError("BusError")<{ readonly message: string; readonly cause?: unknown }> {}

/** A partition was taken over by a later ownership (a newer epoch's consumer exists): this one must stop. */
export class PartitionSuperseded extends Data.TaggedError("PartitionSuperseded")<{ readonly partition: number; readonly epoch: number }> {}

/**
 * A bus whose deliveries come by partition, each partition read by ONE process at a time (JetStream: a subject
 * partition per account key, see Topology.depositPartition). Who owns a partition is decided outside the bus (the
 * reconciler's leases, PartitionLeases); the bus serves an owner its partition.
 */
export interface PartitionedDeliveries {
  /** How many partitions (DEPOSIT_PARTITIONS). */
  readonly count: number
  /** Under what name the partitions' leases are kept: the deposit stream's. */
  readonly key: string
  /**
   * Whether the bus can deliver now (NATS reachable). A process that cannot renews no lease and counts as no member, so
   * the processes that can take its partitions over once its leases run out.
   */
  readonly connected: Effect.Effect<boolean>
  /**
   * Reads partition `partition` for the ownership `epoch` until interrupted, handing each delivery to `deliver`, in
   * stream order, as it arrives (synchronously, from the client's callback: nothing stands between the broker and the
   * reader's queue). Opening it takes the partition over from any earlier ownership: its messages start where the
   * previous owner's had got to (everything not acked comes again, in order), and the previous owner can no longer be
   * delivered any. Fails with PartitionSuperseded when a later ownership already exists. `deliver` must not throw.
   */
  readonly open: (partition: number, epoch: number, deliver: (d: Delivery) => void) => Effect.Effect<never, BusError | PartitionSuperseded>
}

/** The deposit stream: JetStream in production, an in-process queue for the embedded default. */
export interface DepositBusShape {
  readonly kind: "jetstream" | "in-process"
  /**
   * `traceparents`, given (tracing on: src/TraceContext.ts), line up with the envelopes: each message's trace context,
   * sent beside it (a `traceparent` header on JetStream), never in its body.
   */
  readonly publish: (envelopes: ReadonlyArray<DepositEnvelope>, traceparents?: ReadonlyArray<string | undefined>) => Effect.Effect<void, BusError>
  /** Every delivery, for a bus one process reads whole (the in-process bus); empty on a partitioned bus. */
  readonly deliveries: Stream.Stream<Delivery, BusError>
  /** Present on a bus read by partitions (JetStream): the reconciler then reads only the partitions it owns. */
  readonly partitioned?: PartitionedDeliveries
  /** The most times a message is delivered before the broker gives up on it. */
  readonly maxDeliver: number
  /**
   * How often a consumer must call `working()` on each message it still holds so the broker does not redeliver it
   * (well inside the broker's ack_wait); absent when the bus never redelivers on its own.
   */
  readonly progressEveryMs?: number
}

export class DepositBus extends Context.Tag("streams/DepositBus")<DepositBus, DepositBusShape>() {}

export const isDecoded = (e: Delivery["envelope"]): e is DepositEnvelope => !("undecodable" in e)

export const encodeEnvelope = (e: DepositEnvelope) => JSON.stringify(e)

export const decodeEnvelope = (raw: string): Delivery["envelope"] => {
  try {
    const v = JSON.parse(raw) as Partial<DepositEnvelope>
    if (
      typeof v.inboxId === "number" && typeof v.tenantId === "string" && (v.mode === "test" || v.mode === "live") &&
      typeof v.provider === "string" && typeof v.reference === "string" && typeof v.accountNumber === "string"
    ) return v as DepositEnvelope
  } catch {
    // fall through: undecodable
  }
  return { undecodable: raw.slice(0, 4000) }
}
