import { Chunk, Effect, Stream } from "effect"
import { replayFrom } from "../../streams/Consume.js"
import { decodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { NatsLive } from "../../streams/Nats.js"
import { streamNames } from "../../streams/Topology.js"

/**
 * Whether each account's deposits were applied in stream order (test/deposits/WorkerOrder.test.ts and the deposit
 * bench's `--processes N`): the order the reconcilers applied them in (transactions.id, a serial taken under the
 * account's row lock: commit order for one account) against the order of their messages on the deposit stream (each
 * reference's first message).
 */

/** How many of `applied` were applied after a reference that came later on the stream. */
export const overtakers = (streamOrder: ReadonlyArray<string>, applied: ReadonlyArray<string>) => {
  const position = new Map(streamOrder.map((ref, i) => [ref, i]))
  let count = 0
  let lowestAfter = Number.POSITIVE_INFINITY
  for (let i = applied.length - 1; i >= 0; i--) {
    const p = position.get(applied[i]!)
    if (p === undefined) continue
    if (p > lowestAfter) count++
    lowestAfter = Math.min(lowestAfter, p)
  }
  return count
}

/** The tenant's references per NUBAN in the order of their first message on the deposit stream. */
export const streamOrderOf = async (natsUrl: string, natsPrefix: string, tenantId: string): Promise<Map<string, Array<string>>> => {
  const messages = await Effect.runPromise(
    Stream.runCollect(replayFrom(streamNames({ prefix: natsPrefix }).deposits, { seq: 1 })).pipe(Effect.map(Chunk.toArray), Effect.provide(NatsLive(natsUrl)))
  )
  const order = new Map<string, Array<string>>()
  const seen = new Set<string>()
  for (const m of messages) {
    const e = decodeEnvelope(m.string())
    if (!isDecoded(e) || e.tenantId !== tenantId || seen.has(e.reference)) continue
    seen.add(e.reference)
    order.set(e.accountNumber, [...(order.get(e.accountNumber) ?? []), e.reference])
  }
  return order
}

export interface OrderFigures {
  readonly accounts: number
  readonly accountsOutOfOrder: number
  readonly overtaken: number
}

/** `applied`: the tenant's transactions in id order. */
export const outOfOrder = (
  streamOrder: ReadonlyMap<string, ReadonlyArray<string>>,
  applied: ReadonlyArray<{ readonly reference: string; readonly nuban: string }>
): OrderFigures => {
  const byAccount = new Map<string, Array<string>>()
  for (const r of applied) byAccount.set(r.nuban, [...(byAccount.get(r.nuban) ?? []), r.reference])
  let overtaken = 0
  let accountsOutOfOrder = 0
  for (const [nuban, order] of streamOrder) {
    const n = overtakers(order, byAccount.get(nuban) ?? [])
    overtaken += n
    if (n > 0) accountsOutOfOrder++
  }
  return { accounts: streamOrder.size, accountsOutOfOrder, overtaken }
}
