import { SqlClient } from "@effect/sql"
import { jetstreamManager, type ConsumerInfo } from "@nats-io/jetstream"
import { Duration, Effect, Option } from "effect"
import net from "node:net"
import { AppConfigTag } from "../../src/Config.js"
import { Nats, NatsLive } from "../../streams/Nats.js"
import { parsePartitionConsumer, RECONCILER_DURABLE, streamNames, type Topology } from "../../streams/Topology.js"
import { waitFor } from "./Wait.js"

/** The shared development nats-server, reached directly (never through a test's proxy). */
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? "127.0.0.1:4222"

/** A test's own connection, for looking at / feeding the app's streams. */
export const TestNatsLive = NatsLive(TEST_NATS_URL, "resilience-test")

/** The app's JetStream topology (its random per-run prefix). */
export const appTopology = Effect.map(AppConfigTag, (c): Topology => ({ prefix: c.natsPrefix }))

/** What the reconciler's consumers say, together (see reconcilerInfo). */
export interface ReconcilerInfo {
  readonly consumers: ReadonlyArray<string>
  readonly num_pending: number
  readonly num_ack_pending: number
  readonly num_redelivered: number
  readonly delivered: { readonly stream_seq: number; readonly consumer_seq: number }
  readonly ack_floor: { readonly stream_seq: number }
}

/**
 * The reconciler's consumers on the deposit stream (one per deposit partition and ownership, `reconciler-p<N>-<epoch>`,
 * and the shared `reconciler` durable of earlier versions should it be there), summed up: pending, awaiting ack,
 * redelivered and deliveries (consumer_seq) added, the highest delivered and ack-floor stream sequence.
 */
export const reconcilerInfo = (t: Topology) =>
  Effect.flatMap(Nats, (nc) =>
    Effect.promise(async (): Promise<ReconcilerInfo> => {
      const infos: Array<ConsumerInfo> = []
      for await (const ci of (await jetstreamManager(nc)).consumers.list(streamNames(t).deposits)) {
        if (ci.name === RECONCILER_DURABLE || Option.isSome(parsePartitionConsumer(ci.name))) infos.push(ci)
      }
      const sum = (f: (ci: ConsumerInfo) => number) => infos.reduce((n, ci) => n + f(ci), 0)
      const max = (f: (ci: ConsumerInfo) => number) => infos.reduce((n, ci) => Math.max(n, f(ci)), 0)
      return {
        consumers: infos.map((ci) => ci.name).sort(),
        num_pending: sum((ci) => ci.num_pending),
        num_ack_pending: sum((ci) => ci.num_ack_pending),
        num_redelivered: sum((ci) => ci.num_redelivered),
        delivered: { stream_seq: max((ci) => ci.delivered.stream_seq), consumer_seq: sum((ci) => ci.delivered.consumer_seq) },
        ack_floor: { stream_seq: max((ci) => ci.ack_floor.stream_seq) }
      }
    })
  )

/** Waits until the reconciler's consumers have nothing pending and nothing awaiting an ack. */
export const waitForConsumerIdle = (t: Topology, upTo: Duration.DurationInput = "30 seconds") =>
  waitFor("the reconciler's consumers to be idle (nothing pending, nothing awaiting an ack)", reconcilerInfo(t), {
    until: (i) => i.num_pending === 0 && i.num_ack_pending === 0,
    timeoutMs: Duration.toMillis(upTo),
    intervalMs: 100
  })

export interface Snapshot {
  readonly transactions: number
  readonly inbox: number
  readonly ledgerEntries: number
  readonly outbox: number
  readonly balances: ReadonlyArray<{ readonly id: string; readonly amountPaidKobo: number }>
}

/** Everything a replay or redelivery must leave alone. */
export const snapshot = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const count = (table: string) => sql<{ n: number }>`SELECT count(*)::bigint AS n FROM ${sql(table)}`.pipe(Effect.map((r) => Number(r[0]!.n)))
  return {
    transactions: yield* count("transactions"),
    inbox: yield* count("inbound_events"),
    ledgerEntries: yield* count("ledger_entries"),
    outbox: yield* count("outbox"),
    balances: yield* sql<{ id: string; amountPaidKobo: number }>`SELECT id, amount_paid_kobo FROM virtual_accounts ORDER BY id`
  } satisfies Snapshot
}).pipe(Effect.orDie)

export const accountBalance = (tenantId: string, accountRef: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ amountPaidKobo: number }>`
      SELECT amount_paid_kobo FROM virtual_accounts WHERE tenant_id = ${tenantId} AND account_ref = ${accountRef}`
    return rows[0]!.amountPaidKobo
  }).pipe(Effect.orDie)

/** Nigerian customer names: one per account, used as both the account name and the payer name (a STRONG match). */
export const NAMES = [
  "John Adeyemi", "Chinedu Okafor", "Ngozi Eze", "Aisha Bello", "Emeka Nwosu",
  "Funmilayo Adebayo", "Ibrahim Musa", "Yetunde Ogunleye", "Obinna Uche", "Zainab Abubakar"
] as const

export interface TcpProxy {
  readonly port: number
  /** Simulates an outage: every connection is dropped and the port refuses new ones. */
  readonly cut: Effect.Effect<void>
  /** Ends the outage: listens again on the same port. */
  readonly restore: Effect.Effect<void>
  /** Whether `cutWhen` has cut the proxy. */
  readonly tripped: Effect.Effect<boolean>
}

/**
 * A TCP pass-through to 127.0.0.1:targetPort, closed with the scope. `cutWhen`, given, is shown each chunk a client
 * sends; the first chunk it accepts cuts the proxy (before the chunk goes on), as an outage at that very moment would.
 */
export const tcpProxy = (targetPort: number, options: { readonly cutWhen?: (chunk: Buffer) => boolean } = {}) =>
  Effect.gen(function* () {
    let tripped = !options.cutWhen
    const sockets = new Set<net.Socket>()
    let server: net.Server | undefined
    const listen = (port: number) =>
      Effect.async<number, Error>((resume) => {
        const s = net.createServer((client) => {
          const upstream = net.connect(targetPort, "127.0.0.1")
          for (const sock of [client, upstream]) {
            sockets.add(sock)
            sock.on("error", () => sock.destroy())
            sock.on("close", () => sockets.delete(sock))
          }
          if (tripped) client.pipe(upstream)
          else {
            client.on("data", (chunk: Buffer) => {
              if (!tripped && options.cutWhen!(chunk)) {
                tripped = true
                cutNow()
              } else if (!upstream.destroyed) upstream.write(chunk)
            })
            client.on("end", () => upstream.end())
          }
          upstream.pipe(client)
        })
        s.once("error", (e) => resume(Effect.fail(e)))
        s.listen(port, "127.0.0.1", () => {
          server = s
          resume(Effect.succeed((s.address() as net.AddressInfo).port))
        })
      })
    const cutNow = () => {
      server?.close()
      server = undefined
      for (const s of sockets) s.destroy()
    }
    const cut = Effect.sync(cutNow)
    const port = yield* listen(0).pipe(Effect.orDie)
    yield* Effect.addFinalizer(() => cut)
    return {
      port,
      cut,
      tripped: Effect.sync(() => tripped && options.cutWhen !== undefined),
      restore: waitFor(`the proxy to listen again on ${port}`, listen(port), { timeoutMs: 5_000, intervalMs: 100 }).pipe(Effect.asVoid)
    } satisfies TcpProxy
  })
