import { Chunk, Effect, Stream } from "effect"
import pg from "pg"
import { decodeEnvelope, isDecoded } from "../../streams/DepositBus.js"
import { replayFrom } from "../../streams/Consume.js"
import { NatsLive } from "../../streams/Nats.js"
import { streamNames } from "../../streams/Topology.js"

/**
 * The multi-process deposit bench's order check (`--processes N`): per account, the order the reconcilers applied
 * the deposits in (transactions.id, a serial taken under the account's row lock: commit order for one account) against
 * the order of their messages on the deposit stream (each reference's first message). A deposit applied after one that
 * came later on the stream counts as overtaken (as test/deposits/WorkerOrder.test.ts counts it).
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

export interface OrderFigures {
  readonly accounts: number
  readonly accountsOutOfOrder: number
  readonly overtaken: number
}

export const streamOrderCheck = async (natsUrl: string, natsPrefix: string, databaseUrl: string, tenantId: string): Promise<OrderFigures> => {
  const messages = await Effect.runPromise(
    Stream.runCollect(replayFrom(streamNames({ prefix: natsPrefix }).deposits, { seq: 1 })).pipe(Effect.map(Chunk.toArray), Effect.provide(NatsLive(natsUrl, "collections-bench")))
  )
  const streamOrder = new Map<string, Array<string>>()
  const seen = new Set<string>()
  for (const m of messages) {
    const e = decodeEnvelope(m.string())
    if (!isDecoded(e) || e.tenantId !== tenantId || seen.has(e.reference)) continue
    seen.add(e.reference)
    streamOrder.set(e.accountNumber, [...(streamOrder.get(e.accountNumber) ?? []), e.reference])
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const rows = (await client.query<{ reference: string; nuban: string }>(`SELECT reference, nuban FROM transactions WHERE tenant_id = $1 ORDER BY id`, [tenantId])).rows
    const applied = new Map<string, Array<string>>()
    for (const r of rows) applied.set(r.nuban, [...(applied.get(r.nuban) ?? []), r.reference])
    let overtaken = 0
    let accountsOutOfOrder = 0
    for (const [nuban, order] of streamOrder) {
      const n = overtakers(order, applied.get(nuban) ?? [])
      overtaken += n
      if (n > 0) accountsOutOfOrder++
    }
    return { accounts: streamOrder.size, accountsOutOfOrder, overtaken }
  } finally {
    await client.end()
  }
}
